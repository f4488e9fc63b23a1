// The Express app behind a reverse proxy that changes the path: one that strips a prefix (clients
// call /api/mail, the app serves /mail) and one that adds one (clients call /mail, the app serves
// /internal/mail). publicUrl with the path clients use is the one setting; the flow runs through the proxy.
import { readFileSync } from "node:fs"
import { createServer, request, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { mountedFlow, mountedFlowFile, type TempDir, tempDir } from "@mailroom/test-support"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { makeApp } from "../server.js"

const listen = async (server: Server) => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

/** A reverse proxy to `target` that forwards `from/...` as `to/...`, and nothing else. */
const reverseProxy = (target: string, from: string, to: string) =>
  createServer((req, res) => {
    const url = req.url ?? "/"
    if (!url.startsWith(`${from}/`)) {
      res.writeHead(502).end()
      return
    }
    const forwarded = request(`${target}${to}${url.slice(from.length)}`, { method: req.method, headers: req.headers })
    forwarded.on("response", (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers)
      answer.pipe(res)
    })
    forwarded.on("error", () => res.destroy())
    req.pipe(forwarded)
  })

const proxies = {
  "strips a prefix": { public: "/api/mail", app: "/mail" },
  "adds a prefix": { public: "/mail", app: "/internal/mail" }
}

for (const [name, paths] of Object.entries(proxies)) {
  describe(`behind a reverse proxy that ${name}: clients call ${paths.public}, the app serves ${paths.app}`, () => {
    let dir: TempDir
    const app = createServer()
    let proxy: Server
    let base = ""
    let dispose = async () => {}
    beforeAll(async () => {
      dir = await tempDir("express-proxy")
      proxy = reverseProxy(await listen(app), paths.public, paths.app)
      base = `${await listen(proxy)}${paths.public}`
      const made = makeApp({ dir: dir.path, publicUrl: base, mountPath: paths.app })
      await made.mailroom.ready
      app.on("request", made.app)
      dispose = made.mailroom.dispose
    })
    afterAll(async () => {
      for (const server of [proxy, app]) {
        server.closeAllConnections()
        await new Promise<void>((resolve) => server.close(() => resolve()))
      }
      await dispose()
      await dir.remove()
    })

    it("serves the whole flow through the proxy: signed URLs and /openapi.json name the public path", async () => {
      const flow = await mountedFlow({ base, apiKey: "mr_test_app", from: "reports@app.example" })
      assert.isTrue(flow.uploadUrl.startsWith(`${base}/_mailroom/storage/`), flow.uploadUrl)
      const eml = readFileSync(join(dir.path, "outbox", `${flow.messageId}.eml`), "utf8")
      assert.include(eml, Buffer.from(mountedFlowFile).toString("base64"))
    })
  })
}
