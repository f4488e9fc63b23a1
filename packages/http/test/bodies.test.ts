// Bodies the handlers must not wait for or read to the end: one behind a credential that does not
// authenticate, and a chunked one (no Content-Length to refuse up front) over the limit. The client
// writes each byte itself, so a server that waited for the body would never answer.
import { type ClientRequest, request as httpRequest } from "node:http"
import { connect, type Socket } from "node:net"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { MailroomHandler } from "../src/index.js"
import { keys, makeWorld, type Running, transports } from "./world.js"

const limit = 1024 * 1024
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

/** Writes 64 KiB chunks, waiting while the server is not reading, until it answers or `max` bytes are sent. */
const feed = async (request: ClientRequest, reply: Promise<Reply>, max: number) => {
  let answered = false
  const settled = reply.then(
    () => {
      answered = true
    },
    () => {
      answered = true
    }
  )
  const chunk = Buffer.alloc(64 * 1024, " ")
  for (let sent = 0; !answered && sent < max; sent += chunk.byteLength) {
    if (!request.write(chunk)) await Promise.race([new Promise((r) => request.once("drain", r)), settled])
  }
  // A server that read it all gets its end, and answers whatever it answers.
  if (!answered) request.end()
}

for (const [transport, start] of Object.entries(transports)) {
  describe(transport, () => {
    let server: Running
    const connections: Array<Socket> = []
    beforeAll(async () => {
      server = await start(makeWorld())
      server.server.on("connection", (socket: Socket) => connections.push(socket))
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

    it("a Content-Length over the limit is a 413 before any byte of the body is sent", async () => {
      for (const [path, headers, body] of [
        ["/emails", `x-api-key: ${keys.acme}`, { error: `the body is larger than ${limit} bytes` }],
        [
          "/v1/attachments/presign",
          `authorization: Bearer ${keys.acmeToken}`,
          { message: `the body is larger than ${limit} bytes` }
        ]
      ] as const) {
        const { hostname, port } = new URL(server.url)
        const socket = connect(Number(port), hostname)
        const received: Array<Buffer> = []
        socket.on("data", (chunk: Buffer) => received.push(chunk))
        const answered = new Promise<string>((resolve, reject) => {
          socket.on("data", () => {
            const text = Buffer.concat(received).toString("utf8")
            const end = text.indexOf("\r\n\r\n")
            const length = Number(/\r\ncontent-length: *(\d+)/i.exec(text)?.[1] ?? Number.NaN)
            if (end >= 0 && Buffer.byteLength(text.slice(end + 4)) >= length) resolve(text)
          })
          socket.on("error", reject)
        })
        // The headers only: the body is never written, so a server waiting for it would never answer.
        socket.write(
          `POST ${path} HTTP/1.1\r\nhost: ${hostname}\r\n${headers}\r\ncontent-type: application/json\r\ncontent-length: ${2 * limit}\r\n\r\n`
        )
        const answer = await within(
          5000,
          answered,
          `answer to ${path} with only its headers sent (a Content-Length over the limit must be a 413 before any byte of the body is read)`
        ).finally(() => socket.destroy())
        assert.match(answer, /^HTTP\/1\.1 413 /, path)
        assert.strictEqual(answer.slice(answer.indexOf("\r\n\r\n") + 4), JSON.stringify(body), path)
      }
    })

    it("a chunked body over the limit is 413 with the spec's body, and the rest is not read", async () => {
      for (const [path, headers, body] of [
        ["/emails", { "x-api-key": keys.acme }, { error: `the body is larger than ${limit} bytes` }],
        [
          "/v1/attachments/presign",
          { authorization: `Bearer ${keys.acmeToken}` },
          { message: `the body is larger than ${limit} bytes` }
        ]
      ] as const) {
        const { request, reply } = begin(server.url, "POST", path, { ...headers, "content-type": "application/json" })
        assert.isUndefined(request.getHeader("content-length"))
        await feed(request, reply, 16 * limit)
        const answer = await within(5000, reply, `answer to ${path} over the limit`)
        // What the server had taken off the connection when it answered: the limit, and what the
        // socket and the request stream buffer ahead of a reader, not the 16 MiB on offer.
        const read = connections.at(-1)?.bytesRead ?? Number.POSITIVE_INFINITY
        request.destroy()
        assert.deepStrictEqual(answer, { status: 413, body: JSON.stringify(body) }, path)
        assert.isBelow(read, limit + 512 * 1024, path)
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

  it("stops reading a body over the limit as soon as it passes it", async () => {
    // 16 MiB of spaces, a chunk per turn of the event loop, as a network would deliver them.
    let pulled = 0
    const endless = new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        await new Promise((resolve) => setImmediate(resolve))
        if (pulled >= 16 * limit) return controller.close()
        pulled += 64 * 1024
        controller.enqueue(new Uint8Array(64 * 1024).fill(0x20))
      }
    })
    const response = await within(
      5000,
      handler.web(
        new Request("http://127.0.0.1/emails", {
          method: "POST",
          headers: { "x-api-key": keys.acme, "content-type": "application/json" },
          body: endless,
          duplex: "half"
        } as RequestInit)
      ),
      "answer to a body over the limit"
    )
    assert.strictEqual(response.status, 413)
    assert.strictEqual(await response.text(), JSON.stringify({ error: `the body is larger than ${limit} bytes` }))
    assert.isAtMost(pulled, limit + 3 * 64 * 1024)
  })
})
