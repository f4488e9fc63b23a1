// The route module's exported functions called as Next.js calls them, with Web Requests.
import { assert, it } from "vitest"
import { DELETE, GET, POST } from "../app/api/mail/[...path]/route.js"

const origin = "http://localhost:3000"
const headers = { "x-api-key": "mr_test_app", "content-type": "application/json" }

it("serves presign, send, download and delete under /api/mail, in the spec's shapes", async () => {
  const presign = await POST(
    new Request(`${origin}/api/mail/attachments/presign`, {
      method: "POST",
      headers,
      body: JSON.stringify({ filename: "a.txt", content_type: "text/plain" })
    })
  )
  assert.strictEqual(presign.status, 201)
  const { key } = (await presign.json()) as { key: string }

  const invalid = await POST(
    new Request(`${origin}/api/mail/emails`, { method: "POST", headers, body: JSON.stringify({ to: [] }) })
  )
  assert.strictEqual(invalid.status, 400)
  assert.include(((await invalid.json()) as { errors: Array<string> }).errors, "to: must contain at least 1 recipient")

  const sent = await POST(
    new Request(`${origin}/api/mail/emails`, {
      method: "POST",
      headers,
      body: JSON.stringify({ from: "hi@app.example", to: ["alice@example.com"], subject: "Hi", body: { text: "Hi" } })
    })
  )
  assert.strictEqual(sent.status, 201)

  const query = `key=${encodeURIComponent(key)}`
  const download = await GET(new Request(`${origin}/api/mail/attachments/download?${query}`, { headers }))
  // Nothing was uploaded under the key (the memory store takes uploads only in process).
  assert.strictEqual(download.status, 404)
  assert.deepStrictEqual(Object.keys(await download.json()), ["message"])
  const deleted = await DELETE(
    new Request(`${origin}/api/mail/attachments/delete?${query}`, { method: "DELETE", headers })
  )
  assert.strictEqual(deleted.status, 404)
  assert.deepStrictEqual(Object.keys(await deleted.json()), ["message"])
  const unknown = await GET(new Request(`${origin}/api/mail/nope`))
  assert.deepStrictEqual([unknown.status, await unknown.json()], [404, { message: "no route for GET /api/mail/nope" }])
})
