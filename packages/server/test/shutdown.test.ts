// SIGTERM as a process manager sends it, while clients are connected: the built `mailroom` command
// must answer what it can within `shutdownGracePeriod` and then exit, whatever the other clients (and
// a stalled provider) do.
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises"
import { connect, type Socket } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import * as PostmarkStandIn from "../../postmark/test/PostmarkStandIn.js"
import { run } from "./process.js"

const graceMs = 2000
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe("SIGTERM with a slow client connected", () => {
  let dir: string
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "mailroom-shutdown-"))
  })
  afterAll(() => rm(dir, { recursive: true, force: true }))

  it("answers the request in flight, closes the stalled and idle connections, exits 0 after the grace", async () => {
    const path = join(dir, "mailroom.config.json")
    await writeFile(
      path,
      JSON.stringify({
        serviceDomain: "mailroom.test",
        organizations: [{ id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"], apiKeys: ["mr_test_acme"] }],
        storage: { kind: "local", dir: "storage", signingSecret: "shutdown-secret" },
        provider: { kind: "outbox", dir: "outbox" },
        shutdownGracePeriod: "2 seconds"
      })
    )
    const { child, exited, listening } = run(path)
    const sockets: Array<Socket> = []
    try {
      const url = await listening
      const presign = async () => {
        const answer = await fetch(`${url}/attachments/presign`, {
          method: "POST",
          headers: { "x-api-key": "mr_test_acme", "content-type": "application/json" },
          body: JSON.stringify({ filename: "slow.bin" })
        })
        return new URL(((await answer.json()) as { url: string }).url)
      }
      const raw = async (head: string) => {
        const { hostname, port } = new URL(url)
        const socket = connect(Number(port), hostname)
        sockets.push(socket)
        socket.on("error", () => {})
        await new Promise<void>((resolve) => socket.once("connect", () => resolve()))
        socket.write(head)
        return socket
      }

      // A client that sends headers and part of its upload, then nothing.
      const stalledUrl = await presign()
      const stalled = await raw(
        `PUT ${stalledUrl.pathname}${stalledUrl.search} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/octet-stream\r\ncontent-length: 100000\r\n\r\n${"x".repeat(1000)}`
      )
      stalled.resume()
      // A keep-alive connection that has had its answer and stays open.
      const idle = await raw("GET /openapi.json HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
      await new Promise((resolve) => idle.once("data", resolve))

      // An upload still streaming when the signal arrives, finished well within the grace.
      const inFlightUrl = await presign()
      let sent = 0
      let signalledAt = 0
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          if (sent === 2) {
            signalledAt = performance.now()
            child.kill("SIGTERM")
          }
          if (sent === 8) return controller.close()
          await sleep(100)
          controller.enqueue(new Uint8Array(1024).fill(sent))
          sent++
        }
      })
      const answer = await fetch(inFlightUrl, {
        method: "PUT",
        headers: { "content-type": "application/octet-stream" },
        body,
        duplex: "half"
      } as RequestInit)
      assert.strictEqual(answer.status, 200, await answer.text())

      const code = await Promise.race([exited, sleep(graceMs + 5000).then(() => "still running" as const)])
      const elapsed = performance.now() - signalledAt
      assert.strictEqual(code, 0)
      // It waited for the stalled client for the grace period, and not much longer.
      assert.isAbove(elapsed, graceMs - 200)
      assert.isBelow(elapsed, graceMs + 3000)
      const leftovers = (await readdir(join(dir, "storage", ".tmp")).catch(() => [])).filter((n) => n.endsWith(".part"))
      assert.deepStrictEqual(leftovers, [], "the stalled upload's temporary file is left")
    } finally {
      for (const socket of sockets) socket.destroy()
      child.kill("SIGKILL")
    }
  })
})

describe("SIGTERM with a send waiting on a stalled provider", () => {
  let dir: string
  let standIn: PostmarkStandIn.StandIn
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "mailroom-shutdown-send-"))
    standIn = await PostmarkStandIn.start()
  })
  afterAll(async () => {
    await standIn?.close()
    await rm(dir, { recursive: true, force: true })
  })

  it("answers 503 may have been sent after the grace, logs it, and records the Idempotency-Key as uncertain", async () => {
    const path = join(dir, "mailroom.config.json")
    await writeFile(
      path,
      JSON.stringify({
        serviceDomain: "mailroom.test",
        organizations: [{ id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"], apiKeys: ["mr_test_acme"] }],
        storage: { kind: "local", dir: "storage", signingSecret: "shutdown-secret" },
        // The provider's own timeout is far away: only the shutdown ends the wait.
        provider: {
          kind: "postmark",
          serverToken: standIn.token,
          requestHost: standIn.host,
          useHttps: false,
          timeout: "5 minutes"
        },
        shutdownGracePeriod: "1 seconds"
      })
    )
    const body = JSON.stringify({
      from: "billing@acme.example",
      to: ["alice@example.com"],
      subject: "Receipt 7",
      body: { text: "Thanks." }
    })
    const headers = { "x-api-key": "mr_test_acme", "content-type": "application/json", "idempotency-key": "receipt-7" }
    const first = run(path)
    try {
      const url = await first.listening
      standIn.failNext("hang")
      const reached = standIn.nextRequest()
      const answer = fetch(`${url}/emails`, { method: "POST", headers, body })
      await reached
      first.child.kill("SIGTERM")
      const response = await answer
      assert.strictEqual(response.status, 503)
      assert.deepStrictEqual(await response.json(), {
        error:
          "the email provider did not confirm the message; it may have been sent, so check before sending it again",
        may_have_been_sent: true
      })
      assert.strictEqual(await first.exited, 0)
      assert.match(first.output().stdout, /^POST \/emails 503 /m, "the request has its log line")
    } finally {
      first.child.kill("SIGKILL")
    }

    // The next process reads the key as uncertain: neither locked (in flight) nor free to send again.
    const second = run(path)
    try {
      const url = await second.listening
      const again = await fetch(`${url}/emails`, { method: "POST", headers, body })
      assert.strictEqual(again.status, 409)
      assert.match(((await again.json()) as { error: string }).error, /failed after the provider may have accepted it/)
      const sends = standIn.requests.filter((r) => r.method === "POST" && r.path === "/email")
      assert.strictEqual(sends.length, 1, "the message went to the provider once")
    } finally {
      second.child.kill("SIGTERM")
      await second.exited
    }
  })
})
