// The route module's exported functions served as Next.js's App Router serves them: each request
// under /api/mail goes, as a Web Request, to the export named after its method, over real HTTP.
import { readFileSync } from "node:fs"
import type { Server } from "node:http"
import { join } from "node:path"
import { createAdaptorServer } from "@hono/node-server"
import { freePort, mountedFlow, mountedFlowFile, type TempDir, tempDir } from "@mailroom/test-support"
import { afterAll, assert, beforeAll, it } from "vitest"

type Route = Record<string, ((request: Request) => Promise<Response>) | unknown>

let dir: TempDir
let server: Server
let url = ""
beforeAll(async () => {
  dir = await tempDir("nextjs")
  const port = await freePort()
  url = `http://127.0.0.1:${port}`
  // lib/mailroom.ts reads these when the route module is first imported, as on a Next.js server.
  process.env.MAILROOM_DIR = dir.path
  process.env.PUBLIC_URL = url
  const route: Route = await import("../app/api/mail/[...path]/route.js")
  server = createAdaptorServer({
    fetch: (request: Request) => {
      const handler = route[request.method]
      if (!new URL(request.url).pathname.startsWith("/api/mail/")) return new Response("Not Found", { status: 404 })
      if (typeof handler !== "function") return new Response(null, { status: 405 })
      return (handler as (request: Request) => Promise<Response>)(request)
    }
  }) as Server
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve))
})
afterAll(async () => {
  server.closeAllConnections()
  await new Promise<void>((resolve) => server.close(() => resolve()))
  const { mailroom } = await import("../lib/mailroom.js")
  await mailroom.dispose()
  await dir.remove()
})

it("serves the whole flow under /api/mail through the signed URLs, in the spec's shapes", async () => {
  const base = `${url}/api/mail`
  const flow = await mountedFlow({ base, apiKey: "mr_test_app", from: "reports@app.example" })
  assert.isTrue(flow.uploadUrl.startsWith(`${base}/_mailroom/storage/`), flow.uploadUrl)
  const eml = readFileSync(join(dir.path, "outbox", `${flow.messageId}.eml`), "utf8")
  assert.include(eml, Buffer.from(mountedFlowFile).toString("base64"))

  const headers = { "x-api-key": "mr_test_app", "content-type": "application/json" }
  const invalid = await fetch(`${base}/emails`, { method: "POST", headers, body: JSON.stringify({ to: [] }) })
  assert.strictEqual(invalid.status, 400)
  assert.include(((await invalid.json()) as { errors: Array<string> }).errors, "to: must contain at least 1 recipient")
  const query = `key=${encodeURIComponent(flow.key)}`
  const deleted = await fetch(`${base}/attachments/delete?${query}`, { method: "DELETE", headers })
  assert.deepStrictEqual(await deleted.json(), { deleted: true, key: flow.key })
  const gone = await fetch(`${base}/attachments/download?${query}`, { headers })
  assert.strictEqual(gone.status, 404)
  assert.deepStrictEqual(Object.keys(await gone.json()), ["message"])
  const unknown = await fetch(`${base}/nope`)
  assert.deepStrictEqual([unknown.status, await unknown.json()], [404, { message: "no route for GET /api/mail/nope" }])
})
