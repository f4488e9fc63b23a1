// Idempotency-Key on real server processes: a restart forgets no key, and two instances sharing one
// store (Redis, or one local directory) send a message once, however the retries are spread.
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type RedisServer, startAll, startRedisServer } from "@mailroom/test-support"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import * as PostmarkStandIn from "../../postmark/test/PostmarkStandIn.js"
import { ServerConfig } from "../src/index.js"
import { type ServerProcess, startServer } from "./support/serverProcess.js"

const apiKey = "mr_test_acme"
const message = (subject = "Your invoice") => ({
  from: "billing@acme.example",
  to: ["alice@example.com"],
  subject,
  body: { text: "Thank you." }
})

const writeConfig = async (dir: string, idempotency?: unknown) => {
  const path = join(dir, "mailroom.config.json")
  await writeFile(
    path,
    JSON.stringify({
      serviceDomain: "mailroom.test",
      organizations: [{ id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"], apiKeys: [apiKey] }],
      storage: { kind: "local", dir: "data/storage", signingSecret: "idempotency-test-secret" },
      provider: { kind: "outbox", dir: "outbox" },
      ...(idempotency === undefined ? {} : { idempotency })
    })
  )
  return path
}

interface Answer {
  readonly status: number
  readonly replayed: boolean
  readonly retryAfter: string | null
  readonly body: Record<string, unknown>
}

const post = async (server: ServerProcess, path: string, body: unknown, headers: Record<string, string> = {}) => {
  const response = await fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": apiKey, ...headers },
    body: JSON.stringify(body)
  })
  return {
    status: response.status,
    replayed: response.headers.get("idempotent-replayed") === "true",
    retryAfter: response.headers.get("retry-after"),
    body: (await response.json()) as Record<string, unknown>
  } satisfies Answer
}
const send = (server: ServerProcess, key: string, subject?: string) =>
  post(server, "/emails", message(subject), { "idempotency-key": key })

/** The messages the outbox has written (none yet: the outbox creates its directory on the first send). */
const emlFiles = async (dir: string) => {
  const names = await readdir(join(dir, "outbox")).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return []
    throw error
  })
  return names.filter((name) => name.endsWith(".eml")).sort()
}

describe("the idempotency section of the config file", () => {
  const base = {
    serviceDomain: "mailroom.test",
    organizations: [],
    storage: { kind: "local", dir: "data/storage", signingSecret: "x" },
    provider: { kind: "outbox", dir: "outbox" }
  }
  const parse = (idempotency: unknown, env: Record<string, string> = {}, storage: unknown = base.storage) =>
    ServerConfig.parse(
      { ...base, storage, ...(idempotency === undefined ? {} : { idempotency }) },
      { baseDir: "/srv/mailroom", env }
    )
  const problems = (idempotency: unknown, env: Record<string, string> = {}) => {
    try {
      parse(idempotency, env)
    } catch (error) {
      return (error as ServerConfig.ServerConfigError).problems
    }
    return []
  }
  const s3 = { kind: "s3", bucket: "b", region: "eu-west-1" }

  it("absent: local beside local storage, memory when storage is elsewhere", () => {
    assert.deepStrictEqual(parse(undefined).idempotency, { kind: "local", dir: "/srv/mailroom/data/idempotency" })
    assert.deepStrictEqual(parse(undefined, {}, s3).idempotency, { kind: "memory" })
    assert.deepStrictEqual(parse({ kind: "local" }).idempotency, {
      kind: "local",
      dir: "/srv/mailroom/data/idempotency"
    })
    assert.deepStrictEqual(parse({ kind: "local" }, {}, s3).idempotency, {
      kind: "local",
      dir: "/srv/mailroom/.mailroom/idempotency"
    })
    assert.deepStrictEqual(parse({ kind: "local", dir: "keys" }).idempotency, {
      kind: "local",
      dir: "/srv/mailroom/keys"
    })
    assert.deepStrictEqual(parse({ kind: "memory" }).idempotency, { kind: "memory" })
  })

  it("redis: the URL from the file, from REDIS_URL, or from the variable it names", () => {
    const url = "redis://:s3cret@cache.internal:6379/2"
    assert.deepStrictEqual(parse({ kind: "redis", url, prefix: "api1:" }, { REDIS_URL: "redis://other" }).idempotency, {
      kind: "redis",
      url,
      prefix: "api1:"
    })
    assert.deepStrictEqual(parse({ kind: "redis" }, { REDIS_URL: url }).idempotency, { kind: "redis", url })
    assert.deepStrictEqual(
      parse({ kind: "redis", url: { env: "CACHE_URL" } }, { CACHE_URL: `rediss://${url.slice(8)}` }).idempotency,
      {
        kind: "redis",
        url: `rediss://${url.slice(8)}`
      }
    )
  })

  it("a missing URL, a wrong one, an unknown field or kind is named, never echoing the password", () => {
    assert.deepStrictEqual(problems({ kind: "redis" }), [
      "idempotency.url: is required, or set the REDIS_URL environment variable"
    ])
    assert.deepStrictEqual(problems({ kind: "redis", url: { env: "CACHE_URL" } }), [
      "idempotency.url: the environment variable CACHE_URL is not set"
    ])
    assert.deepStrictEqual(problems({ kind: "redis", url: "http://:hunter2@cache" }), [
      "idempotency.url: must be a redis:// or rediss:// URL"
    ])
    assert.deepStrictEqual(problems({ kind: "redis" }, { REDIS_URL: "memcached://:hunter2@cache" }), [
      "REDIS_URL: must be a redis:// or rediss:// URL"
    ])
    assert.deepStrictEqual(problems({ kind: "local", dri: "x" }), ["idempotency.dri: is not a known field"])
    assert.deepStrictEqual(problems({ kind: "memory", url: "redis://cache" }), [
      "idempotency.url: is not a known field"
    ])
    assert.deepStrictEqual(problems({ kind: "disk" }), ["idempotency.kind: must be one of memory, local, redis"])
  })
})

