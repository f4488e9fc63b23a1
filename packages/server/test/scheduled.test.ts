// Sending later and sending many on the `mailroom` command, as a user runs it (SQLite records, the
// outbox): what the outbox holds and when, a cancel, a batch retried under its key, every bad input's
// 4xx with nothing queued, the backlog on /metrics, and a SIGKILL while messages wait.
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { type ServerProcess, startServer } from "./support/serverProcess.js"

const apiKey = "mr_test_acme"
const message = (subject: string) => ({
  from: "billing@acme.example",
  to: ["alice@example.com"],
  subject,
  body: { text: "Hi" }
})

interface Answer {
  readonly status: number
  readonly headers: Headers
  readonly body: Record<string, unknown>
}

const api = async (
  server: ServerProcess,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
  key = apiKey
): Promise<Answer> => {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { "x-api-key": key, ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as Record<string, unknown>
  }
}

const inSeconds = (seconds: number) => new Date(Date.now() + seconds * 1000).toISOString()
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** A folder with a config on SQLite records (the default) and the outbox; `extra` is merged into it. */
const setUp = async (extra: Record<string, unknown> = {}) => {
  const dir = await mkdtemp(join(tmpdir(), "mailroom-scheduled-"))
  const path = join(dir, "mailroom.config.json")
  await writeFile(
    path,
    JSON.stringify({
      serviceDomain: "mailroom.test",
      organizations: [
        { id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"], apiKeys: [apiKey] },
        { id: "org_globex", slug: "globex", verifiedDomains: ["globex.example"], apiKeys: ["mr_test_globex"] }
      ],
      storage: { kind: "local", dir: "storage", signingSecret: "scheduled-secret" },
      provider: { kind: "outbox", dir: "outbox" },
      viewer: { enabled: false },
      metrics: { enabled: true },
      ...extra
    })
  )
  const outbox = async () => {
    try {
      return (await readdir(join(dir, "outbox"))).filter((name) => name.endsWith(".eml"))
    } catch {
      return []
    }
  }
  return { dir, path, outbox }
}

/** Polls until `check` holds (what a user watching the outbox or the API does), or fails at the deadline. */
const eventually = async (what: string, check: () => Promise<boolean>, timeoutMs: number, every = 100) => {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`not within ${timeoutMs} ms: ${what}`)
    await pause(every)
  }
}

const whenReady = async (server: ServerProcess) =>
  eventually("ready", async () => (await fetch(`${server.url}/readyz`)).status === 200, 20_000)

