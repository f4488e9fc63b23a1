// Providers' webhooks against the built `mailroom` process: what the headers can refuse costs no body,
// bodies only a signature can verify (SNS) are few at once and small, so hundreds of large anonymous
// requests leave the process's memory nearly where it was, while genuine webhooks are still answered.
import { readFile, writeFile } from "node:fs/promises"
import { type ClientRequest, request } from "node:http"
import { join } from "node:path"
import { type TempDir, tempDir } from "@mailroom/test-support"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { type ServerProcess, startServer } from "./support/serverProcess.js"

const hookPassword = "postmark-hook-password"
const eventBridgeSecret = "eventbridge-shared-secret"
const topic = "arn:aws:sns:eu-west-1:123456789012:mailroom-events"

/** Resident and peak resident memory of a process, in MiB, from /proc. */
const memory = async (pid: number) => {
  const status = await readFile(`/proc/${pid}/status`, "utf8")
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)?.[1]) / 1024
  return { rss: field("VmRSS"), peak: field("VmHWM") }
}

/**
 * Resolves once every byte sent to `port` on this host has been read by its process: the server's
 * receive queues and the clients' send queues on those connections are empty (/proc/net/tcp).
 */
const drained = async (port: number, timeoutMs = 30_000) => {
  const hex = port.toString(16).toUpperCase().padStart(4, "0")
  const deadline = Date.now() + timeoutMs
  for (;;) {
    let queued = 0
    for (const line of (await readFile("/proc/net/tcp", "utf8")).split("\n").slice(1)) {
      const [, local, remote, , queues] = line.trim().split(/\s+/)
      if (queues === undefined) continue
      const [tx, rx] = queues.split(":").map((n) => Number.parseInt(n, 16)) as [number, number]
      if (local?.endsWith(`:${hex}`)) queued += rx
      if (remote?.endsWith(`:${hex}`)) queued += tx
    }
    if (queued === 0) return
    if (Date.now() > deadline) throw new Error(`${queued} bytes still queued to port ${port}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

interface Outcome {
  readonly status: number | "reset"
  readonly retryAfter?: string | undefined
}

/**
 * A POST whose body is `size` bytes, written as fast as the server takes it but for its last byte,
 * sent on `release`. `sent` settles once all but that byte are written, or the server has answered.
 * `outcome` settles with the status, or "reset" when the server closed the connection first.
 */
const post = (url: string, headers: Record<string, string>, size: number, chunk: Buffer) => {
  let outgoing: ClientRequest | undefined
  let hold: (() => void) | undefined
  let settleSent: () => void = () => {}
  const sent = new Promise<void>((resolve) => {
    settleSent = resolve
  })
  const outcome = new Promise<Outcome>((resolve) => {
    outgoing = request(url, { method: "POST", headers: { ...headers, "content-length": String(size) }, agent: false })
    outgoing.once("response", (response) => {
      settleSent()
      response.resume()
      resolve({ status: response.statusCode ?? 0, retryAfter: response.headers["retry-after"] })
      outgoing?.destroy()
    })
    outgoing.on("error", () => {
      settleSent()
      resolve({ status: "reset" })
    })
    let released = false
    let written = false
    const finish = () => {
      if (released && written && outgoing?.destroyed === false) outgoing.end("}")
    }
    hold = () => {
      released = true
      finish()
    }
    void (async () => {
      let sent = 0
      while (sent < size - 1 && outgoing !== undefined && !outgoing.destroyed) {
        const piece = chunk.subarray(0, Math.min(chunk.byteLength, size - 1 - sent))
        sent += piece.byteLength
        if (!outgoing.write(piece)) await new Promise((r) => outgoing?.once("drain", r))
      }
      written = true
      settleSent()
      finish()
    })()
  })
  return { sent, outcome, release: () => hold?.() }
}

const webhook = (url: string, path: string, headers: Record<string, string>, body: unknown) =>
  fetch(`${url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body)
  })

describe("webhook bodies against a server process", () => {
  let dir: TempDir
  let configPath: string
  let server: ServerProcess
  beforeAll(async () => {
    dir = await tempDir("webhook-bodies")
    const config = {
      serviceDomain: "mailroom.test",
      organizations: [{ id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"], apiKeys: ["mr_test_acme"] }],
      storage: { kind: "local", dir: "storage", signingSecret: "webhook-bodies" },
      provider: { kind: "outbox", dir: "outbox" },
      events: {
        ses: { topicArns: [topic], eventBridgeSecret },
        postmark: { basicAuth: { username: "postmark", password: hookPassword } }
      }
    }
    configPath = join(dir.path, "config.json")
    await writeFile(configPath, JSON.stringify(config))
    server = await startServer(configPath)
  })
  afterAll(async () => {
    await server?.stop()
    await dir?.remove()
  })

  /**
   * Sends `count` bodies of `size` to each path at once to a fresh process, every body held a byte
   * short of its end until all are written and read (a server that buffers bodies then holds them
   * all): the outcomes, and how far the process's peak memory rose above where it started.
   */
  const flood = async (paths: ReadonlyArray<string>, count: number, size: number) => {
    const fresh = await startServer(configPath)
    try {
      const chunk = Buffer.alloc(64 * 1024, "a")
      const before = await memory(fresh.pid)
      const requests = paths.flatMap((path) =>
        Array.from({ length: count }, () =>
          post(`${fresh.url}${path}`, { "content-type": "application/json" }, size, chunk)
        )
      )
      await Promise.all(requests.map((r) => r.sent))
      await drained(Number(new URL(fresh.url).port))
      for (const r of requests) r.release()
      const outcomes = await Promise.all(requests.map((r) => r.outcome))
      const after = await memory(fresh.pid)
      return { outcomes, grewMiB: after.peak - before.rss }
    } finally {
      await fresh.stop()
    }
  }

  it("600 unauthenticated 960 KiB bodies: refused from their headers, the process's memory nearly unmoved", async () => {
    const { outcomes, grewMiB } = await flood(["/webhooks/ses", "/webhooks/postmark"], 300, 960 * 1024)
    // 600 x 960 KiB is 562 MiB, which the process once buffered; 600 connections alone cost ~90 MiB.
    assert.isBelow(grewMiB, 200, `peak RSS grew by ${grewMiB.toFixed(0)} MiB`)
    // Over the SES source's 512 KiB: 413; Postmark without its Basic credentials: 401. A refused body
    // is not read, and the connection is closed after the answer: a client still writing may see the
    // close before the answer (a reset), never any other status.
    const ses = outcomes.slice(0, 300)
    const postmark = outcomes.slice(300)
    assert.deepStrictEqual(
      [...new Set(ses.map((o) => o.status))].filter((s) => s !== 413 && s !== "reset"),
      []
    )
    assert.deepStrictEqual(
      [...new Set(postmark.map((o) => o.status))].filter((s) => s !== 401 && s !== "reset"),
      []
    )
    assert.isAbove(ses.filter((o) => o.status === 413).length, 0, "SES bodies refused by their size")
    assert.isAbove(postmark.filter((o) => o.status === 401).length, 0, "Postmark bodies refused by their credentials")
  })

  it("600 anonymous SNS-sized bodies: 64 read at once, the rest 503 with Retry-After, memory bounded", async () => {
    const { outcomes, grewMiB } = await flood(["/webhooks/ses"], 600, 500 * 1024)
    // 600 x 500 KiB is 293 MiB; 64 held at once is 32 MiB.
    assert.isBelow(grewMiB, 200, `peak RSS grew by ${grewMiB.toFixed(0)} MiB`)
    const refused = outcomes.filter((o) => o.status === 503)
    assert.strictEqual(refused.length, 600 - 64, JSON.stringify(outcomes.slice(0, 5)))
    for (const answer of refused) assert.strictEqual(answer.retryAfter, "5")
    // Those read are not SNS messages: 400, never a 500; none is lost without an answer.
    assert.strictEqual(outcomes.filter((o) => o.status === 400).length, 600 - refused.length)
  })
  it("the request one past the cap is answered 503 at once; once the held bodies end, webhooks are read again", async () => {
    const chunk = Buffer.alloc(1024, "a")
    const held = Array.from({ length: 64 }, () =>
      post(`${server.url}/webhooks/ses`, { "content-type": "application/json" }, 200 * 1024, chunk)
    )
    try {
      // Each holds a slot once the server has started reading it: send until one is refused.
      let answer: Outcome | undefined
      for (let attempt = 0; attempt < 100 && answer?.status !== 503; attempt++) {
        answer = await Promise.race([
          webhook(server.url, "/webhooks/ses", {}, { Type: "Notification" }).then((r) => ({
            status: r.status,
            retryAfter: r.headers.get("retry-after") ?? undefined
          })),
          new Promise<Outcome>((resolve) => setTimeout(() => resolve({ status: 0 }), 5000))
        ])
      }
      assert.deepStrictEqual(answer, { status: 503, retryAfter: "5" })
      // A genuine EventBridge webhook proves itself in its headers and is read whatever SNS holds.
      const bridged = await webhook(
        server.url,
        "/webhooks/ses",
        { "x-mailroom-webhook-secret": eventBridgeSecret },
        { "detail-type": "Email Delivered", detail: { eventType: "Unknown" } }
      )
      assert.strictEqual(bridged.status, 200, await bridged.text())
    } finally {
      for (const request of held) request.release()
      await Promise.all(held.map((request) => request.outcome))
    }
    const after = await webhook(server.url, "/webhooks/ses", {}, { Type: "Notification" })
    assert.strictEqual(after.status, 400)
  })

  it("a valid Postmark webhook is still received", async () => {
    const bounce = JSON.parse(
      await readFile(new URL("../../postmark/test/fixtures/bounce.json", import.meta.url), "utf8")
    ) as Record<string, unknown> & { Metadata: Record<string, string> }
    bounce.Metadata["mailroom-org"] = "org_acme"
    const authorization = `Basic ${Buffer.from(`postmark:${hookPassword}`).toString("base64")}`
    const answer = await webhook(server.url, "/webhooks/postmark", { authorization }, bounce)
    assert.strictEqual(answer.status, 200)
    assert.deepStrictEqual(await answer.json(), { events: 1 })
  })
})