describe("Idempotency-Key across a restart of the server (the default: local, beside storage)", () => {
  let dir: string
  let server: ServerProcess | undefined

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "mailroom-server-idempotency-"))
  })
  afterAll(async () => {
    await server?.stop()
    await rm(dir, { recursive: true, force: true })
  })

  it("the same key and body after a restart: 201 replayed, the same message_id, one .eml", async () => {
    const path = await writeConfig(dir)
    server = await startServer(path)
    const first = await send(server, "order-42")
    assert.strictEqual(first.status, 201, JSON.stringify(first.body))
    assert.isFalse(first.replayed)
    await server.stop()

    server = await startServer(path)
    const retried = await send(server, "order-42")
    assert.strictEqual(retried.status, 201, JSON.stringify(retried.body))
    assert.isTrue(retried.replayed)
    assert.deepStrictEqual(retried.body, first.body)
    const other = await send(server, "order-42", "Another subject")
    assert.strictEqual(other.status, 409, JSON.stringify(other.body))
    assert.deepStrictEqual(await emlFiles(dir), [`${first.body.message_id}.eml`])
    // Beside the storage directory, as the server's README says.
    assert.strictEqual((await readdir(join(dir, "data", "idempotency"))).filter((n) => n.endsWith(".json")).length, 1)
  })

  it("with memory idempotency the server says at start-up that a restart forgets the keys", async () => {
    const memoryDir = await mkdtemp(join(tmpdir(), "mailroom-server-idempotency-memory-"))
    const memory = await startServer(await writeConfig(memoryDir, { kind: "memory" }))
    try {
      await memory.waitFor(/kept in memory.*"kind": "redis"/).catch(() => undefined)
      assert.include(memory.output().stderr, "Idempotency-Keys are kept in memory")
    } finally {
      await memory.stop()
      await rm(memoryDir, { recursive: true, force: true })
    }
  })
})

/** The same key sent to both instances at once, then to each in turn: one message in all. */
const sendOnceAcross = async (dir: string, a: ServerProcess, b: ServerProcess) => {
  const keys = Array.from({ length: 5 }, (_, i) => `two-instances-${Date.now()}-${i}`)
  const before = (await emlFiles(dir)).length
  for (const key of keys) {
    const together = await Promise.all([a, b, a, b, a, b].map((server) => send(server, key)))
    const sent = together.filter((answer) => answer.status === 201 && !answer.replayed)
    assert.strictEqual(sent.length, 1, `one send, not ${sent.length}: ${JSON.stringify(together)}`)
    const messageId = sent[0]?.body.message_id
    for (const answer of together.filter((x) => x !== sent[0])) {
      if (answer.status === 201) {
        assert.isTrue(answer.replayed)
        assert.strictEqual(answer.body.message_id, messageId)
      } else {
        assert.strictEqual(answer.status, 409, JSON.stringify(answer.body))
      }
    }
    for (const server of [a, b]) {
      const again = await send(server, key)
      assert.strictEqual(again.status, 201, JSON.stringify(again.body))
      assert.isTrue(again.replayed)
      assert.strictEqual(again.body.message_id, messageId)
    }
  }
  assert.strictEqual((await emlFiles(dir)).length - before, keys.length, "exactly one .eml per key")
}

