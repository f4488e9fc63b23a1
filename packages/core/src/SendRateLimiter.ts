// A token bucket for sends, charged one token per recipient and keyed by provider account and region,
// so every instance sharing a store (Redis) stays within the vendor's sending rate together.
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import { ProviderError, RateLimited } from "./ProviderError.js"

/** A bucket's rate and size. */
export interface Rate {
  /** Recipients per second the bucket refills with (SES: `SendQuota.MaxSendRate`). */
  readonly perSecond: number
  /**
   * Recipients that may go at once after a quiet spell: the bucket's size. In any window of T
   * seconds at most `burst + perSecond * T` recipients are sent. Default: `perSecond`.
   */
  readonly burst?: number
}

/** What a store answers: the tokens were taken and the send may go after `delay`, or nothing was taken. */
export type Reservation =
  | { readonly _tag: "Granted"; readonly delay: Duration.Duration }
  | { readonly _tag: "Refused"; readonly retryAfter: Duration.Duration }

/** A reservation of tokens from one bucket. */
export interface ReserveRequest {
  readonly key: string
  readonly tokens: number
  readonly perSecond: number
  readonly burst: number
  /** Take the tokens only if they are free within this long; otherwise take nothing. */
  readonly maxWait: Duration.Duration
}

/** The store failed (Redis down); the limiter then limits this process alone, see `make`. */
export class RateLimitStoreError extends Data.TaggedError("RateLimitStoreError")<{ readonly cause: unknown }> {
  override get message(): string {
    return `the rate limit store failed: ${String(this.cause)}`
  }
}

/**
 * Where buckets live. `reserve` is atomic: of concurrent reservations on one key, from any process,
 * each sees the others' tokens. A reservation that would wait longer than `maxWait` takes nothing, so
 * a send that is refused never holds back the ones that follow.
 */
export interface RateLimitStore {
  readonly reserve: (request: ReserveRequest) => Effect.Effect<Reservation, RateLimitStoreError>
}

export const RateLimitStore: Context.Service<RateLimitStore, RateLimitStore> = Context.Service(
  "@mailroom/core/SendRateLimiter/RateLimitStore"
)

/**
 * The generic cell rate algorithm: one number per key, the time the bucket would be full again
 * ("theoretical arrival time"). A reservation of n tokens moves it n intervals on and may go once
 * it is no more than `burst` intervals ahead of now. The Redis store runs the same arithmetic in Lua.
 */
export const gcra = (
  stored: number | undefined,
  now: number,
  request: Pick<ReserveRequest, "tokens" | "perSecond" | "burst"> & { readonly maxWaitMillis: number }
): { readonly granted: boolean; readonly delayMillis: number; readonly next: number } => {
  const interval = 1000 / request.perSecond
  const start = Math.max(stored ?? now, now)
  const next = start + request.tokens * interval
  const delayMillis = Math.max(0, next - request.burst * interval - now)
  return { granted: delayMillis <= request.maxWaitMillis, delayMillis, next }
}

/** Buckets in this process: one instance, or tests. */
export const makeStoreMemory = (): RateLimitStore => {
  const buckets = new Map<string, number>()
  return {
    reserve: (request) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        const stored = buckets.get(request.key)
        const result = gcra(stored, now, { ...request, maxWaitMillis: Duration.toMillis(request.maxWait) })
        if (!result.granted) return { _tag: "Refused", retryAfter: Duration.millis(result.delayMillis) }
        buckets.set(request.key, result.next)
        // A bucket that is full again carries no state: forget it, so idle keys cost nothing.
        for (const [key, full] of buckets) if (full <= now) buckets.delete(key)
        return { _tag: "Granted", delay: Duration.millis(result.delayMillis) }
      })
  }
}

/** Provides buckets in this process. */
export const layerStoreMemory: Layer.Layer<RateLimitStore> = Layer.sync(RateLimitStore, makeStoreMemory)

