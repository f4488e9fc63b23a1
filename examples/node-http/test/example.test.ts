import type { AddressInfo } from "node:net"
import { afterAll, assert, beforeAll, it } from "vitest"
import { server } from "../server.js"

let url = ""
beforeAll(
  () =>
    new Promise<void>((resolve) =>
      server.listen(0, "127.0.0.1", () => {
        url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
        resolve()
      })
    )
)
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

it("presigns and sends through node:http", async () => {
  const presign = await fetch(`${url}/attachments/presign`, {
    method: "POST",
    headers: { "x-api-key": "mr_test_acme", "content-type": "application/json" },
    body: JSON.stringify({ filename: "a.pdf", content_type: "application/pdf" })
  })
  assert.strictEqual(presign.status, 201)
  const send = await fetch(`${url}/emails`, {
    method: "POST",
    headers: { "x-api-key": "mr_test_acme", "content-type": "application/json" },
    body: JSON.stringify({ from: "a@acme.example", to: ["b@example.com"], subject: "Hi", body: { text: "x" } })
  })
  assert.strictEqual(send.status, 201)
  assert.strictEqual(((await send.json()) as { subject: string }).subject, "Hi")
})
