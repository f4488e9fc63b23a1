// The Hono app with mailroom's fetch handler under /mail (and at the root), served by
// @hono/node-server: the whole flow through the signed URLs, and mailroom's own error shapes.
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { type ServerType, serve } from "@hono/node-server"
import { freePort, mountedFlow, mountedFlowFile, type TempDir, tempDir } from "@mailroom/test-support"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { makeApp } from "../server.js"

for (const basePath of ["/mail", ""]) {
  describe(`served with basePath "${basePath}"`, () => {
    let dir: TempDir
    let server: ServerType
    let dispose = async () => {}
    let url = ""
    beforeAll(async () => {
      dir = await tempDir("hono")
      const port = await freePort()
      url = `http://127.0.0.1:${port}`
      const { app, mailroom } = makeApp({ dir: dir.path, publicUrl: url, basePath })
      await mailroom.ready
      dispose = mailroom.dispose
      await new Promise<void>((resolve) => {
        server = serve({ fetch: app.fetch, port, hostname: "127.0.0.1" }, () => resolve())
      })
    })
    afterAll(async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await dispose()
      await dir.remove()
    })

    it("serves the whole flow through the signed URLs, beside the app's own routes", async () => {
      assert.deepStrictEqual(await (await fetch(`${url}/health`)).json(), { ok: true })
      const base = `${url}${basePath}`
      const flow = await mountedFlow({ base, apiKey: "mr_test_app", from: "reports@app.example" })
      assert.isTrue(flow.uploadUrl.startsWith(`${base}/_mailroom/storage/`), flow.uploadUrl)
      const eml = readFileSync(join(dir.path, "outbox", `${flow.messageId}.eml`), "utf8")
      assert.include(eml, Buffer.from(mountedFlowFile).toString("base64"))

      const presign = await fetch(`${base}/v1/attachments/presign`, {
        method: "POST",
        headers: { authorization: "Bearer nope", "content-type": "application/json" },
        body: JSON.stringify({ filename: "a.pdf" })
      })
      assert.strictEqual(presign.status, 401, "the v1 variant is under basePath too")
      const send = await fetch(`${base}/emails`, {
        method: "POST",
        headers: { "x-api-key": "mr_test_app", "content-type": "application/json" },
        body: JSON.stringify({ from: "a@app.example", to: ["b@example.com"], subject: "Hi", body: {} })
      })
      assert.deepStrictEqual([send.status, await send.json()], [400, { errors: ["body: must contain html or text"] }])
    })
  })
}
