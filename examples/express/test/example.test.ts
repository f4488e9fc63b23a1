import type { Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, assert, beforeAll, it } from "vitest"
import { app } from "../server.js"

let server: Server
let url = ""
beforeAll(
  () =>
    new Promise<void>((resolve) => {
      server = app.listen(0, "127.0.0.1", () => {
        url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
        resolve()
      })
    })
)
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

it("serves mailroom under /mail beside the app's own routes", async () => {
  assert.deepStrictEqual(await (await fetch(`${url}/health`)).json(), { ok: true })
  const send = await fetch(`${url}/mail/emails`, {
    method: "POST",
    headers: { "x-api-key": "mr_test_acme", "content-type": "application/json" },
    body: JSON.stringify({ from: "a@acme.example", to: ["b@example.com"], subject: "Hi", body: { text: "x" } })
  })
  assert.strictEqual(send.status, 201)
  const unauthorized = await fetch(`${url}/mail/attachments/download?key=x`)
  assert.strictEqual(unauthorized.status, 401)
  assert.deepStrictEqual(await unauthorized.json(), { message: "missing, invalid or revoked credential" })
  const unknown = await fetch(`${url}/mail/nope`)
  assert.strictEqual(unknown.status, 404)
  assert.match(unknown.headers.get("content-type") ?? "", /application\/json/)
})
