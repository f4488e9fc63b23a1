// RedisQueueStore under core's WebhookDelivery against a real redis-server: what a receiver gets
// (retries with one webhook-id, verified with standardwebhooks), and two instances on one queue
// delivering each event once.
import { randomUUID } from "node:crypto"
import { assert, it } from "@effect/vitest"
import { MailEvent, MailEvents, Organizations, WebhookDelivery } from "@mailroom/core"
import {
  expectConfigError,
  PersistedQueueStoreSuite,
  startWebhookReceiver,
  type WebhookReceiver
} from "@mailroom/core/testing"
import { startRedisServer } from "@mailroom/test-support"
import { Config, ConfigProvider, Effect, Exit, Layer, Redacted } from "effect"
import { PersistedQueue } from "effect/persistence"
import { createClient } from "redis"
import { Webhook } from "standardwebhooks"
import { afterAll, describe } from "vitest"
import { RedisConnection, RedisIdempotencyStore, RedisQueueStore } from "../src/index.js"

const redis = await startRedisServer()
afterAll(() => redis.dispose())

PersistedQueueStoreSuite("redis", {
  layer: RedisQueueStore.layer({ url: redis.url, prefix: `suite:${randomUUID()}:` }),
  sharedByInstances: true
})

const secret = `whsec_${Buffer.from("redis-queue-webhook-signing-key!").toString("base64")}`
const organizations = Layer.succeed(
  Organizations.Organizations,
  Organizations.makeStatic({
    serviceDomain: "mailroom.test",
    organizations: [{ id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"] }]
  })
)

const event = (recipient: string) =>
  MailEvent.make({
    type: "delivered",
    provider: "test",
    messageId: `msg-${recipient}`,
    recipient,
    occurredAt: "2026-01-02T03:04:05.000Z",
    organizationId: "org_acme",
    raw: { recipient }
  })

/** An instance: webhook delivery from the queue under `prefix`, on a connection of its own. */
const instance = (receiver: WebhookReceiver, prefix: string, fetch?: typeof globalThis.fetch) =>
  WebhookDelivery.layer({
    endpoints: [{ organizationId: "org_acme", url: receiver.url, secret }],
    retry: { firstDelay: "100 millis", maxDelay: "300 millis" },
    ...(fetch === undefined ? {} : { fetch })
  }).pipe(
    Layer.provide(organizations),
    Layer.provide(PersistedQueue.layer),
    Layer.provide(RedisQueueStore.layer({ url: redis.url, prefix }))
  )

const publish = (events: ReadonlyArray<MailEvent.Unrouted>) =>
  Effect.flatMap(MailEvents.MailEvents, (mailEvents) => mailEvents.publish(events))

const receiver = (statuses: ReadonlyArray<number> = []) =>
  Effect.acquireRelease(
    Effect.promise(() => startWebhookReceiver({ statuses })),
    (r) => Effect.promise(() => r.close())
  )

const keys = (pattern: string) =>
  Effect.promise(async () => {
    const client = createClient({ url: redis.url })
    await client.connect()
    try {
      return (await client.keys(pattern)).sort()
    } finally {
      client.destroy()
    }
  })

describe("RedisQueueStore", () => {
  it.live("a receiver answering 500 twice gets the event a third time, with the same webhook-id and body", () =>
    Effect.gen(function* () {
      const acme = yield* receiver([500, 500])
      const prefix = `t:${randomUUID()}:`
      const delivered = event("alice@example.com")
      const { requests, left } = yield* Effect.gen(function* () {
        yield* publish([delivered])
        const requests = yield* Effect.promise(() => acme.waitFor(3))
        // The receiver has answered; give the worker a moment to record it (closing the instance during
        // an attempt puts the event back, to be sent again).
        yield* Effect.sleep("500 millis")
        return { requests, left: yield* keys(`${prefix}*`) }
      }).pipe(Effect.provide(instance(acme, prefix)))
      assert.deepStrictEqual(
        requests.map((r) => r.status),
        [500, 500, 200]
      )
      const verifier = new Webhook(secret)
      for (const request of requests) {
        assert.strictEqual(request.headers["webhook-id"], delivered.id)
        assert.strictEqual(request.body, requests[0]?.body)
        const payload = verifier.verify(request.body, request.headers) as MailEvent.MailEvent
        assert.strictEqual(payload.id, delivered.id)
        assert.strictEqual(payload.type, "delivered")
        assert.strictEqual(payload.recipient, "alice@example.com")
      }
      // The queue lived in Redis under the prefix; once delivered, only its de-duplication record is left.
      assert.deepStrictEqual(left, [`${prefix}mailroom-webhooks/org_acme:ids`])
    }).pipe(Effect.scoped)
  )

  it.live("two instances, each with its own connection, on one queue: 20 events, each delivered exactly once", () =>
    Effect.gen(function* () {
      const acme = yield* receiver()
      const prefix = `t:${randomUUID()}:`
      const events = Array.from({ length: 20 }, (_, i) => event(`user${i}@example.com`))
      // Which instance made each request: both must take part for the test to mean anything.
      const made = { a: 0, b: 0 }
      const counting =
        (name: keyof typeof made): typeof globalThis.fetch =>
        (input, init) => {
          made[name]++
          return globalThis.fetch(input, init)
        }
      yield* Effect.gen(function* () {
        const b = yield* Layer.build(instance(acme, prefix, counting("b")))
        yield* Effect.forEach(events, (e, i) => (i % 2 === 0 ? publish([e]) : Effect.provide(publish([e]), b)), {
          discard: true
        })
        yield* Effect.promise(() => acme.waitFor(20))
        // Longer than a poll interval: a second delivery of anything would have happened by now.
        yield* Effect.sleep("1500 millis")
      }).pipe(Effect.provide(instance(acme, prefix, counting("a"))))
      assert.strictEqual(acme.requests.length, 20)
      assert.sameMembers(
        acme.requests.map((r) => r.headers["webhook-id"]),
        events.map((e) => e.id)
      )
      const verifier = new Webhook(secret)
      for (const request of acme.requests) {
        const payload = verifier.verify(request.body, request.headers) as MailEvent.MailEvent
        assert.strictEqual(payload.id, request.headers["webhook-id"])
      }
      assert.isAbove(made.a, 0)
      assert.isAbove(made.b, 0)
    }).pipe(Effect.scoped)
  )

  it.live("while Redis is down queuing fails at once; once it is back, events are queued and delivered again", () =>
    Effect.gen(function* () {
      const acme = yield* receiver()
      const prefix = `t:${randomUUID()}:`
      const during = event("during@example.com")
      const after = event("after@example.com")
      yield* Effect.gen(function* () {
        yield* Effect.promise(() => redis.stop())
        const started = Date.now()
        const refused = yield* Effect.flip(publish([during]))
        // What the HTTP handler answers 503 to, so a provider sends its webhook again later.
        assert.strictEqual(refused._tag, "MailEventsError")
        assert.isBelow(Date.now() - started, 1_000, "refused at once, not queued for later")
        yield* Effect.promise(() => redis.start())
        const deadline = Date.now() + 10_000
        let outcome = yield* Effect.exit(publish([after]))
        while (Exit.isFailure(outcome) && Date.now() < deadline) {
          yield* Effect.sleep("200 millis")
          outcome = yield* Effect.exit(publish([after]))
        }
        assert.isTrue(Exit.isSuccess(outcome), "events are queued again once Redis is back")
        yield* Effect.promise(() => acme.waitFor(1, 10_000))
        yield* Effect.sleep("1500 millis")
      }).pipe(Effect.provide(instance(acme, prefix)))
      // Only the event queued while Redis was up was delivered; the refused one was never half-queued.
      assert.deepStrictEqual(
        acme.requests.map((r) => r.headers["webhook-id"]),
        [after.id]
      )
    }).pipe(Effect.scoped)
  )

  it.live("a Redis that cannot be reached at start fails the layer, naming it without the password", () =>
    Effect.gen(function* () {
      const closed = Redacted.make("redis://mailroom:s3cret@127.0.0.1:1/0")
      const exit = yield* Effect.exit(Layer.build(RedisQueueStore.layer({ url: closed })).pipe(Effect.scoped))
      assert.isTrue(Exit.isFailure(exit))
      const error = Exit.isFailure(exit) ? (exit.cause.reasons[0] as { error?: Error }).error : undefined
      assert.strictEqual((error as { _tag?: string })?._tag, "Unavailable")
      assert.include(error?.message, "Redis at redis://127.0.0.1:1/0 cannot be reached")
      assert.notInclude(error?.message, "s3cret")
    })
  )

  it.live("one RedisConnection layer given to a queue and an idempotency store is one connection", () =>
    Effect.gen(function* () {
      const name = `conn-${randomUUID()}`
      const connection = RedisConnection.layer({ url: redis.url })
      const clients = Effect.promise(async () => {
        const client = createClient({ url: redis.url })
        await client.connect()
        try {
          return (await client.clientList()).length - 1
        } finally {
          client.destroy()
        }
      })
      const before = yield* clients
      yield* Effect.gen(function* () {
        assert.strictEqual((yield* clients) - before, 1)
      }).pipe(
        Effect.provide(
          // Provided separately, as an application wires two stores: the layer is built once per value.
          Layer.mergeAll(
            RedisQueueStore.layerFromClient({ prefix: `${name}:a:` }).pipe(Layer.provide(connection)),
            RedisIdempotencyStore.layerFromClient({ prefix: `${name}:b:` }).pipe(Layer.provide(connection))
          )
        )
      )
    })
  )

  it.effect("unusable durations fail layerFromClient, layer and layerConfig with a ConfigError naming the option", () =>
    Effect.gen(function* () {
      const closed = "redis://127.0.0.1:1/0"
      for (const [bad, option] of [
        [{ pollInterval: 0 }, "pollInterval"],
        [{ lockExpiration: "Infinity" }, "lockExpiration"],
        // A lock renewed no sooner than it lapses would hand a live attempt to another worker.
        [{ lockRefreshInterval: "20 seconds", lockExpiration: "20 seconds" }, "lockRefreshInterval"]
      ] as const) {
        yield* expectConfigError(
          RedisQueueStore.layerFromClient(bad).pipe(Layer.provide(RedisConnection.layer({ url: redis.url }))),
          option
        )
        yield* expectConfigError(RedisQueueStore.layer({ url: closed, ...bad }), option)
      }
      yield* expectConfigError(
        RedisQueueStore.layerConfig({ url: Config.Redacted("REDIS_URL"), lockExpiration: Config.Duration("LOCK_TTL") }),
        "lockRefreshInterval"
      ).pipe(
        Effect.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({ REDIS_URL: closed, LOCK_TTL: "1 second" })))
      )
    })
  )
})
