// The Express app with mailroom under /mail (and at the root) before express.json(): the whole flow
// over HTTP through the signed URLs (presign, upload, send with the file, read the record, download),
// the .eml the outbox wrote, the app's own routes still answering, and JSON files stored byte for byte.
import { readdirSync, readFileSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { mountedFlow, mountedFlowFile, type TempDir, tempDir } from "@mailroom/test-support"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { makeApp } from "../server.js"

const headers = { "x-api-key": "mr_test_app", "content-type": "application/json" }

for (const mountPath of ["/mail", "/"]) {
  describe(`mounted with app.use("${mountPath}", mailroom.node)`, () => {
    let dir: TempDir
    const server = createServer()
    let url = ""
    let base = ""
    let dispose = async () => {}
    beforeAll(async () => {
      dir = await tempDir("express")
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      base = mountPath === "/" ? url : `${url}${mountPath}`
      // publicUrl is the origin alone: the mount comes from Express.
      const { app, mailroom } = makeApp({ dir: dir.path, publicUrl: url, mountPath })
      await mailroom.ready
      server.on("request", app)
      dispose = mailroom.dispose
    })
    afterAll(async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await dispose()
      await dir.remove()
    })

    it("serves the whole flow through the signed URLs, and the app's own routes still answer", async () => {
      assert.deepStrictEqual(await (await fetch(`${url}/health`)).json(), { ok: true })
      const flow = await mountedFlow({ base, apiKey: "mr_test_app", from: "reports@app.example" })
      assert.isTrue(flow.uploadUrl.startsWith(`${base}/_mailroom/storage/`), flow.uploadUrl)
      const eml = readFileSync(join(dir.path, "outbox", `${flow.messageId}.eml`), "utf8")
      assert.match(eml, /^Subject: Your report\r?$/m)
      assert.match(eml, /filename="?report\.csv"?/)
      assert.include(eml, Buffer.from(mountedFlowFile).toString("base64"))

      const query = `key=${encodeURIComponent(flow.key)}`
      const deleted = await fetch(`${base}/attachments/delete?${query}`, { method: "DELETE", headers })
      assert.deepStrictEqual(await deleted.json(), { deleted: true, key: flow.key })

      const unknown = await fetch(`${base}/nope`)
      assert.strictEqual(unknown.status, 404)
      assert.match(await unknown.text(), /Cannot GET \/(mail\/)?nope/, "Express's own 404: mailroom handed it on")
      assert.deepStrictEqual(
        readdirSync(join(dir.path, "outbox")).filter((f) => f.endsWith(".eml")),
        [`${flow.messageId}.eml`]
      )
    })

    it("stores a JSON file byte for byte, also one over express.json()'s 100 kB limit", async () => {
      // What a parser would change: a number past float range, a duplicate key, spacing and CRLF.
      for (const padding of [0, 200 * 1024]) {
        const file = `{ "amount": 1e400,\r\n  "id": 1, "id": 2, "pad": "${"x".repeat(padding)}" }\n`
        const presign = await fetch(`${base}/attachments/presign`, {
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
        const download = await fetch(`${base}/attachments/download?key=${encodeURIComponent(key)}`, { headers })
        const { download_url } = (await download.json()) as { download_url: string }
        const stored = await fetch(download_url)
        assert.strictEqual(stored.headers.get("content-type"), "application/json")
        assert.strictEqual(await stored.text(), file)
      }
    })
  })
}
