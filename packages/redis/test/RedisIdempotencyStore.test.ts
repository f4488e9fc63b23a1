// RedisIdempotencyStore against a real redis-server: the conformance suite, then what only a shared
// store must do: two instances (two connections) act as one, and an outage refuses sends, never doubles them.
import { randomUUID } from "node:crypto"
import { assert, it } from "@effect/vitest"
import { EmailProvider, IdempotencyStore, Mailroom, ObjectStore, Organizations } from "@mailroom/core"
import { expectConfigError, IdempotencyStoreSuite } from "@mailroom/core/testing"
import { startRedisServer } from "@mailroom/test-support"
import { Config, ConfigProvider, Duration, Effect, Exit, Layer, Logger, Redacted } from "effect"
import { createClient } from "redis"
import { afterAll, describe } from "vitest"
import { RedisConnection, RedisIdempotencyStore } from "../src/index.js"

// Started while tests are collected: the suite's layers need its URL.
const redis = await startRedisServer()
afterAll(() => redis.dispose())

// One prefix per retention, so two stores built alike share their keys, as two instances would.
const suiteRun = randomUUID()
IdempotencyStoreSuite("redis", {
  layer: ({ retention }) =>
    RedisIdempotencyStore.layer({
      url: redis.url,
      retention,
      prefix: `suite:${suiteRun}:${Duration.toMillis(retention)}:`
    }),
  sharedByInstances: true
})

const scope = { orgId: "org_acme", key: "order-42" }
const response = {
  message_id: "m-1",
  from: "billing@acme.example",
  to: ["alice@example.com"],
  subject: "Your invoice",
  attachments: []
}

/** Runs `use` on a store with its own connection, closed afterwards. */
const withStore = <A, E>(
  options: Partial<RedisIdempotencyStore.ConfigOptions>,
  use: (store: IdempotencyStore.IdempotencyStore) => Effect.Effect<A, E>
) =>
  Effect.flatMap(IdempotencyStore.IdempotencyStore, use).pipe(
    Effect.provide(RedisIdempotencyStore.layer({ url: redis.url, ...options }))
  )

const connect = async () => {
  const client = createClient({ url: redis.url })
  await client.connect()
  return client
}

/** A plain client, to look at what the store wrote without going through it. */
const raw = <A>(f: (client: Awaited<ReturnType<typeof connect>>) => Promise<A>) =>
  Effect.promise(async () => {
    const client = await connect()
    try {
      return await f(client)
    } finally {
      client.destroy()
    }
  })

