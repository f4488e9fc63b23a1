// The Express app with mailroom at the root before express.json(): the whole flow over HTTP
// (presign, upload, send with the file, download, delete), the .eml the outbox wrote, the app's own
// routes still answering, and JSON files stored on disk byte for byte.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, assert, beforeAll, it } from "vitest"
import { makeApp } from "../server.js"

const dir = mkdtempSync(join(tmpdir(), "mailroom-express-"))
const server = createServer()
let url = ""
let dispose = async () => {}
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const { app, mailroom } = makeApp({ dir, publicUrl: url })
  await mailroom.ready
  server.on("request", app)
  dispose = mailroom.dispose
})
afterAll(async () => {
  server.closeAllConnections()
  await new Promise<void>((resolve) => server.close(() => resolve()))
  await dispose()
  rmSync(dir, { recursive: true, force: true })
})

const headers = { "x-api-key": "mr_test_app", "content-type": "application/json" }

it("serves the whole flow, and the app's own routes still answer", async () => {
  assert.deepStrictEqual(await (await fetch(`${url}/health`)).json(), { ok: true })

  const presign = await fetch(`${url}/attachments/presign`, {
    method: "POST",
    headers,
    body: JSON.stringify({ filename: "report.csv", content_type: "text/csv" })
  })
  assert.strictEqual(presign.status, 201)
  const { url: uploadUrl, key } = (await presign.json()) as { url: string; key: string }
  assert.isTrue(uploadUrl.startsWith(`${url}/`), "the upload URL points back at this app")
  const upload = await fetch(uploadUrl, { method: "PUT", headers: { "content-type": "text/csv" }, body: "a,b\n1,2\n" })
  assert.strictEqual(upload.status, 200)

  const send = await fetch(`${url}/emails`, {
    method: "POST",
    headers,
    body: JSON.stringify({
      from: "reports@app.example",
      to: ["alice@example.com"],
      subject: "Your report",
      body: { text: "Attached." },
      attachments: [{ filename: "report.csv", key }]
    })
  })
  assert.strictEqual(send.status, 201)
  const { message_id } = (await send.json()) as { message_id: string }
  const eml = readFileSync(join(dir, "outbox", `${message_id}.eml`), "utf8")
  assert.match(eml, /^Subject: Your report\r?$/m)
  assert.match(eml, /filename="?report\.csv"?/)
  assert.include(eml, Buffer.from("a,b\n1,2\n").toString("base64"))

  const query = `key=${encodeURIComponent(key)}`
  const download = await fetch(`${url}/attachments/download?${query}`, { headers })
  const { download_url } = (await download.json()) as { download_url: string }
  assert.strictEqual(await (await fetch(download_url)).text(), "a,b\n1,2\n")

  const deleted = await fetch(`${url}/attachments/delete?${query}`, { method: "DELETE", headers })
  assert.deepStrictEqual(await deleted.json(), { deleted: true, key })
  assert.strictEqual((await fetch(download_url)).status, 404)

  const unknown = await fetch(`${url}/nope`)
  assert.strictEqual(unknown.status, 404)
  assert.match(await unknown.text(), /Cannot GET \/nope/, "Express's own 404: mailroom handed it on")
  assert.deepStrictEqual(
    readdirSync(join(dir, "outbox")).filter((f) => f.endsWith(".eml")),
    [`${message_id}.eml`]
  )
})

it("stores a JSON file byte for byte, also one over express.json()'s 100 kB limit", async () => {
  // What a parser would change: a number past float range, a duplicate key, spacing and CRLF.
  for (const padding of [0, 200 * 1024]) {
    const file = `{ "amount": 1e400,\r\n  "id": 1, "id": 2, "pad": "${"x".repeat(padding)}" }\n`
    const presign = await fetch(`${url}/attachments/presign`, {
      method: "POST",
      headers,
      body: JSON.stringify({ filename: "data.json", content_type: "application/json" })
    })
    const { url: uploadUrl, key } = (await presign.json()) as { url: string; key: string }
    const upload = await fetch(uploadUrl, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: file
    })
    assert.strictEqual(upload.status, 200, await upload.text())
    const download = await fetch(`${url}/attachments/download?key=${encodeURIComponent(key)}`, { headers })
    const { download_url } = (await download.json()) as { download_url: string }
    const stored = await fetch(download_url)
    assert.strictEqual(stored.headers.get("content-type"), "application/json")
    assert.strictEqual(await stored.text(), file)
  }
})