describe("two server processes on one config and one Redis", () => {
  let dir: string
  let redis: RedisServer
  let a: ServerProcess
  let b: ServerProcess

  beforeAll(async () => {
    redis = await startRedisServer()
    dir = await mkdtemp(join(tmpdir(), "mailroom-server-two-redis-"))
    const path = await writeConfig(dir, { kind: "redis" })
    // No url in the file: it comes from REDIS_URL.
    ;[a, b] = await Promise.all([
      startServer(path, { REDIS_URL: redis.url }),
      startServer(path, { REDIS_URL: redis.url })
    ])
  }, 60_000)
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()])
    await redis?.dispose()
    if (dir !== undefined) await rm(dir, { recursive: true, force: true })
  })

  it("the same key sent to both at once and then to each in turn sends one message", () => sendOnceAcross(dir, a, b))

  it("presigning one file name 200 times on each instance at once never repeats a key", async () => {
    const presign = (server: ServerProcess) =>
      post(server, "/attachments/presign", { filename: "invoice.pdf", content_type: "application/pdf" })
    const answers = await Promise.all(Array.from({ length: 400 }, (_, i) => presign(i % 2 === 0 ? a : b)))
    for (const answer of answers) assert.strictEqual(answer.status, 201, JSON.stringify(answer.body))
    const keys = answers.map((answer) => answer.body.key as string)
    const repeated = keys.filter((key, i) => keys.indexOf(key) !== i)
    assert.deepStrictEqual(repeated, [], "no key is handed out twice")
  })

  it("while Redis is down a send with a key is a 503 and nothing is sent; once it is back, sends work", async () => {
    const before = await emlFiles(dir)
    await redis.stop()
    const refused = await send(a, `outage-${Date.now()}`)
    assert.strictEqual(refused.status, 503, JSON.stringify(refused.body))
    assert.match(String(refused.body.error), /nothing was sent/)
    assert.strictEqual(refused.retryAfter, "5", "an outage says when to try again, as the message database's does")
    assert.deepStrictEqual(await emlFiles(dir), before)
    await redis.start()
    // Each instance reconnects on its own, within its backoff (at most ~2 s).
    const untilUp = async (server: ServerProcess, key: string) => {
      let answer = await send(server, key)
      for (let i = 0; answer.status === 503 && i < 50; i++) {
        await new Promise((resolve) => setTimeout(resolve, 200))
        answer = await send(server, key)
      }
      return answer
    }
    const key = `after-outage-${Date.now()}`
    const first = await untilUp(b, key)
    assert.strictEqual(first.status, 201, JSON.stringify(first.body))
    const replayed = await untilUp(a, key)
    assert.strictEqual(replayed.status, 201, JSON.stringify(replayed.body))
    assert.isTrue(replayed.replayed)
    assert.strictEqual(replayed.body.message_id, first.body.message_id)
    assert.strictEqual((await emlFiles(dir)).length, before.length + 1)
  })
})

describe("two server processes on one config and one local idempotency directory", () => {
  let dir: string
  let a: ServerProcess
  let b: ServerProcess

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "mailroom-server-two-local-"))
    const path = await writeConfig(dir, { kind: "local", dir: "shared-idempotency" })
    ;[a, b] = await startAll([
      { start: () => startServer(path), stop: (s) => s.stop() },
      { start: () => startServer(path), stop: (s) => s.stop() }
    ])
  }, 60_000)
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()])
    if (dir !== undefined) await rm(dir, { recursive: true, force: true })
  })

  it("the same key sent to both at once and then to each in turn sends one message", () => sendOnceAcross(dir, a, b))
})

describe("Redis dying between a send and the record of its outcome", () => {
  let dir: string
  let redis: RedisServer
  let standIn: PostmarkStandIn.StandIn
  let server: ServerProcess

  beforeAll(async () => {
    ;[redis, standIn] = await startAll([
      { start: startRedisServer, stop: (r) => r.dispose() },
      { start: () => PostmarkStandIn.start(), stop: (s) => s.close() }
    ])
    dir = await mkdtemp(join(tmpdir(), "mailroom-server-redis-dies-"))
    const path = join(dir, "mailroom.config.json")
    await writeFile(
      path,
      JSON.stringify({
        serviceDomain: "mailroom.test",
        organizations: [{ id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"], apiKeys: [apiKey] }],
        storage: { kind: "local", dir: "storage", signingSecret: "idempotency-test-secret" },
        provider: { kind: "postmark", serverToken: standIn.token, requestHost: standIn.host, useHttps: false },
        idempotency: { kind: "redis", url: redis.url }
      })
    )
    server = await startServer(path)
  }, 60_000)
  afterAll(async () => {
    await server?.stop()
    await Promise.all([redis?.dispose(), standIn?.close()])
    if (dir !== undefined) await rm(dir, { recursive: true, force: true })
  })

  it("logs that the message was sent, naming it, and never that nothing was sent", async () => {
    let answer = () => {}
    standIn.failNext({ hold: new Promise<void>((resolve) => (answer = resolve)) })
    const reached = standIn.nextRequest()
    const sent = send(server, `redis-dies-${Date.now()}`)
    // The provider has the message; Redis goes before it answers, so the outcome cannot be recorded.
    await reached
    await redis.stop()
    const logged = server.waitFor(/\[mailroom\].*Idempotency-Key/, 20_000)
    answer()
    const response = await sent
    assert.strictEqual(response.status, 201, JSON.stringify(response.body))
    const messageId = String(response.body.message_id)
    // Postmark holds it with mailroom's id in its Metadata, as core hands every provider.
    const metadata = standIn.accepted.at(-1)?.fields.Metadata as Record<string, string> | undefined
    assert.strictEqual(metadata?.["mailroom-message"], messageId)
    const line = await logged
    assert.include(line, `message ${messageId} was sent, but its Idempotency-Key could not be updated`)
    const { stdout, stderr } = server.output()
    assert.notMatch(stdout + stderr, /nothing was sent/, "no line says nothing was sent")
  }, 60_000)
})