describe("RedisIdempotencyStore", () => {
  it.live(
    "entries are JSON under the prefix, with the organisation and key readable, expiring after the retention",
    () =>
      Effect.gen(function* () {
        const prefix = `t:${randomUUID()}:`
        yield* withStore({ prefix, retention: "1 hour" }, (store) =>
          Effect.gen(function* () {
            assert.isUndefined(yield* store.reserve({ orgId: "org:acme", key: "a/b c" }, "f"))
            yield* store.complete(scope, { _tag: "Completed", fingerprint: "f", response })
          })
        )
        const keys = yield* raw((client) => client.keys(`${prefix}*`))
        assert.deepStrictEqual([...keys].sort(), [`${prefix}org%3Aacme:a%2Fb%20c`, `${prefix}org_acme:order-42`])
        const stored = yield* raw((client) => client.get(`${prefix}org_acme:order-42`))
        assert.deepStrictEqual(JSON.parse(stored ?? "null"), { _tag: "Completed", fingerprint: "f", response })
        const ttl = yield* raw((client) => client.pTTL(`${prefix}org_acme:order-42`))
        assert.isAbove(ttl, 3_590_000)
        assert.isAtMost(ttl, 3_600_000)
      })
  )

  it.live("a value mailroom did not write is Unavailable, never a free key", () =>
    Effect.gen(function* () {
      const prefix = `t:${randomUUID()}:`
      yield* raw((client) => client.set(`${prefix}org_acme:order-42`, "not an entry"))
      const error = yield* withStore({ prefix }, (store) => Effect.flip(store.reserve(scope, "f")))
      assert.strictEqual(error._tag, "Unavailable")
    })
  )

  it.live("a Redis that cannot be reached at start fails the layer, naming it without the password", () =>
    Effect.gen(function* () {
      const closed = `redis://mailroom:s3cret@127.0.0.1:1/0`
      const exit = yield* Effect.exit(withStore({ url: Redacted.make(closed) }, () => Effect.void))
      assert.isTrue(Exit.isFailure(exit))
      const message = String(Exit.isFailure(exit) ? (exit.cause.reasons[0] as { error?: Error }).error?.message : "")
      assert.include(message, "Redis at redis://127.0.0.1:1/0 cannot be reached")
      assert.notInclude(message, "s3cret")
    })
  )

  it.live(
    "while Redis is down a send with a key is refused as Unavailable and nothing is sent; after it is back, sends work again",
    () =>
      Effect.gen(function* () {
        const provider = EmailProvider.makeMemory()
        const client = Mailroom.make({
          provider: Layer.succeed(EmailProvider.EmailProvider, provider),
          store: Layer.succeed(ObjectStore.ObjectStore, ObjectStore.makeMemory()),
          organizations: Layer.succeed(
            Organizations.Organizations,
            Organizations.makeStatic({
              serviceDomain: "mailroom.test",
              organizations: [{ id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"] }]
            })
          ),
          idempotency: RedisIdempotencyStore.layer({
            url: redis.url,
            prefix: `t:${randomUUID()}:`,
            timeout: "2 seconds"
          })
        })
        yield* Effect.addFinalizer(() => Effect.promise(() => client.dispose()))
        const request = {
          from: "billing@acme.example",
          to: ["alice@example.com"],
          subject: "Hi",
          body: { text: "Hello" }
        }
        const send = (key: string) =>
          Effect.tryPromise(() => client.send({ orgId: "org_acme" }, request, { idempotencyKey: key }))
        yield* send("before")
        assert.strictEqual(provider.sent.length, 1)

        yield* Effect.promise(() => redis.stop())
        const started = Date.now()
        const refused = yield* Effect.flip(send("during"))
        assert.strictEqual((refused.cause as { _tag?: string })._tag, "Unavailable")
        assert.isBelow(Date.now() - started, 1_000, "refused at once, not after the 2 s command timeout")
        assert.strictEqual(provider.sent.length, 1, "nothing was sent while the store was down")

        yield* Effect.promise(() => redis.start())
        // The connection comes back on its own (backoff of at most ~2 s).
        const deadline = Date.now() + 10_000
        let outcome = yield* Effect.exit(send("after"))
        while (Exit.isFailure(outcome) && Date.now() < deadline) {
          yield* Effect.sleep(Duration.millis(200))
          outcome = yield* Effect.exit(send("after"))
        }
        assert.isTrue(Exit.isSuccess(outcome), "sends work again once Redis is back")
        assert.strictEqual(provider.sent.length, 2)
        assert.isTrue((yield* send("after")).replayed)
        // The refused request left no trace (no command queued while offline ran later): its key is free.
        assert.isFalse((yield* send("during")).replayed)
        assert.strictEqual(provider.sent.length, 3)
      }).pipe(Effect.scoped)
  )

  it.live("an outage is logged once per ten seconds, not once per refused send", () =>
    Effect.gen(function* () {
      const lines: Array<string> = []
      const logger = Logger.make(({ message }) => {
        lines.push((Array.isArray(message) ? message : [message]).map(String).join(" "))
      })
      yield* withStore({ prefix: `t:${randomUUID()}:` }, (store) =>
        Effect.gen(function* () {
          yield* Effect.promise(() => redis.stop())
          // Under load an outage fails every send with a key: 200 of them here, within a second.
          for (let i = 0; i < 200; i++) {
            const exit = yield* Effect.exit(store.reserve({ orgId: "org_acme", key: `k${i}` }, "f"))
            assert.isTrue(Exit.isFailure(exit), "refused while Redis is down")
          }
          yield* Effect.promise(() => redis.start())
        })
      ).pipe(Effect.provide(Logger.layer([logger])))
      const failures = lines.filter((line) => line.includes("idempotency reserve on Redis failed"))
      assert.strictEqual(failures.length, 1, lines.join("\n"))
    })
  )

  it.live("make({ client }) keeps its entries on the client given, and leaves it open", () =>
    Effect.gen(function* () {
      const prefix = `t:${randomUUID()}:`
      const client = yield* RedisConnection.make({ url: redis.url })
      yield* Effect.scoped(
        Effect.flatMap(RedisIdempotencyStore.make({ client, prefix }), (store) =>
          store.complete(scope, { _tag: "Completed", fingerprint: "f", response })
        )
      )
      // The store's scope has closed; the client still answers, and holds what the store wrote.
      const stored = yield* client.send<string | null>("GET", `${prefix}org_acme:order-42`)
      assert.deepStrictEqual(JSON.parse(stored ?? "null"), { _tag: "Completed", fingerprint: "f", response })
    }).pipe(Effect.scoped)
  )

  it.effect(
    "an unusable retention or timeout fails layerFromClient, layer and layerConfig with a ConfigError naming it",
    () =>
      Effect.gen(function* () {
        // Port 1 answers nobody: a ConfigError (not Unavailable) shows the options are checked before connecting.
        const closed = "redis://127.0.0.1:1/0"
        for (const [bad, option] of [
          [{ retention: 0 }, "retention"],
          [{ retention: "forever" as Duration.Input }, "retention"],
          [{ timeout: "-5 seconds" as Duration.Input }, "timeout"]
        ] as const) {
          yield* expectConfigError(
            RedisIdempotencyStore.layerFromClient(bad).pipe(Layer.provide(RedisConnection.layer({ url: redis.url }))),
            option
          )
          yield* expectConfigError(RedisIdempotencyStore.layer({ url: closed, ...bad }), option)
        }
        yield* expectConfigError(
          RedisIdempotencyStore.layerConfig({ url: Config.Redacted("REDIS_URL"), timeout: Config.Duration("TIMEOUT") }),
          "timeout"
        ).pipe(
          Effect.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({ REDIS_URL: closed, TIMEOUT: "0 seconds" })))
        )
      })
  )
})