describe("scheduled sends on one server", () => {
  let world: Awaited<ReturnType<typeof setUp>>
  let server: ServerProcess
  beforeAll(async () => {
    world = await setUp()
    server = await startServer(world.path)
    await whenReady(server)
  }, 30_000)
  afterAll(async () => {
    await server?.stop()
    if (world !== undefined) await rm(world.dir, { recursive: true, force: true })
  })

  it("a message scheduled 3 s ahead is not in the outbox after 1 s and is there, once, by 8 s; one cancelled never is", async () => {
    const started = Date.now()
    const due = inSeconds(3)
    const kept = await api(server, "POST", "/emails", { ...message("kept"), scheduled_at: due })
    const dropped = await api(server, "POST", "/emails", { ...message("dropped"), scheduled_at: inSeconds(3) })
    assert.strictEqual(kept.status, 202, JSON.stringify(kept.body))
    assert.strictEqual(kept.body.status, "scheduled")
    const keptFile = `${kept.body.message_id}.eml`
    const droppedFile = `${dropped.body.message_id}.eml`
    const cancelled = await api(server, "POST", `/emails/${dropped.body.message_id}/cancel`)
    assert.deepStrictEqual(cancelled.body, { message_id: dropped.body.message_id, status: "cancelled" })
    await pause(Math.max(0, started + 1000 - Date.now()))
    const early = await world.outbox()
    // On a loaded machine this look may come late; only one made before its time says anything.
    if (Date.now() < Date.parse(due)) assert.notInclude(early, keptFile, "not before its time")
    await eventually(
      "the scheduled message is in the outbox",
      async () => (await world.outbox()).includes(keptFile),
      8000 - (Date.now() - started)
    )
    const record = await api(server, "GET", `/emails/${kept.body.message_id}`)
    assert.oneOf(record.body.status, ["sent", "delivered"])
    // Three seconds past its time (and the queue's next looks), the cancelled one never appeared.
    await pause(3000)
    const outbox = await world.outbox()
    assert.strictEqual(outbox.filter((name) => name === keptFile).length, 1)
    assert.notInclude(outbox, droppedFile)
    assert.strictEqual((await api(server, "GET", `/emails/${dropped.body.message_id}`)).body.status, "cancelled")
  }, 20_000)

  it("bad input: a clear 4xx in the spec's shapes, and nothing queued", async () => {
    const before = await api(server, "GET", "/emails?status=scheduled&limit=100")
    const scheduledBefore = (before.body.data as Array<unknown>).length
    const cases: ReadonlyArray<[string, string, unknown, number, unknown, string?]> = [
      [
        "POST",
        "/emails",
        { ...message("past"), scheduled_at: inSeconds(-60) },
        400,
        { errors: ["scheduled_at: must be at least 1 second in the future"] }
      ],
      [
        "POST",
        "/emails",
        { ...message("far"), scheduled_at: inSeconds(31 * 86_400) },
        400,
        { errors: ["scheduled_at: must be at most 30 days in the future"] }
      ],
      [
        "POST",
        "/emails",
        { ...message("malformed"), scheduled_at: "next tuesday" },
        400,
        { errors: ["scheduled_at: must be an RFC 3339 date-time with an offset, such as 2026-05-01T09:00:00Z"] }
      ],
      [
        "POST",
        "/emails/batch",
        Array.from({ length: 101 }, () => message("many")),
        400,
        { errors: ["request: must be an array of 1 to 100 send requests"] }
      ],
      [
        "POST",
        "/emails/batch",
        message("not an array"),
        400,
        { errors: ["request: must be an array of 1 to 100 send requests"] }
      ],
      [
        "POST",
        "/emails/0190c3b2-0000-7000-8000-000000000000/cancel",
        undefined,
        404,
        { error: "no email with id 0190c3b2-0000-7000-8000-000000000000" }
      ]
    ]
    for (const [method, path, body, status, expected] of cases) {
      const answer = await api(server, method, path, body)
      assert.strictEqual(answer.status, status, `${path}: ${JSON.stringify(answer.body)}`)
      assert.deepStrictEqual(answer.body, expected)
    }
    // Another organisation's scheduled message: a 404, as if it did not exist, and it stays scheduled.
    const theirs = await api(
      server,
      "POST",
      "/emails",
      { ...message("theirs"), from: "x@globex.example", scheduled_at: inSeconds(3600) },
      {},
      "mr_test_globex"
    )
    const id = String(theirs.body.message_id)
    assert.deepStrictEqual((await api(server, "POST", `/emails/${id}/cancel`)).body, {
      error: `no email with id ${id}`
    })
    assert.strictEqual((await api(server, "PATCH", `/emails/${id}`, { scheduled_at: inSeconds(60) })).status, 404)
    assert.strictEqual(
      (await api(server, "GET", `/emails/${id}`, undefined, {}, "mr_test_globex")).body.status,
      "scheduled"
    )
    const after = await api(server, "GET", "/emails?status=scheduled&limit=100")
    assert.strictEqual((after.body.data as Array<unknown>).length, scheduledBefore, "nothing queued")
  })

  it("a batch of 100 with 3 invalid items: 97 in the outbox, the 3 by index; retried under its key, nothing more", async () => {
    const batch: Array<Record<string, unknown>> = Array.from({ length: 100 }, (_, i) => message(`batch ${i}`))
    batch[3] = { ...message("bad"), to: ["nobody"] }
    batch[50] = { ...message("bad"), body: {} }
    batch[97] = { ...message("bad"), from: "billing@unverified.example" }
    const before = (await world.outbox()).length
    const headers = { "idempotency-key": "black-box-batch" }
    const first = await api(server, "POST", "/emails/batch", batch, headers)
    assert.strictEqual(first.status, 200)
    const data = first.body.data as Array<{ index: number; message_id: string }>
    assert.strictEqual(data.length, 97)
    assert.deepStrictEqual(first.body.errors, [
      { index: 3, errors: ["to[0]: must be a valid email address"] },
      { index: 50, errors: ["body: must contain html or text"] },
      {
        index: 97,
        errors: [
          "from: billing@unverified.example is not on a verified domain of organization org_acme (its verified domains are acme.example, acme.mailroom.test, and their subdomains); nothing was sent"
        ]
      }
    ])
    const outbox = await world.outbox()
    assert.strictEqual(outbox.length, before + 97)
    for (const { message_id } of data) assert.include(outbox, `${message_id}.eml`)
    const again = await api(server, "POST", "/emails/batch", batch, headers)
    assert.strictEqual(again.headers.get("idempotent-replayed"), "true")
    assert.deepStrictEqual(again.body, first.body)
    assert.strictEqual((await world.outbox()).length, before + 97, "the retry sent nothing")
  })

  it("/readyz checks the queue's database; /metrics has the backlog and how late the oldest due one is", async () => {
    const readiness = (await (await fetch(`${server.url}/readyz`)).json()) as { checks: Record<string, string> }
    assert.strictEqual(readiness.checks.queue, "ok")
    await api(server, "POST", "/emails", { ...message("waiting"), scheduled_at: inSeconds(3600) })
    await api(server, "POST", "/emails", { ...message("waiting too"), scheduled_at: inSeconds(7200) })
    await eventually(
      "the gauges are refreshed",
      async () => {
        const text = await (await fetch(`${server.url}/metrics`)).text()
        const scheduled = /^mailroom_scheduled_messages(?:\{[^}]*\})? (\d+)/m.exec(text)?.[1]
        return scheduled !== undefined && Number(scheduled) >= 2 && /^mailroom_scheduled_oldest_due_seconds/m.test(text)
      },
      15_000
    )
  }, 20_000)
})

