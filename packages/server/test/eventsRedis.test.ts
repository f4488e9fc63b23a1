// The webhook queue on Redis: the config's events.queue, one connection shared with the idempotency
// store, and real server processes on one Redis, where a killed instance's events are delivered by
// another, each exactly once (receivers started here, requests verified with standardwebhooks).
import { randomUUID } from "node:crypto"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { MailEvent } from "@mailroom/core"
import { type ReceivedRequest, startWebhookReceiver, type WebhookReceiver } from "@mailroom/core/testing"
import { type RedisServer, startRedisServer } from "@mailroom/test-support"
import { createClient } from "redis"
import { Webhook } from "standardwebhooks"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { Server, ServerConfig } from "../src/index.js"
import { startServer } from "./support/serverProcess.js"

const secret = `whsec_${Buffer.from("acme-webhook-signing-key-32bytes").toString("base64")}`
const apiKey = "mr_test_acme"

const configFor = (receiver: WebhookReceiver, queue: Record<string, unknown>, idempotency?: unknown) => ({
  port: 0,
  serviceDomain: "mailroom.test",
  organizations: [{ id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"], apiKeys: [apiKey] }],
  storage: { kind: "local", dir: "storage", signingSecret: "events-redis-test" },
  provider: { kind: "outbox", dir: "outbox" },
  ...(idempotency === undefined ? {} : { idempotency }),
  events: {
    webhooks: [{ organization: "org_acme", url: receiver.url, secret }],
    queue,
    retry: { firstDelay: "2 seconds", maxDelay: "2 seconds" }
  }
})

const send = async (base: string, to: string) => {
  const response = await fetch(`${base}/emails`, {
    method: "POST",
    headers: { "x-api-key": apiKey, "content-type": "application/json" },
    body: JSON.stringify({ from: "hi@acme.example", to: [to], subject: "Hello", body: { text: "Hi" } })
  })
  assert.strictEqual(response.status, 201, await response.clone().text())
  return ((await response.json()) as { message_id: string }).message_id
}

/** Each request verified with the reference implementation, and its payload. */
const verified = (requests: ReadonlyArray<ReceivedRequest>) =>
  requests.map((request) => new Webhook(secret).verify(request.body, request.headers) as MailEvent.MailEvent)

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

let redis: RedisServer
let dir: string
/** Closes what a test started once it has finished, whichever way. */
type Cleanup = (fn: () => Promise<void>) => void
const receiver = async (cleanup: Cleanup, statuses: ReadonlyArray<number | "hang"> = []) => {
  const started = await startWebhookReceiver({ statuses })
  cleanup(() => started.close())
  return started
}
const server = async (cleanup: Cleanup, path: string) => {
  const started = await startServer(path, { REDIS_URL: redis.url })
  cleanup(() => started.stop())
  return started
}
beforeAll(async () => {
  redis = await startRedisServer()
  dir = await mkdtemp(join(tmpdir(), "mailroom-events-redis-"))
})
afterAll(async () => {
  await redis?.dispose()
  if (dir !== undefined) await rm(dir, { recursive: true, force: true })
})

/** Redis clients connected now, other than the one asking. */
const redisClients = async () => {
  const client = createClient({ url: redis.url })
  await client.connect()
  try {
    return (await client.clientList()).length - 1
  } finally {
    client.destroy()
  }
}

describe("events.queue on Redis in the config file", () => {
  const base = { serviceDomain: "mailroom.test", organizations: [{ id: "org_acme", slug: "acme" }] }
  const withQueue = (queue: unknown, idempotency?: unknown) => ({
    ...base,
    storage: { kind: "local", dir: "storage", signingSecret: "x" },
    provider: { kind: "outbox", dir: "outbox" },
    ...(idempotency === undefined ? {} : { idempotency }),
    events: { webhooks: [{ organization: "org_acme", url: "https://acme.example/hook", secret }], queue }
  })
  const parse = (queue: unknown, env: Record<string, string> = {}, idempotency?: unknown) =>
    ServerConfig.parse(withQueue(queue, idempotency), { baseDir: "/srv/mailroom", env }).events?.queue
  const problems = (queue: unknown, env: Record<string, string> = {}, idempotency?: unknown) => {
    try {
      ServerConfig.parse(withQueue(queue, idempotency), { baseDir: "/srv/mailroom", env })
    } catch (error) {
      return (error as ServerConfig.ServerConfigError).problems
    }
    throw new Error("the config was accepted")
  }

  it("the URL from the file, from the variable it names, from the idempotency section's Redis, else REDIS_URL", () => {
    const url = "redis://:s3cret@cache.internal:6379/2"
    const keys = "redis://keys.internal:6379"
    assert.deepStrictEqual(parse({ kind: "redis", url, prefix: "api1:" }, { REDIS_URL: keys }), {
      kind: "redis",
      url,
      prefix: "api1:"
    })
    assert.deepStrictEqual(parse({ kind: "redis", url: { env: "QUEUE_URL" } }, { QUEUE_URL: url }), {
      kind: "redis",
      url
    })
    assert.deepStrictEqual(parse({ kind: "redis" }, { REDIS_URL: keys }, { kind: "redis", url }), {
      kind: "redis",
      url
    })
    assert.deepStrictEqual(parse({ kind: "redis" }, { REDIS_URL: url }), { kind: "redis", url })
    assert.deepStrictEqual(parse(undefined), { kind: "local", dir: "/srv/mailroom/.mailroom/events" })
  })

  it("a missing URL, a wrong one, an unknown field or kind is named, never echoing the password", () => {
    assert.deepStrictEqual(problems({ kind: "redis" }), [
      "events.queue.url: is required, or set the REDIS_URL environment variable"
    ])
    assert.deepStrictEqual(problems({ kind: "redis", url: { env: "QUEUE_URL" } }), [
      "events.queue.url: the environment variable QUEUE_URL is not set"
    ])
    assert.deepStrictEqual(problems({ kind: "redis", url: "http://:hunter2@cache" }), [
      "events.queue.url: must be a redis:// or rediss:// URL"
    ])
    assert.deepStrictEqual(problems({ kind: "redis" }, { REDIS_URL: "memcached://:hunter2@cache" }), [
      "REDIS_URL: must be a redis:// or rediss:// URL"
    ])
    assert.deepStrictEqual(problems({ kind: "redis", url: "redis://cache", prefx: "a:" }), [
      "events.queue.prefx: is not a known field"
    ])
    assert.deepStrictEqual(problems({ kind: "memory", url: "redis://cache" }), [
      "events.queue.url: is not a known field"
    ])
    assert.deepStrictEqual(problems({ kind: "disk" }), ["events.queue.kind: must be one of local, memory, redis"])
  })
})

describe("one Redis for Idempotency-Keys and the queue", () => {
  const clientsOf = async (cleanup: Cleanup, queue: Record<string, unknown>, idempotency: unknown) => {
    const home = await mkdtemp(join(dir, "connections-"))
    const config = configFor(await receiver(cleanup), queue, idempotency)
    const before = await redisClients()
    const server = await Server.start(ServerConfig.parse(config, { baseDir: home, env: {} }), { log: () => {} })
    try {
      return (await redisClients()) - before
    } finally {
      await server.close()
    }
  }

  it("the same URL is one connection; another URL is another", async ({ onTestFinished }) => {
    assert.strictEqual(await clientsOf(onTestFinished, { kind: "redis" }, { kind: "redis", url: redis.url }), 1)
    assert.strictEqual(
      await clientsOf(onTestFinished, { kind: "redis", url: `${redis.url}/1` }, { kind: "redis", url: redis.url }),
      2
    )
  })
})

// Concurrent: each test has a queue (a key prefix), receivers and servers of its own, and most of
// their time is spent waiting on retry delays and lock expiries, which overlap.
describe.concurrent("two server processes on one Redis", () => {
  const startTwo = async (cleanup: Cleanup, acme: WebhookReceiver) => {
    const home = await mkdtemp(join(dir, "two-"))
    const path = join(home, "mailroom.config.json")
    // A queue of its own per test; the URL comes from the idempotency section, itself from REDIS_URL.
    await writeFile(
      path,
      JSON.stringify(configFor(acme, { kind: "redis", prefix: `t:${randomUUID()}:` }, { kind: "redis" }))
    )
    const started = await Promise.all([server(cleanup, path), server(cleanup, path)])
    return { started, path }
  }

  it("the instance making the attempts is killed before one succeeds: the other delivers the same webhook-id, nothing lost", async ({
    onTestFinished
  }) => {
    const acme = await receiver(onTestFinished, [500, 500])
    const {
      started: [a, b]
    } = await startTwo(onTestFinished, acme)
    if (a === undefined || b === undefined) throw new Error("two servers")
    // Whichever instance takes the event logs its failed attempt; that one is killed.
    const attempted = Promise.any([
      a.waitFor(/webhook attempt 1 of event/, 15_000).then(() => a),
      b.waitFor(/webhook attempt 1 of event/, 15_000).then(() => b)
    ])
    const messageId = await send(a.url, "alice@example.com")
    await acme.waitFor(1)
    const victim = await attempted
    const survivor = victim === a ? b : a
    const retried = survivor.waitFor(/webhook attempt 2 of event/, 30_000)
    // Time for the victim to record the retry (due 2 s later), then killed outright: no shutdown.
    await sleep(300)
    victim.signal("SIGKILL")
    const requests = await acme.waitFor(3, 45_000)
    await retried
    assert.deepStrictEqual(
      requests.map((r) => r.status),
      [500, 500, 200]
    )
    const ids = new Set(requests.map((r) => r.headers["webhook-id"]))
    assert.strictEqual(ids.size, 1)
    for (const payload of verified(requests)) {
      assert.strictEqual(payload.id, [...ids][0])
      assert.strictEqual(payload.type, "delivered")
      assert.strictEqual(payload.message_id, messageId)
      assert.strictEqual(payload.recipient, "alice@example.com")
      assert.strictEqual(payload.organization_id, "org_acme")
    }
    // Longer than a poll interval and a retry delay: nothing is delivered again.
    await sleep(3000)
    assert.strictEqual(acme.requests.length, 3)
  }, 60_000)

  it("20 sends spread over both, each delivered exactly once to a receiver answering 200", async ({
    onTestFinished
  }) => {
    const acme = await receiver(onTestFinished)
    const {
      started: [a, b]
    } = await startTwo(onTestFinished, acme)
    if (a === undefined || b === undefined) throw new Error("two servers")
    const messageIds = await Promise.all(
      Array.from({ length: 20 }, (_, i) => send((i % 2 === 0 ? a : b).url, `user${i}@example.com`))
    )
    await acme.waitFor(20, 15_000)
    // Longer than a poll interval: a second delivery by the other instance would have happened by now.
    await sleep(2000)
    assert.strictEqual(acme.requests.length, 20)
    const payloads = verified(acme.requests)
    assert.sameMembers(
      payloads.map((p) => p.message_id),
      messageIds
    )
    assert.strictEqual(new Set(acme.requests.map((r) => r.headers["webhook-id"])).size, 20)
    for (const [i, payload] of payloads.entries()) {
      assert.strictEqual(payload.type, "delivered")
      assert.strictEqual(payload.id, acme.requests[i]?.headers["webhook-id"])
    }
  })

  it("an instance killed while its receiver stalls: once the attempt's lock lapses, another delivers it", async ({
    onTestFinished
  }) => {
    const acme = await receiver(onTestFinished, ["hang"])
    const home = await mkdtemp(join(dir, "stall-"))
    const path = join(home, "mailroom.config.json")
    await writeFile(path, JSON.stringify(configFor(acme, { kind: "redis", prefix: `t:${randomUUID()}:` })))
    const a = await server(onTestFinished, path)
    const messageId = await send(a.url, "alice@example.com")
    await acme.waitFor(1)
    a.signal("SIGKILL")
    await server(onTestFinished, path)
    const killed = Date.now()
    // The lock expires 20 s after its last renewal; instances look for lapsed locks every 5 s. The
    // bound leaves a loaded machine room, and is half the 90 s of Effect's own lock expiry.
    const requests = await acme.waitFor(2, 60_000)
    assert.isAtMost(Date.now() - killed, 45_000)
    assert.deepStrictEqual(
      requests.map((r) => r.status),
      ["hang", 200]
    )
    assert.strictEqual(requests[0]?.headers["webhook-id"], requests[1]?.headers["webhook-id"])
    const [payload] = verified([requests[1] as ReceivedRequest])
    assert.strictEqual(payload?.message_id, messageId)
    assert.strictEqual(payload?.type, "delivered")
  }, 90_000)
})
