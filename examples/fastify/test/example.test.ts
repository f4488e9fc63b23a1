import { afterAll, assert, beforeAll, it } from "vitest"
import { app, ready } from "../server.js"

let url = ""
beforeAll(async () => {
  await ready
  url = await app.listen({ port: 0, host: "127.0.0.1" })
})
afterAll(() => app.close())

const headers = { "x-api-key": "mr_test_app", "content-type": "application/json" }
const message = { from: "hi@app.example", to: ["alice@example.com"], subject: "Hi", body: { text: "Hi" } }

it("serves mailroom under /mail with its own error shapes, beside the app's JSON routes", async () => {
  assert.deepStrictEqual(await (await fetch(`${url}/health`)).json(), { ok: true })
  const echo = await fetch(`${url}/echo`, { method: "POST", headers, body: JSON.stringify({ a: 1 }) })
  assert.deepStrictEqual(await echo.json(), { received: { a: 1 } }, "the app's routes keep Fastify's parser")

  const sent = await fetch(`${url}/mail/emails`, { method: "POST", headers, body: JSON.stringify(message) })
  assert.strictEqual(sent.status, 201)
  assert.strictEqual(((await sent.json()) as { subject: string }).subject, "Hi")

  const invalid = await fetch(`${url}/mail/emails`, { method: "POST", headers, body: "{nope" })
  assert.deepStrictEqual(
    [invalid.status, await invalid.json()],
    [400, { errors: ["request: the body is not valid JSON"] }]
  )
  const form = await fetch(`${url}/mail/emails`, {
    method: "POST",
    headers: { ...headers, "content-type": "text/plain" },
    body: "x"
  })
  assert.deepStrictEqual([form.status, await form.json()], [415, { error: "Content-Type must be application/json" }])
  const presign = await fetch(`${url}/mail/attachments/presign`, {
    method: "POST",
    headers,
    body: JSON.stringify({ filename: "a.pdf", content_type: "application/pdf" })
  })
  assert.strictEqual(presign.status, 201)
  assert.match(((await presign.json()) as { key: string }).key, /^attachments\/app\//)
  const unknown = await fetch(`${url}/mail/nope`)
  assert.deepStrictEqual([unknown.status, await unknown.json()], [404, { message: "no route for GET /mail/nope" }])
})