describe("a batch while the provider takes nothing", () => {
  it("paused: 503, nothing kept under its key; once sending resumes, the retry sends every item", async () => {
    const world = await setUp({ provider: { kind: "outbox", dir: "outbox", paused: true } })
    const batch = [message("first"), message("second")]
    const key = { "idempotency-key": "paused-batch" }
    let server = await startServer(world.path)
    try {
      await whenReady(server)
      const refused = await api(server, "POST", "/emails/batch", batch, key)
      assert.strictEqual(refused.status, 503, JSON.stringify(refused.body))
      assert.deepStrictEqual(refused.body, {
        error: "no message of the batch was sent: sending is paused on this outbox (paused: true)"
      })
      await server.stop()
      const config = JSON.parse(await readFile(world.path, "utf8")) as Record<string, unknown>
      await writeFile(world.path, JSON.stringify({ ...config, provider: { kind: "outbox", dir: "outbox" } }))
      server = await startServer(world.path)
      await whenReady(server)
      const retried = await api(server, "POST", "/emails/batch", batch, key)
      assert.strictEqual(retried.status, 200, JSON.stringify(retried.body))
      assert.isNull(retried.headers.get("idempotent-replayed"))
      const ids = (retried.body.data as Array<{ message_id: string }>).map((d) => `${d.message_id}.eml`)
      assert.strictEqual(ids.length, 2)
      assert.sameMembers(await world.outbox(), ids)
    } finally {
      await server.stop()
      await rm(world.dir, { recursive: true, force: true })
    }
  }, 60_000)
})

describe("a server killed with SIGKILL while scheduled messages wait", () => {
  it("restarted, it sends each of three due messages exactly once", async () => {
    const world = await setUp({ messages: { kind: "sqlite", queue: { lockExpiration: "3 seconds" } } })
    let server = await startServer(world.path)
    try {
      await whenReady(server)
      const when = inSeconds(3)
      const ids: Array<string> = []
      for (const n of [1, 2, 3]) {
        const answer = await api(server, "POST", "/emails", { ...message(`due ${n}`), scheduled_at: when })
        assert.strictEqual(answer.status, 202, JSON.stringify(answer.body))
        ids.push(String(answer.body.message_id))
      }
      server.signal("SIGKILL")
      // They come due while nothing runs.
      await pause(Math.max(0, Date.parse(when) + 1000 - Date.now()))
      assert.deepStrictEqual(await world.outbox(), [])
      server = await startServer(world.path)
      await eventually("all three in the outbox", async () => (await world.outbox()).length === 3, 20_000)
      for (const id of ids) {
        await eventually(
          `${id} recorded sent`,
          async () => {
            const status = (await api(server, "GET", `/emails/${id}`)).body.status
            return status === "sent" || status === "delivered"
          },
          10_000
        )
      }
      // Past the queue's lock expiry and its next looks: still one each.
      await pause(5000)
      assert.sameMembers(
        await world.outbox(),
        ids.map((id) => `${id}.eml`)
      )
    } finally {
      await server.stop()
      await rm(world.dir, { recursive: true, force: true })
    }
  }, 60_000)

  it("killed while sending two hundred due messages, restarted: each in the outbox exactly once", async () => {
    const world = await setUp({ messages: { kind: "sqlite", queue: { lockExpiration: "3 seconds" } } })
    let server = await startServer(world.path)
    try {
      await whenReady(server)
      const when = inSeconds(3)
      const ids: Array<string> = []
      for (const part of [0, 1]) {
        const batch = Array.from({ length: 100 }, (_, n) => ({ ...message(`busy ${part}-${n}`), scheduled_at: when }))
        const answer = await api(server, "POST", "/emails/batch", batch)
        ids.push(...(answer.body.data as Array<{ message_id: string }>).map((d) => d.message_id))
      }
      assert.strictEqual(ids.length, 200)
      await eventually("sending has begun", async () => (await world.outbox()).length > 0, 15_000, 10)
      server.signal("SIGKILL")
      const atKill = (await world.outbox()).length
      server = await startServer(world.path)
      await eventually("all two hundred in the outbox", async () => (await world.outbox()).length === 200, 60_000)
      await eventually(
        "none left waiting or sending",
        async () => {
          const waiting = await api(server, "GET", "/emails?status=scheduled&limit=100")
          const sending = await api(server, "GET", "/emails?status=sending&limit=100")
          return (
            (waiting.body.data as Array<unknown>).length === 0 && (sending.body.data as Array<unknown>).length === 0
          )
        },
        30_000
      )
      assert.sameMembers(
        await world.outbox(),
        ids.map((id) => `${id}.eml`)
      )
      assert.isBelow(atKill, 200, "the kill came while messages were still due")
    } finally {
      await server.stop()
      await rm(world.dir, { recursive: true, force: true })
    }
  }, 120_000)
})
