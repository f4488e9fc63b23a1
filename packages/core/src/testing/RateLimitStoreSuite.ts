// The conformance suite every SendRateLimiter store runs against its real peer, on the real clock: the
// memory GCRA and a shared store (Redis's script) must grant, delay and refuse alike.
import { randomUUID } from "node:crypto"
import { assert, describe, layer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { RateLimitStore, type Reservation, type ReserveRequest } from "../SendRateLimiter.js"

export interface RateLimitStoreSuiteOptions {
  /** Builds the store. Buckets of a shared store may outlive a run: the suite uses fresh keys. */
  readonly layer: Layer.Layer<RateLimitStore, unknown>
  /**
   * True when two stores built by `layer` share their buckets (one Redis), as several instances of a
   * server do: the suite then checks that a second instance sees the first one's tokens taken.
   */
  readonly sharedByInstances?: boolean
}

/** 10 tokens a second, a bucket of 10, waiting at most 1 second: the suite's rate unless a case says. */
const request = (key: string, tokens: number, more: Partial<ReserveRequest> = {}): ReserveRequest => ({
  key,
  tokens,
  perSecond: 10,
  burst: 10,
  maxWait: Duration.seconds(1),
  ...more
})

const millis = (reservation: Reservation) =>
  Duration.toMillis(reservation._tag === "Granted" ? reservation.delay : reservation.retryAfter)

// Delays are measured from the store's own clock, a little after the test's: each bound below gives
// the time between two calls (under load, hundreds of milliseconds) to the lower side only.
export const RateLimitStoreSuite = (name: string, options: RateLimitStoreSuiteOptions): void => {
  const fresh = () => `suite:${randomUUID()}`
  const reserve = (r: ReserveRequest) => Effect.flatMap(RateLimitStore, (store) => store.reserve(r))

  describe(`RateLimitStoreSuite: ${name}`, () => {
    layer(options.layer, { timeout: 30_000, excludeTestServices: true })((it) => {
      it.effect("a full bucket grants its burst at once; the next tokens wait one interval each", () =>
        Effect.gen(function* () {
          const key = fresh()
          assert.deepStrictEqual(yield* reserve(request(key, 10)), { _tag: "Granted", delay: Duration.zero })
          const next = yield* reserve(request(key, 5))
          assert.strictEqual(next._tag, "Granted")
          assert.isAbove(millis(next), 0, "the burst was taken")
          assert.isAtMost(millis(next), 500)
        })
      )

      it.effect("a reservation further off than maxWait is refused with how long, and takes nothing", () =>
        Effect.gen(function* () {
          const key = fresh()
          yield* reserve(request(key, 10))
          const refused = yield* reserve(request(key, 30, { maxWait: Duration.millis(500) }))
          assert.strictEqual(refused._tag, "Refused")
          assert.isAbove(millis(refused), 2000)
          assert.isAtMost(millis(refused), 3000)
          // Had the refused 30 been booked, this one would be more than 3 s off.
          const next = yield* reserve(request(key, 1))
          assert.strictEqual(next._tag, "Granted")
          assert.isAtMost(millis(next), 100)
        })
      )

      it.effect("a reservation larger than the bucket waits for the tokens beyond it", () =>
        Effect.gen(function* () {
          const granted = yield* reserve(request(fresh(), 15))
          assert.strictEqual(granted._tag, "Granted")
          assert.isAbove(millis(granted), 300)
          assert.isAtMost(millis(granted), 500)
        })
      )

      it.effect("the burst is the bucket's size, whatever the rate", () =>
        Effect.gen(function* () {
          const key = fresh()
          const small = { perSecond: 10, burst: 2 }
          assert.deepStrictEqual(yield* reserve(request(key, 2, small)), { _tag: "Granted", delay: Duration.zero })
          const third = yield* reserve(request(key, 1, small))
          assert.isAbove(millis(third), 0)
          assert.isAtMost(millis(third), 100)
        })
      )

      it.effect("keys are separate buckets", () =>
        Effect.gen(function* () {
          yield* reserve(request(fresh(), 10))
          const other = yield* reserve(request(fresh(), 10, { maxWait: Duration.zero }))
          assert.deepStrictEqual(other, { _tag: "Granted", delay: Duration.zero })
        })
      )

      it.effect("concurrent reservations each see the others' tokens: one interval apart past the burst", () =>
        Effect.gen(function* () {
          const key = fresh()
          const all = yield* Effect.forEach(
            Array.from({ length: 20 }, () => request(key, 1, { maxWait: Duration.seconds(2) })),
            reserve,
            { concurrency: "unbounded" }
          )
          const delays = all.map(millis).sort((a, b) => a - b)
          assert.isTrue(
            all.every((r) => r._tag === "Granted"),
            "all within maxWait"
          )
          // Ten from the bucket at once, then one per 100 ms: the last about a second off, none sharing a slot.
          assert.isAtLeast(delays.filter((d) => d === 0).length, 10)
          assert.isAtMost(delays[19] ?? 0, 1000)
          assert.isAbove(delays[19] ?? 0, 500)
          for (let i = 11; i < 20; i++) assert.isAbove(delays[i] ?? 0, delays[i - 1] ?? 0)
        })
      )

      if (options.sharedByInstances === true) {
        it.effect("two instances draw from one bucket per key", () =>
          Effect.gen(function* () {
            const key = fresh()
            const other = yield* Effect.map(Layer.build(options.layer), (context) =>
              Context.get(context, RateLimitStore)
            )
            assert.deepStrictEqual(yield* reserve(request(key, 10)), { _tag: "Granted", delay: Duration.zero })
            const second = yield* other.reserve(request(key, 5))
            assert.strictEqual(second._tag, "Granted")
            assert.isAbove(millis(second), 0, "the other instance sees the burst taken")
          }).pipe(Effect.scoped)
        )
      }
    })
  })
}
