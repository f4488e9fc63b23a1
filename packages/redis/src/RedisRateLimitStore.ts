// core's SendRateLimiter buckets on Redis, so every instance pointed at one Redis draws from one bucket
// per provider account and region: the fleet together stays within the provider's sending rate.

import { type MailroomError, SendRateLimiter } from "@mailroom/core"
import * as Adapter from "@mailroom/core/adapter"
import * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redis from "effect/persistence/Redis"
import type * as Scope from "effect/Scope"
import { connected } from "./internal/connected.js"
import type * as RedisConnection from "./RedisConnection.js"

/** The options a connection of its own and a client of yours both take. */
export interface CommonOptions {
  /** Prepended to every key this store writes. Default `"mailroom:ratelimit:"`. */
  readonly prefix?: string
  /**
   * How long one reservation may take before it counts as a store failure (the limiter then paces
   * this instance alone until Redis answers again). Default 1 second.
   */
  readonly timeout?: Duration.Input
}

/** What `layerConfig` reads: the store opens a connection of its own to `url`. */
export interface ConfigOptions extends CommonOptions, RedisConnection.ConfigOptions {}

/** A `Redis` service of your own (`RedisConnection.make`, `NodeRedis`), e.g. shared with the other stores. */
export interface ClientOptions extends CommonOptions {
  readonly client: Redis.Redis["Service"]
}

/** What `make` and `layer` take: a URL to connect to, or a client of your own. */
export type Options = ConfigOptions | ClientOptions

// core's GCRA (SendRateLimiter.gcra) in one script, so a reservation is atomic across instances. The
// time is Redis's own (TIME), not each instance's: clocks that drift apart cannot widen the bucket.
// Lua numbers go back to Redis as integers, so the delay is returned as a string.
const reserveScript = Redis.script(
  (key: string, tokens: number, intervalMillis: number, burst: number, maxWaitMillis: number) => [
    key,
    tokens,
    intervalMillis,
    burst,
    maxWaitMillis
  ],
  {
    numberOfKeys: 1,
    lua: `
-- Before Redis 5, a script that reads TIME may write only when its effects are replicated.
if redis.replicate_commands then redis.replicate_commands() end
local tokens = tonumber(ARGV[1])
local interval = tonumber(ARGV[2])
local burst = tonumber(ARGV[3])
local max_wait = tonumber(ARGV[4])
local time = redis.call("TIME")
local now = tonumber(time[1]) * 1000 + tonumber(time[2]) / 1000
local start = tonumber(redis.call("GET", KEYS[1]))
if not start or start < now then start = now end
local next = start + tokens * interval
local delay = math.max(0, next - burst * interval - now)
if delay > max_wait then return { 0, string.format("%.17g", delay) } end
redis.call("SET", KEYS[1], string.format("%.17g", next), "PX", math.max(1, math.ceil(next - now)))
return { 1, string.format("%.17g", delay) }
`
  }
).withReturnType<readonly [granted: 0 | 1, delayMillis: string]>()

interface Settings {
  readonly prefix: string
  readonly timeout: Duration.Duration
}

const settingsOf = (options: CommonOptions): Effect.Effect<Settings, Config.ConfigError> =>
  Effect.map(Adapter.duration("timeout", options.timeout ?? "1 second"), (timeout) => ({
    prefix: options.prefix ?? "mailroom:ratelimit:",
    timeout
  }))

const build = ({ prefix, timeout }: Settings): Effect.Effect<SendRateLimiter.RateLimitStore, never, Redis.Redis> =>
  Effect.gen(function* () {
    const redis = yield* Redis.Redis
    const reserve = redis.eval(reserveScript)
    return SendRateLimiter.RateLimitStore.of({
      reserve: (request) =>
        reserve(
          `${prefix}${request.key}`,
          request.tokens,
          1000 / request.perSecond,
          request.burst,
          Duration.toMillis(request.maxWait)
        ).pipe(
          Effect.timeoutOrElse({
            duration: timeout,
            orElse: () =>
              Effect.fail(new Redis.RedisError({ cause: new Error(`no answer within ${Duration.format(timeout)}`) }))
          }),
          Effect.mapError((error) => new SendRateLimiter.RateLimitStoreError({ cause: error.cause })),
          Effect.map(([granted, delay]): SendRateLimiter.Reservation => {
            const millis = Duration.millis(Math.ceil(Number(delay)))
            return Number(granted) === 1 ? { _tag: "Granted", delay: millis } : { _tag: "Refused", retryAfter: millis }
          })
        )
    })
  })

/**
 * The store, on a connection of its own to `url` (as `RedisConnection.make`: a Redis that cannot be
 * reached fails it with `Unavailable`) or on the `client` given. Fails with a `ConfigError` naming
 * `timeout`, before it connects, when it is not a finite duration above zero.
 */
export const make = (
  options: Options
): Effect.Effect<SendRateLimiter.RateLimitStore, Config.ConfigError | MailroomError.Unavailable, Scope.Scope> =>
  connected(settingsOf(options), options, build)

/** Provides core's `SendRateLimiter.RateLimitStore` (the server's `"rateLimit": { "store": "redis" }`). */
export const layer = (
  options: Options
): Layer.Layer<SendRateLimiter.RateLimitStore, Config.ConfigError | MailroomError.Unavailable> =>
  Layer.effect(SendRateLimiter.RateLimitStore, make(options))

/** As `layer`, with the options read from `Config`, e.g. `layerConfig({ url: Config.Redacted("REDIS_URL") })`. */
export const layerConfig = (
  config: Config.Wrap<ConfigOptions>
): Layer.Layer<SendRateLimiter.RateLimitStore, Config.ConfigError | MailroomError.Unavailable> =>
  Layer.effect(SendRateLimiter.RateLimitStore, Effect.flatMap(Config.unwrap(config), make))

/** The store on the `Redis` service in the context: one connection your application shares between stores. */
export const layerFromClient = (
  options: CommonOptions = {}
): Layer.Layer<SendRateLimiter.RateLimitStore, Config.ConfigError, Redis.Redis> =>
  Layer.effect(SendRateLimiter.RateLimitStore, Effect.flatMap(settingsOf(options), build))
