// The built `mailroom` command run short of file handles (`ulimit -n`), as a busy host runs it: a
// failure while every handle is taken lasts only as long as the shortage.
import { readdirSync, readlinkSync } from "node:fs"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { Agent, request } from "node:http"
import { connect, type Socket } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { ServerConfig } from "../src/index.js"
import { type ServerProcess, startServer } from "./support/serverProcess.js"

const apiKey = "mr_test_acme"

const writeConfig = async (dir: string, extra: Record<string, unknown> = {}) => {
  const path = join(dir, "mailroom.config.json")
  await writeFile(
    path,
    JSON.stringify({
      port: 0,
      serviceDomain: "mailroom.test",
      organizations: [{ id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"], apiKeys: [apiKey] }],
      storage: { kind: "local", dir: "storage", signingSecret: "test-secret" },
      provider: { kind: "outbox", dir: "outbox" },
      ...extra
    })
  )
  return path
}

/** One kept-alive connection, opened before the handles run out, so requests still reach the server. */
const keptAlive = (url: string) => {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  const { hostname, port } = new URL(url)
  const call = (method: string, path: string, body?: string) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request({ host: hostname, port, method, path, agent, headers: { "x-api-key": apiKey } }, (res) => {
        let text = ""
        res.setEncoding("utf8")
        res.on("data", (chunk: string) => {
          text += chunk
        })
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }))
      })
      req.on("error", reject)
      if (body !== undefined) req.setHeader("content-type", "application/json")
      req.end(body)
    })
  return { call, close: () => agent.destroy() }
}

/** A connection the server accepted (it answered a request on it), held open: one of its file handles. */
const acceptedConnection = (url: string) =>
  new Promise<Socket | undefined>((resolve) => {
    const { hostname, port } = new URL(url)
    const socket = connect(Number(port), hostname)
    let seen = ""
    const settle = (held: boolean) => {
      clearTimeout(timer)
      socket.removeAllListeners("data")
      if (!held) socket.destroy()
      resolve(held ? socket : undefined)
    }
    // Generous: a busy machine answers slowly, and an early give-up would leave handles free.
    const timer = setTimeout(() => settle(false), 3000)
    socket.on("data", (chunk: Buffer) => {
      seen += chunk.toString()
      if (seen.includes("\r\n\r\n")) settle(true)
    })
    socket.on("error", () => settle(false))
    socket.on("close", () => settle(false))
    socket.write(`GET /healthz HTTP/1.1\r\nHost: ${hostname}\r\n\r\n`)
  })

/** The file handles a process holds (Linux's /proc). */
const openHandles = (pid: number) => readdirSync(`/proc/${pid}/fd`).length

/** Resolves once the process holds at most `count` handles: the server has closed what was released. */
const handlesDownTo = async (pid: number, count: number) => {
  const deadline = Date.now() + 10_000
  while (openHandles(pid) > count) {
    if (Date.now() > deadline) throw new Error(`the server still holds ${openHandles(pid)} file handles`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** Takes every file handle the server has left, one accepted connection each; `release` gives them back. */
const exhaustHandles = async (url: string) => {
  const held: Array<Socket> = []
  for (;;) {
    const socket = await acceptedConnection(url)
    if (socket === undefined) break
    held.push(socket)
    if (held.length > 1000) throw new Error("the server never ran out of file handles: is the limit applied?")
  }
  const release = () => {
    for (const socket of held) socket.destroy()
  }
  return { count: held.length, release }
}

const email = JSON.stringify({
  from: "billing@acme.example",
  to: ["alice@example.com"],
  subject: "Receipt",
  body: { text: "Thanks." }
})

describe("an outbox whose first send runs out of file handles", () => {
  let dir: string
  let server: ServerProcess
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "mailroom-handles-"))
    server = await startServer(await writeConfig(dir), {}, [], { fileLimit: 64 })
  }, 30_000)
  afterAll(async () => {
    await server?.stop()
    await rm(dir, { recursive: true, force: true })
  })

  it("fails that send, then sends again once handles are free (the composer's load is not cached failed)", async () => {
    const client = keptAlive(server.url)
    try {
      assert.strictEqual((await client.call("GET", "/healthz")).status, 200)
      const before = openHandles(server.pid)
      const handles = await exhaustHandles(server.url)
      assert.isAbove(handles.count, 0)
      // The first send loads the outbox's message composer, which needs handles: there are none.
      const starved = await client.call("POST", "/emails", email)
      handles.release()
      assert.isAtLeast(starved.status, 500, starved.body)
      await handlesDownTo(server.pid, before + 2)
      const later = await client.call("POST", "/emails", email)
      assert.strictEqual(later.status, 201, later.body)
      assert.strictEqual((await client.call("POST", "/emails", email)).status, 201)
    } finally {
      client.close()
    }
  })
})

/** The object files of the store under `dir` that the process holds open (Linux's /proc). */
const objectFilesOpen = (pid: number, dir: string) =>
  readdirSync(`/proc/${pid}/fd`).filter((fd) => {
    try {
      return readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith(`${dir}/storage/objects/`)
    } catch {
      return false // closed while listed
    }
  }).length

