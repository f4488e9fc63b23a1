// The built `mailroom` command run short of file handles (`ulimit -n`), as a busy host runs it: a
// failure while every handle is taken lasts only as long as the shortage.
import { readdirSync } from "node:fs"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { Agent, request } from "node:http"
import { connect, type Socket } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
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
  return { count: held.length, release: () => held.forEach((socket) => socket.destroy()) }
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
