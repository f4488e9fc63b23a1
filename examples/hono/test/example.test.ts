import type { AddressInfo } from "node:net"
import { type ServerType, serve } from "@hono/node-server"
import { afterAll, assert, beforeAll, it } from "vitest"
import { app } from "../server.js"

let server: ServerType
let url = ""
beforeAll(
  () =>
    new Promise<void>((resolve) => {
      server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, (info: AddressInfo) => {
        url = `http://127.0.0.1:${info.port}`
        resolve()
      })
    })
)
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

it("serves mailroom's fetch handler under /mail in a Hono app", async () => {
  assert.deepStrictEqual(await (await fetch(`${url}/health`)).json(), { ok: true })
  const presign = await fetch(`${url}/mail/v1/attachments/presign`, {
    method: "POST",
    headers: { authorization: "Bearer nope", "content-type": "application/json" },
    body: JSON.stringify({ filename: "a.pdf" })
  })
  assert.strictEqual(presign.status, 401)
  const send = await fetch(`${url}/mail/emails`, {
    method: "POST",
    headers: { "x-api-key": "mr_test_acme", "content-type": "application/json" },
    body: JSON.stringify({ from: "a@acme.example", to: ["b@example.com"], subject: "Hi", body: {} })
  })
  assert.strictEqual(send.status, 400)
  assert.deepStrictEqual(await send.json(), { errors: ["body: must contain html or text"] })
})
