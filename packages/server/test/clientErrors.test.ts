// Requests Node's HTTP parser refuses before any handler runs: oversized request lines and headers,
// and bytes that are not HTTP. The answer is still the API's JSON {message}, and the server goes on.
import { mkdtemp, rm } from "node:fs/promises"
import { connect } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { Server, ServerConfig } from "../src/index.js"

/** Writes `bytes` on a fresh connection and reads the answer until the server closes it. */
const exchange = (url: string, bytes: string) =>
  new Promise<{ status: number; headers: Record<string, string>; body: unknown }>((resolve, reject) => {
    const { hostname, port } = new URL(url)
    const socket = connect(Number(port), hostname, () => socket.write(bytes))
    const chunks: Array<Buffer> = []
    socket.on("data", (chunk: Buffer) => chunks.push(chunk))
    socket.on("error", reject)
    socket.on("close", () => {
      const text = Buffer.concat(chunks).toString("utf8")
      const [head = "", body = ""] = text.split("\r\n\r\n")
      const [statusLine = "", ...lines] = head.split("\r\n")
      const headers = Object.fromEntries(
        lines.map((line) => [line.slice(0, line.indexOf(":")).toLowerCase(), line.slice(line.indexOf(":") + 1).trim()])
      )
      try {
        resolve({ status: Number(statusLine.split(" ")[1]), headers, body: JSON.parse(body) })
      } catch {
        reject(new Error(`not a JSON answer: ${JSON.stringify(text)}`))
      }
    })
  })

describe("requests the HTTP parser refuses", () => {
  let dir: string
  let server: Server.RunningServer
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "mailroom-client-errors-"))
    const config = ServerConfig.parse(
      {
        port: 0,
        serviceDomain: "mailroom.test",
        organizations: [{ id: "org_acme", slug: "acme", apiKeys: ["mr_test_acme"] }],
        storage: { kind: "local", dir: "storage", signingSecret: "test-secret" },
        provider: { kind: "outbox", dir: "outbox" }
      },
      { baseDir: dir, source: "test config" }
    )
    server = await Server.start(config, { log: () => {} })
  })
  afterAll(async () => {
    await server?.close()
    await rm(dir, { recursive: true, force: true })
  })

  const expectJson = (answer: Awaited<ReturnType<typeof exchange>>, status: number, message: string) => {
    assert.strictEqual(answer.status, status)
    assert.strictEqual(answer.headers["content-type"], "application/json; charset=utf-8")
    assert.strictEqual(answer.headers.connection, "close")
    assert.deepStrictEqual(answer.body, { message })
  }

  it("headers over Node's limit are 431 with a JSON body", async () => {
    const big = `GET /openapi.json HTTP/1.1\r\nhost: x\r\nx-big: ${"a".repeat(20_000)}\r\n\r\n`
    expectJson(await exchange(server.url, big), 431, "the request line or headers are larger than the server accepts")
  })

  it("a request line over Node's limit is 431 with a JSON body", async () => {
    const long = `GET /${"a".repeat(20_000)} HTTP/1.1\r\nhost: x\r\n\r\n`
    expectJson(await exchange(server.url, long), 431, "the request line or headers are larger than the server accepts")
  })

  it("bytes that are not HTTP are 400 with a JSON body", async () => {
    expectJson(await exchange(server.url, "HELLO\r\n\r\n"), 400, "the request is not valid HTTP/1.1")
    expectJson(
      await exchange(server.url, "GET / HTTP/1.1\r\nhost: x\r\ncontent-length: nope\r\n\r\n"),
      400,
      "the request is not valid HTTP/1.1"
    )
  })

  it("the server still answers afterwards", async () => {
    const response = await fetch(`${server.url}/openapi.json`)
    assert.strictEqual(response.status, 200)
  })
})