/** Paces sends to a provider's rate, one token per recipient. */
export interface SendRateLimiter {
  /**
   * Takes `recipients` tokens, waiting for them up to the limiter's `wait`; fails with a
   * `ProviderError` (provider "mailroom", reason `RateLimited` with `retryAfter`) when they would take
   * longer, having taken nothing.
   */
  readonly acquire: (recipients: number) => Effect.Effect<void, ProviderError>
}

export const SendRateLimiter: Context.Service<SendRateLimiter, SendRateLimiter> = Context.Service(
  "@mailroom/core/SendRateLimiter"
)

/** The bucket's key, its rate and how long a send may wait. */
export interface Options {
  /**
   * The bucket: one per provider account and region (`"ses:123456789012:eu-west-1"`), so instances
   * and processes sending through one account share it and different accounts do not.
   */
  readonly key: string
  /** Fixed, or read before each send (a quota refreshed from the provider). */
  readonly rate: Rate | Effect.Effect<Rate>
  /** The longest a send waits for tokens before it is refused (HTTP 429, `Retry-After`). Default 5 s. */
  readonly wait?: Duration.Input
}

/** Seconds sends waited for tokens (0 when they had them at once). */
export const waitSeconds = Metric.histogram("mailroom_rate_limiter_wait_seconds", {
  description: "How long sends waited for the rate limiter's tokens",
  boundaries: [0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]
})

/** Sends refused because their tokens were further off than the wait allows. */
export const refusals = Metric.counter("mailroom_rate_limiter_refusals_total", {
  description: "Sends refused by the rate limiter (answered 429)",
  incremental: true
})

/**
 * The limiter on the `RateLimitStore` in context. While the store fails (Redis down), each process
 * limits itself alone on a bucket in memory, and says so in the log at most every 10 seconds: sends
 * go on, and the fleet may reach N times the rate until the store is back.
 */
export const make = (options: Options): Effect.Effect<SendRateLimiter, never, RateLimitStore> =>
  Effect.gen(function* () {
    const store = yield* RateLimitStore
    const fallback = makeStoreMemory()
    const maxWait = Duration.fromInputUnsafe(options.wait ?? "5 seconds")
    const rate = Effect.isEffect(options.rate) ? options.rate : Effect.succeed(options.rate)
    let lastWarning = Number.NEGATIVE_INFINITY

    const reserve = (request: ReserveRequest) =>
      store.reserve(request).pipe(
        Effect.catch((error) =>
          Effect.gen(function* () {
            const now = yield* Clock.currentTimeMillis
            if (now - lastWarning >= 10_000) {
              lastWarning = now
              yield* Effect.logError(
                `[mailroom] the rate limiter's store failed; limiting this instance alone meanwhile: ${String(error.cause)}`
              )
            }
            return yield* Effect.orDie(fallback.reserve(request))
          })
        )
      )

    return SendRateLimiter.of({
      acquire: (recipients) =>
        Effect.gen(function* () {
          const { perSecond, burst } = yield* rate
          const reservation = yield* reserve({
            key: options.key,
            tokens: recipients,
            perSecond,
            burst: burst ?? perSecond,
            maxWait
          })
          if (reservation._tag === "Refused") {
            yield* Metric.update(refusals, 1)
            return yield* new ProviderError({
              provider: "mailroom",
              reason: new RateLimited({
                message: `the sending rate of ${perSecond} recipients per second is taken for the next ${Duration.format(maxWait)}; nothing was sent, try again later`,
                retryAfter: reservation.retryAfter
              })
            })
          }
          yield* Metric.update(waitSeconds, Duration.toMillis(reservation.delay) / 1000)
          if (Duration.isGreaterThan(reservation.delay, Duration.zero)) yield* Effect.sleep(reservation.delay)
        }).pipe(Effect.withSpan("SendRateLimiter.acquire", { attributes: { recipients, key: options.key } }))
    })
  })

/** Provides the limiter on the `RateLimitStore` in context. */
export const layer = (options: Options): Layer.Layer<SendRateLimiter, never, RateLimitStore> =>
  Layer.effect(SendRateLimiter, make(options))

/** The limiter on buckets in this process. */
export const layerMemory = (options: Options): Layer.Layer<SendRateLimiter> =>
  layer(options).pipe(Layer.provide(layerStoreMemory))
