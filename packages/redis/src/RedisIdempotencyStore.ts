// core's IdempotencyStore on Redis, through Effect's own `Redis` service: every instance pointed at
// one Redis shares its Idempotency-Keys, so a key retried on another instance is still replayed.

import { IdempotencyStore, type MailroomError } from "@mailroom/core"
import * as Adapter from "@mailroom/core/adapter"
import * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redis from "effect/persistence/Redis"
import type * as Scope from "effect/Scope"
import { connected } from "./internal/connected.js"
import { decodeEntry, toUnavailable } from "./internal/errors.js"
import type * as RedisConnection from "./RedisConnection.js"

/** The options a connection of its own and a client of yours both take. */
export interface CommonOptions {
  /** Prepended to every key this store writes. Default `"mailroom:idempotency:"`. */
  readonly prefix?: string
  /** How long an entry is kept after its last write (Redis expires it: `PX`). Default 24 hours. */
  readonly retention?: Duration.Input
  /**
   * How long one command may take before the send is refused as `Unavailable`. Default 5 seconds.
   * A command that went out may still run after that; at worst it leaves the key in flight (a 409),
   * which never sends twice.
   */
  readonly timeout?: Duration.Input
}

/** What `layerConfig` reads: the store opens a connection of its own to `url`. */
export interface ConfigOptions extends CommonOptions, RedisConnection.ConfigOptions {}

/** A `Redis` service of your own (`RedisConnection.make`, `NodeRedis`), e.g. shared with a `RedisQueueStore`. */
export interface ClientOptions extends CommonOptions {
  readonly client: Redis.Redis["Service"]
}

/** What `make` and `layer` take: a URL to connect to, or a client of your own. */
export type Options = ConfigOptions | ClientOptions

// Of concurrent reserves, from any instance, Redis runs one script at a time: exactly one finds
// nothing and writes its entry.
const reserveScript = Redis.script((key: string, value: string, retentionMs: number) => [key, value, retentionMs], {
  numberOfKeys: 1,
  lua: `local existing = redis.call("GET", KEYS[1])
if existing then return existing end
redis.call("SET", KEYS[1], ARGV[1], "PX", ARGV[2])
return false`
}).withReturnType<string | null>()

interface Settings {
  readonly prefix: string
  /** Milliseconds, as `PX` takes them. */
  readonly retention: string
  readonly timeout: Duration.Duration
}

const settingsOf = (options: CommonOptions): Effect.Effect<Settings, Config.ConfigError> =>
  Effect.gen(function* () {
    const retention = yield* Adapter.duration("retention", options.retention ?? IdempotencyStore.defaultRetention)
    return {
      prefix: options.prefix ?? "mailroom:idempotency:",
      retention: String(Math.ceil(Duration.toMillis(retention))),
      timeout: yield* Adapter.duration("timeout", options.timeout ?? "5 seconds")
    }
  })

const build = ({
  prefix,
  retention,
  timeout
}: Settings): Effect.Effect<IdempotencyStore.IdempotencyStore, never, Redis.Redis> =>
  Effect.gen(function* () {
    const redis = yield* Redis.Redis
    // Encoded so neither part can contain the separator: (a:b, c) and (a, b:c) are two keys.
    const keyOf = (scope: IdempotencyStore.Scope) =>
      `${prefix}${encodeURIComponent(scope.orgId)}:${encodeURIComponent(scope.key)}`
    const reserve = redis.eval(reserveScript)

    // An outage fails every send with a key; the log hears of it once per ten seconds, not once per
    // request (thousands of lines a second under load), as the message database's outages are.
    const logOutage = Adapter.outageLog()
    const logFailure = (what: string, error: MailroomError.Unavailable) =>
      logOutage(`[mailroom] idempotency ${what} on Redis failed: ${String(error.cause)}`)

    const run = <A>(what: string, command: Effect.Effect<A, Redis.RedisError>) =>
      command.pipe(
        Effect.timeoutOrElse({
          duration: timeout,
          orElse: () =>
            Effect.fail(new Redis.RedisError({ cause: new Error(`no answer within ${Duration.format(timeout)}`) }))
        }),
        Effect.mapError((error) => toUnavailable("Idempotency-Keys", error.cause)),
        Effect.tapError((error) => logFailure(what, error))
      )

    return IdempotencyStore.IdempotencyStore.of({
      reserve: (scope, fingerprint) =>
        run(
          "reserve",
          reserve(keyOf(scope), JSON.stringify({ _tag: "InFlight", fingerprint }), Number(retention))
        ).pipe(
          Effect.flatMap((existing) =>
            existing === null || existing === undefined ? Effect.succeed(undefined) : decodeEntry(existing)
          )
        ),
      complete: (scope, entry) =>
        run("complete", redis.send("SET", keyOf(scope), JSON.stringify(entry), "PX", retention)).pipe(Effect.asVoid),
      release: (scope) => run("release", redis.send("DEL", keyOf(scope))).pipe(Effect.asVoid)
    })
  })

/**
 * The store, on a connection of its own to `url` (as `RedisConnection.make`, closed with the scope) or
 * on the `client` given. Its options are checked before it connects: a `ConfigError` naming the option
 * when `retention` or `timeout` is not a finite duration above zero; a Redis that cannot be reached is
 * `Unavailable`. Commands made while the connection is down fail at once instead of waiting to run
 * later, and the connection is retried in the background.
 */
export const make = (
  options: Options
): Effect.Effect<IdempotencyStore.IdempotencyStore, Config.ConfigError | MailroomError.Unavailable, Scope.Scope> =>
  connected(settingsOf(options), options, build)

/** Provides core's `IdempotencyStore` (the server's `"idempotency": { "kind": "redis" }`). */
export const layer = (
  options: Options
): Layer.Layer<IdempotencyStore.IdempotencyStore, Config.ConfigError | MailroomError.Unavailable> =>
  Layer.effect(IdempotencyStore.IdempotencyStore, make(options))

/** As `layer`, with the options read from `Config`, e.g. `layerConfig({ url: Config.Redacted("REDIS_URL") })`. */
export const layerConfig = (
  config: Config.Wrap<ConfigOptions>
): Layer.Layer<IdempotencyStore.IdempotencyStore, Config.ConfigError | MailroomError.Unavailable> =>
  Layer.effect(IdempotencyStore.IdempotencyStore, Effect.flatMap(Config.unwrap(config), make))

/** The store on the `Redis` service in the context: one connection your application shares between stores. */
export const layerFromClient = (
  options: CommonOptions = {}
): Layer.Layer<IdempotencyStore.IdempotencyStore, Config.ConfigError, Redis.Redis> =>
  Layer.effect(IdempotencyStore.IdempotencyStore, Effect.flatMap(settingsOf(options), build))
