// Bodies the handlers must not wait for: one behind a credential that does not authenticate. The
// client writes each byte itself, so a server that waited for the body would never answer.
import { request as httpRequest } from "node:http"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { MailroomHandler } from "../src/index.js"
import { keys, makeWorld, type Running, transports } from "./world.js"

const unauthorized = JSON.stringify({ message: "missing, invalid or revoked credential" })

interface Reply {
  readonly status: number
  readonly body: string
}

/** The promise's value, or a failure naming what did not happen in time. */
const within = <A>(ms: number, promise: Promise<A>, what: string) =>
  Promise.race([
    promise,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no ${what} within ${ms} ms`)), ms).unref())
  ])

/** A request whose body the test writes; `reply` settles with the answer, whether or not the body ended. */
const begin = (url: string, method: string, path: string, headers: Record<string, string>) => {
  const request = httpRequest(`${url}${path}`, { method, headers, agent: false })
  const reply = new Promise<Reply>((resolve, reject) => {
    request.once("response", (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.once("end", () =>
        resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") })
      )
    })
    // A server that stops reading and closes may reset a connection the client is still writing to.
    request.on("error", reject)
  })
  return { request, reply }
}

for (const [transport, start] of Object.entries(transports)) {
  describe(transport, () => {
    let server: Running
    beforeAll(async () => {
      server = await start(makeWorld())
    })
    afterAll(() => server.close())

    const routes = [
      ["POST", "/emails", { "x-api-key": "mr_unknown_key" }],
      ["POST", "/attachments/presign", { "x-api-key": keys.acmeToken }],
      ["POST", "/v1/attachments/presign", { authorization: "Bearer tok_unknown" }],
      ["DELETE", "/v1/attachments", { authorization: `Bearer ${keys.acme}` }]
    ] as const

    it("a credential that does not authenticate is 401 at once, while its body has not ended", async () => {
      for (const [method, path, credential] of routes) {
        for (const framing of [{ "content-length": "100000" }, { "transfer-encoding": "chunked" }]) {
          const { request, reply } = begin(server.url, method, path, {
            ...credential,
            "content-type": "application/json",
            ...framing
          })
          request.write('{"from":"billing@acme.example","to":')
          const answer = await within(2000, reply, `answer to ${method} ${path} before its body ended`)
          request.destroy()
          assert.deepStrictEqual(answer, { status: 401, body: unauthorized }, `${method} ${path}`)
        }
      }
    })
  })
}

describe("Web handler, given a Request whose body never ends", () => {
  let handler: MailroomHandler.Started
  beforeAll(() => {
    handler = MailroomHandler.fromLayer(makeWorld().layer)
  })
  afterAll(() => handler.dispose())

  /** A body that sends its first bytes and then nothing more, never closing. */
  const stalled = () =>
    new ReadableStream<Uint8Array>({
      start: (controller) => controller.enqueue(new TextEncoder().encode('{"from":')),
      pull: () => new Promise<void>(() => {})
    })

  it("answers a credential that does not authenticate 401 without reading the body", async () => {
    for (const headers of [{ "x-api-key": "mr_unknown_key" }, { authorization: "Bearer tok_unknown" }]) {
      const path = "x-api-key" in headers ? "/emails" : "/v1/attachments/presign"
      const request = new Request(`http://127.0.0.1${path}`, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        body: stalled(),
        duplex: "half"
      } as RequestInit)
      const response = await within(2000, handler.web(request), `answer to ${path}`)
      assert.strictEqual(response.status, 401)
      assert.strictEqual(await response.text(), unauthorized)
      assert.isFalse(request.bodyUsed)
    }
  })
})