/** Resolves once `condition` holds, checked every 20 ms, or rejects after `ms`. */
const eventually = async (condition: () => boolean, what: string, ms = 15_000) => {
  const deadline = Date.now() + ms
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** A client that asks for `path` and never reads the answer: what the server wrote waits in buffers. */
const stalledReader = (url: string, path: string) => {
  const { hostname, port } = new URL(url)
  const socket = connect(Number(port), hostname)
  socket.on("error", () => {})
  let closed = false
  socket.once("close", () => {
    closed = true
  })
  let answered = false
  socket.write(`GET ${path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\n\r\n`)
  // Never read(): Node fills the socket's buffer (16 KiB) with the first bytes, then reads nothing more.
  socket.once("readable", () => {
    answered = true
  })
  return {
    answered: () => answered || closed,
    closed: () => closed,
    /** Reads from now on, so a connection the server has let go ends here. */
    drain: () => {
      socket.removeAllListeners("readable")
      socket.resume()
    }
  }
}

describe("downloads whose readers stop reading", () => {
  const maxOpenFiles = 5
  const readers = 20
  let dir: string
  let server: ServerProcess
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "mailroom-stalled-"))
    const storage = { kind: "local", dir: "storage", signingSecret: "test-secret" }
    const config = await writeConfig(dir, {
      storage: { ...storage, transferIdleTimeout: "1 seconds", maxOpenFiles }
    })
    server = await startServer(config)
  }, 30_000)
  afterAll(async () => {
    await server?.stop()
    await rm(dir, { recursive: true, force: true })
  })

  it("hold at most maxOpenFiles files, get 503 past it, are cut off when idle, and others are answered", async () => {
    const headers = { "x-api-key": apiKey, "content-type": "application/json" }
    const presign = await fetch(`${server.url}/attachments/presign`, {
      method: "POST",
      headers,
      body: JSON.stringify({ filename: "big.bin", content_type: "application/octet-stream" })
    })
    const { url: uploadUrl, key } = (await presign.json()) as { url: string; key: string }
    // Larger than what a stalled connection's buffers take, so each reader keeps its file open.
    const bytes = new Uint8Array(20 * 1024 * 1024).map((_, i) => (i * 7919) % 251)
    const put = await fetch(uploadUrl, {
      method: "PUT",
      headers: { "content-type": "application/octet-stream" },
      body: bytes
    })
    assert.strictEqual(put.status, 200)
    const download = await fetch(`${server.url}/attachments/download?key=${encodeURIComponent(key)}`, { headers })
    const { download_url } = (await download.json()) as { download_url: string }
    const path = download_url.slice(server.url.length)

    const stalled = Array.from({ length: readers }, () => stalledReader(server.url, path))
    await eventually(() => stalled.every((reader) => reader.answered()), "every stalled reader was answered")
    assert.isAtMost(objectFilesOpen(server.pid, dir), maxOpenFiles, "files held open by stalled readers")

    // Past the bound: a clear 503 with Retry-After; the API still answers.
    const refused = await fetch(download_url)
    assert.strictEqual(refused.status, 503)
    assert.strictEqual(refused.headers.get("retry-after"), "1")
    assert.match(((await refused.json()) as { message: string }).message, /transfers under way, its limit/)
    const sent = await fetch(`${server.url}/emails`, {
      method: "POST",
      headers,
      body: JSON.stringify({
        from: "billing@acme.example",
        to: ["alice@example.com"],
        subject: "Hi",
        body: { text: "Hi" }
      })
    })
    assert.strictEqual(sent.status, 201)

    // Idle for transferIdleTimeout: every file is closed, every stalled connection let go.
    await eventually(() => objectFilesOpen(server.pid, dir) === 0, "the stalled readers' files were closed")
    for (const reader of stalled) reader.drain()
    await eventually(() => stalled.every((reader) => reader.closed()), "the server let every stalled reader go")
    const again = await fetch(download_url)
    assert.strictEqual(again.status, 200)
    assert.deepStrictEqual(new Uint8Array(await again.arrayBuffer()), bytes)
    assert.notInclude(server.output().stderr, "EMFILE", "nothing ran out of file handles")
  }, 60_000)
})

describe('"storage": {"kind": "local"} transfer options', () => {
  it("are checked, naming the field", () => {
    const storage = { kind: "local", dir: "s", signingSecret: "x", transferIdleTimeout: "soon", maxOpenFiles: 0 }
    const config = {
      serviceDomain: "mailroom.test",
      organizations: [],
      storage,
      provider: { kind: "outbox", dir: "o" }
    }
    let problems: ReadonlyArray<string> = []
    try {
      ServerConfig.parse(config)
    } catch (error) {
      problems = (error as ServerConfig.ServerConfigError).problems
    }
    assert.deepStrictEqual(problems, [
      'storage.transferIdleTimeout: must be a duration such as "500 millis", "5 seconds" or "24 hours"',
      "storage.maxOpenFiles: must be a whole number above 0"
    ])
  })
})
