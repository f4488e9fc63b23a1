// Clients that misbehave, against the built `mailroom` command in its own process on 127.0.0.1:
// dropped, reset, half-closed and stalled transfers on the local store's signed URLs, and a caller
// that leaves before its send is answered. After each, the same process must still serve.
import { existsSync, readdirSync, readlinkSync } from "node:fs"
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises"
import { connect, type Socket } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { type ServerProcess, startServer } from "./support/serverProcess.js"

const apiKey = "mr_test_acme"
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Polls `check` until it holds or `timeoutMs` passes; answers the last result. */
const eventually = async (check: () => Promise<boolean> | boolean, timeoutMs = 3000) => {
  const until = Date.now() + timeoutMs
  for (;;) {
    if (await check()) return true
    if (Date.now() > until) return false
    await sleep(25)
  }
}

describe("clients that go away never take the server down", () => {
  let dir: string
  let server: ServerProcess
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "mailroom-clients-"))
    const path = join(dir, "mailroom.config.json")
    await writeFile(
      path,
      JSON.stringify({
        serviceDomain: "mailroom.test",
        organizations: [{ id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"], apiKeys: [apiKey] }],
        storage: { kind: "local", dir: "storage", signingSecret: "clients-secret" },
        provider: { kind: "outbox", dir: "outbox" },
        // Short, so the stalled upload meets it within the test.
        requestTimeout: "1 second"
      })
    )
    server = await startServer(path)
  })
  afterAll(async () => {
    await server?.stop()
    await rm(dir, { recursive: true, force: true })
  })

  const api = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: { "x-api-key": apiKey, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    return { status: response.status, body: (await response.json()) as Record<string, string> }
  }
  const presign = async (filename: string) => {
    const answer = await api("POST", "/attachments/presign", { filename, content_type: "application/octet-stream" })
    assert.strictEqual(answer.status, 201, JSON.stringify(answer.body))
    return { url: new URL(answer.body.url as string), key: answer.body.key as string }
  }
  const downloadUrl = async (key: string) =>
    new URL((await api("GET", `/attachments/download?key=${encodeURIComponent(key)}`)).body.download_url as string)
  const upload = async (url: URL, content: Uint8Array<ArrayBuffer>) => {
    const put = await fetch(url, {
      method: "PUT",
      headers: { "content-type": "application/octet-stream" },
      body: content
    })
    assert.strictEqual(put.status, 200, await put.text())
  }

  /** A raw connection to the server, `head` (request line and headers) already written. */
  const open = async (head: string): Promise<Socket> => {
    const { hostname, port } = new URL(server.url)
    const socket = connect(Number(port), hostname)
    // The server may answer or reset; the test only cares what the server does next.
    socket.on("error", () => {})
    // Read whatever comes back, so the server's closing of the connection is seen.
    socket.resume()
    await new Promise<void>((resolve) => socket.once("connect", () => resolve()))
    socket.write(head)
    return socket
  }
  const putHead = (url: URL, framing: string) =>
    `PUT ${url.pathname}${url.search} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/octet-stream\r\n${framing}\r\n\r\n`

  const storageDir = () => join(dir, "storage")
  const partFiles = async () =>
    (await readdir(join(storageDir(), ".tmp")).catch(() => [] as Array<string>)).filter((n) => n.endsWith(".part"))
  const objectFile = (key: string) => join(storageDir(), "objects", ...key.split("/"))

  /** The same process answers, a whole upload and download work, and no unfinished upload is left. */
  const stillServing = async () => {
    assert.doesNotThrow(() => process.kill(server.pid, 0), "the server process is gone")
    assert.notMatch(server.output().stderr, /ERR_|Error/, "the server wrote an error")
    assert.strictEqual((await fetch(`${server.url}/openapi.json`)).status, 200)
    const content = new Uint8Array(64 * 1024).map((_, i) => (i * 31) % 256)
    const { url, key } = await presign("after.bin")
    await upload(url, content)
    const got = await fetch(await downloadUrl(key))
    assert.strictEqual(got.status, 200)
    assert.isTrue(Buffer.from(await got.arrayBuffer()).equals(Buffer.from(content)), "the downloaded bytes differ")
    assert.isTrue(await eventually(async () => (await partFiles()).length === 0), `left behind: ${await partFiles()}`)
  }

  // Each interrupted upload must leave no object and no temporary file, and be logged once.
  const interruptedUploads: ReadonlyArray<[string, (url: URL) => Promise<void>]> = [
    [
      "a PUT destroyed mid-body",
      async (url) => {
        const socket = await open(putHead(url, "content-length: 100000"))
        socket.write(Buffer.alloc(20_000, 1))
        await sleep(100)
        socket.destroy()
      }
    ],
    [
      "a PUT reset mid-body (TCP RST)",
      async (url) => {
        const socket = await open(putHead(url, "content-length: 100000"))
        socket.write(Buffer.alloc(20_000, 2))
        await sleep(100)
        socket.resetAndDestroy()
      }
    ],
    [
      "a PUT half-closed before its Content-Length is sent",
      async (url) => {
        const socket = await open(putHead(url, "content-length: 100000"))
        socket.write(Buffer.alloc(20_000, 3))
        await sleep(100)
        socket.end()
      }
    ],
    [
      "a chunked PUT abandoned midway",
      async (url) => {
        const socket = await open(putHead(url, "transfer-encoding: chunked"))
        socket.write(`4e20\r\n${Buffer.alloc(20_000, 4).toString("latin1")}\r\n`, "latin1")
        await sleep(100)
        socket.destroy()
      }
    ],
    [
      "a PUT that stalls until the request timeout",
      async (url) => {
        const socket = await open(putHead(url, "content-length: 100000"))
        socket.write(Buffer.alloc(20_000, 5))
        // Never sends the rest: the server must give up on it (requestTimeout is 1 second).
        assert.isTrue(await eventually(() => socket.closed, 10_000), "the server never closed the stalled upload")
      }
    ]
  ]
  for (const [name, interrupt] of interruptedUploads) {
    it(`${name}: the server keeps serving, nothing is stored, no .part is left`, async () => {
      const { url, key } = await presign("interrupted.bin")
      const logged = server.waitFor(/^PUT \/_mailroom\/storage\/\S+ \d{3} /)
      await interrupt(url)
      await logged
      await stillServing()
      assert.isFalse(existsSync(objectFile(key)), "a part of the upload was stored as the object")
    })
  }

  // Whoever holds an upload URL chooses how the bytes arrive: a body over its bound length in a single
  // chunk ends the store's read early, and the request's own end must not reach the closed stream.
  for (const [name, chunks] of [
    ["one chunk", [40]],
    ["four chunks", [10, 10, 10, 10]]
  ] as const) {
    it(`a chunked PUT over the URL's bound length in ${name}: 403, nothing stored, the server keeps serving`, async () => {
      const answer = await api("POST", "/attachments/presign", {
        filename: "bound.bin",
        content_type: "application/octet-stream",
        content_length: 30
      })
      assert.strictEqual(answer.status, 201, JSON.stringify(answer.body))
      const put = await fetch(
        answer.body.url as string,
        {
          method: "PUT",
          headers: { "content-type": "application/octet-stream" },
          body: new ReadableStream<Uint8Array>({
            start: (controller) => {
              for (const size of chunks) controller.enqueue(new Uint8Array(size).fill(9))
              controller.close()
            }
          }),
          duplex: "half"
        } as RequestInit
      )
      assert.strictEqual(put.status, 403, await put.text())
      await stillServing()
      assert.isFalse(existsSync(objectFile(answer.body.key as string)), "the over-long body was stored")
    })
  }

  // A download URL is handed to end users: whoever holds one can open and drop it.
  const fileDescriptorsOn = (file: string) => {
    const fds = `/proc/${server.pid}/fd`
    if (!existsSync(fds)) return 0 // not Linux: the process staying up is still checked
    return readdirSync(fds).filter((fd) => {
      try {
        return readlinkSync(join(fds, fd)) === file
      } catch {
        return false
      }
    }).length
  }
  it("a GET of a download URL dropped right after the request: the server keeps serving and closes the file", async () => {
    const { url, key } = await presign("large.bin")
    await upload(url, new Uint8Array(8 * 1024 * 1024).fill(7))
    const download = await downloadUrl(key)
    const logged = server.waitFor(/^GET \/_mailroom\/storage\/\S+ 200 /)
    const socket = await open(`GET ${download.pathname}${download.search} HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n`)
    socket.destroy()
    await logged
    await stillServing()
    assert.isTrue(
      await eventually(() => fileDescriptorsOn(objectFile(key)) === 0),
      "the server still holds the object's file open"
    )
  })

  it("a send whose caller left before the answer is delivered and logged once", async () => {
    const outbox = join(dir, "outbox")
    const before = (await readdir(outbox).catch(() => [] as Array<string>)).length
    const logged = server.waitFor(/^POST \/emails /)
    const body = JSON.stringify({
      from: "hello@acme.example",
      to: ["alice@example.com"],
      subject: "Sent to nobody",
      body: { text: "The caller hung up." }
    })
    const socket = await open(
      `POST /emails HTTP/1.1\r\nhost: 127.0.0.1\r\nx-api-key: ${apiKey}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
    )
    socket.destroy()
    const line = await logged
    assert.match(line, /^POST \/emails 201 [\d.]+ms \(client gone\)$/)
    assert.isTrue(
      await eventually(async () => (await readdir(outbox)).filter((n) => n.endsWith(".eml")).length === before + 1),
      "no .eml was written"
    )
    await sleep(200)
    const lines = server
      .output()
      .stdout.split("\n")
      .filter((l) => l.startsWith("POST /emails "))
    assert.deepStrictEqual(lines, [line])
  })
})
