// RedisRateLimitStore against a real redis-server: two instances (two connections) draw from one
// bucket, a refused reservation takes nothing, and a Redis outage leaves each instance pacing itself.
import { randomUUID } from "node:crypto"
import { assert, it } from "@effect/vitest"
import { SendRateLimiter } from "@mailroom/core"
import { expectConfigError, RateLimitStoreSuite } from "@mailroom/core/testing"
import { startRedisServer } from "@mailroom/test-support"
import { Config, ConfigProvider, Duration, Effect, Exit, Layer } from "effect"
import { afterAll, describe } from "vitest"
import { RedisConnection, RedisRateLimitStore } from "../src/index.js"

const redis = await startRedisServer()
afterAll(() => redis.dispose())

// The memory store runs the same suite: the script and core's GCRA must answer alike.
RateLimitStoreSuite("redis", { layer: RedisRateLimitStore.layer({ url: redis.url }), sharedByInstances: true })

/** Runs `use` on a store with its own connection, as one instance of a fleet would have. */
const instance = <A, E>(use: (store: SendRateLimiter.RateLimitStore) => Effect.Effect<A, E>) =>
  Effect.flatMap(SendRateLimiter.RateLimitStore, use).pipe(
    Effect.provide(RedisRateLimitStore.layer({ url: redis.url }))
  )

const request = (key: string, tokens: number, maxWait: Duration.Input = "1 second") => ({
  key,
  tokens,
  perSecond: 10,
  burst: 10,
  maxWait: Duration.fromInputUnsafe(maxWait)
})

const millis = (reservation: SendRateLimiter.Reservation) =>
  Duration.toMillis(reservation._tag === "Granted" ? reservation.delay : reservation.retryAfter)

describe("RedisRateLimitStore", () => {
  it.live("two instances share one bucket per key", () =>
    Effect.gen(function* () {
      const key = randomUUID()
      const first = yield* instance((store) => store.reserve(request(key, 10)))
      assert.deepStrictEqual(first, { _tag: "Granted", delay: Duration.zero })
      // The other instance sees the burst taken: 5 more tokens are half a second off (less the time
      // the first call took).
      const second = yield* instance((store) => store.reserve(request(key, 5)))
      assert.strictEqual(second._tag, "Granted")
      assert.isAbove(millis(second), 300)
      assert.isAtMost(millis(second), 500)
      const elsewhere = yield* instance((store) => store.reserve(request(randomUUID(), 10, "0 millis")))
      assert.deepStrictEqual(elsewhere, { _tag: "Granted", delay: Duration.zero })
    })
  )

  it.live("a reservation further off than maxWait is refused and takes nothing", () =>
    Effect.gen(function* () {
      const key = randomUUID()
      yield* instance((store) =>
        Effect.gen(function* () {
          yield* store.reserve(request(key, 10))
          const refused = yield* store.reserve(request(key, 30, "500 millis"))
          assert.strictEqual(refused._tag, "Refused")
          assert.isAbove(millis(refused), 2500)
          // Had the refused 30 been booked, this one would be more than 3 s off.
          const next = yield* store.reserve(request(key, 1))
          assert.strictEqual(next._tag, "Granted")
          assert.isAtMost(millis(next), 100)
        })
      )
    })
  )

  it.live("while Redis is down the limiter paces this instance alone instead of failing sends", () =>
    Effect.gen(function* () {
      const limiter = yield* SendRateLimiter.SendRateLimiter
      yield* Effect.promise(() => redis.stop())
      const first = yield* Effect.exit(limiter.acquire(5))
      const second = yield* Effect.exit(limiter.acquire(5))
      yield* Effect.promise(() => redis.start())
      assert.isTrue(Exit.isSuccess(first), "a send goes on without Redis")
      // The local bucket still holds 5 a second: the second is refused, not let through.
      assert.isTrue(Exit.isFailure(second))
    }).pipe(
      Effect.provide(
        SendRateLimiter.layer({ key: randomUUID(), rate: { perSecond: 5 }, wait: "0 millis" }).pipe(
          Layer.provide(RedisRateLimitStore.layer({ url: redis.url }))
        )
      )
    )
  )

  it.effect("an unusable timeout fails layerFromClient, layer and layerConfig with a ConfigError naming it", () =>
    Effect.gen(function* () {
      const closed = "redis://127.0.0.1:1/0"
      const configured = RedisRateLimitStore.layerConfig({
        url: Config.Redacted("REDIS_URL"),
        timeout: Config.Duration("TIMEOUT")
      }).pipe(
        Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({ REDIS_URL: closed, TIMEOUT: "0 millis" })))
      )
      yield* expectConfigError(
        RedisRateLimitStore.layerFromClient({ timeout: "0 millis" }).pipe(
          Layer.provide(RedisConnection.layer({ url: redis.url }))
        ),
        "timeout"
      )
      yield* expectConfigError(RedisRateLimitStore.layer({ url: closed, timeout: "0 millis" }), "timeout")
      yield* expectConfigError(configured, "timeout")
    })
  )
})
