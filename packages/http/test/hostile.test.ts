// Requests no client should send: methods the store routes do not serve. Each gets a small JSON
// answer at a small cost.
import { request } from "node:http"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { keys, makeWorld, type Running, transports, type World } from "./world.js"

/** A request through node:http, which, unlike fetch, sends any method (TRACE included). */
const raw = (url: string, method: string, path: string) =>
  new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: unknown }>(
    (resolve, reject) => {
      const req = request(`${url}${path}`, { method }, (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (chunk: Buffer) => chunks.push(chunk))
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: JSON.parse(Buffer.concat(chunks).toString("utf8"))
          })
        )
      })
      req.on("error", reject)
      req.end()
    }
  )

for (const [transport, start] of Object.entries(transports)) {
  describe(transport, () => {
    let world: World
    let server: Running
    beforeAll(async () => {
      world = makeWorld()
      server = await start(world)
    })
    afterAll(() => server.close())

    // A Web Request cannot carry TRACE or CONNECT, so only the Node handler ever sees them.
    const methods = transport === "Node handler" ? ["TRACE", "PATCH", "DELETE", "PROPFIND"] : ["PATCH", "DELETE"]
    it(`store routes answer ${methods.join(", ")} with 405 {message} and Allow`, async () => {
      for (const method of methods) {
        const answer = await raw(server.url, method, "/_store/attachments/org_acme/1-a.pdf?expires=1&signature=x")
        assert.strictEqual(answer.status, 405, method)
        assert.strictEqual(answer.headers.allow, "GET, PUT")
        assert.match(String(answer.headers["content-type"]), /^application\/json/)
        assert.deepStrictEqual(answer.body, { message: `use GET, PUT with a signed URL, not ${method}` })
      }
      assert.deepStrictEqual(world.control.logged, [])
    })
  })
}
