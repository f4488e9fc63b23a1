// One connection to Redis as Effect's `Redis` service, opened the way mailroom needs it: a start-up
// failure is a clear error, a later outage heals on its own, and no command waits for a lost connection.
import { NodeRedis } from "@effect/platform-node"
import type { MailroomError } from "@mailroom/core"
import type * as Adapter from "@mailroom/core/adapter"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Redis from "effect/persistence/Redis"
import * as References from "effect/References"
import type * as Scope from "effect/Scope"
import { describeUrl, toUnavailable } from "./internal/errors.js"
import * as Check from "./internal/options.js"

/** What `layerConfig` reads: where Redis is. */
export interface ConfigOptions {
  /** `redis://[[user]:password@]host[:port][/db]`, or `rediss://` for TLS. Plain or `Redacted`. */
  readonly url: Adapter.Secret
}

/** What `make` and `layer` take: the same (a connection of your own needs no `RedisConnection`). */
export type Options = ConfigOptions

/**
 * The loggers, each leaving out the Redis client's own warning about a failed connection until
 * `connected()`: before the first connection, that failure is `make`'s error, which names the URL;
 * the warning, with its stack, would only repeat it. Later warnings (an outage) are all kept.
 */
const quietUntil = (
  connected: () => boolean,
  loggers: ReadonlySet<Logger.Logger<unknown, unknown>>
): ReadonlySet<Logger.Logger<unknown, unknown>> =>
  new Set(
    [...loggers].map((logger) =>
      Logger.make((options) => {
        const [first] = Array.isArray(options.message) ? options.message : [options.message]
        return !connected() && first === "NodeRedis client error" ? undefined : logger.log(options)
      })
    )
  )

/**
 * Effect's `Redis` service on one connection to `url`, opened now and closed with the scope.
 *
 * - A `url` that is not a `redis://` or `rediss://` URL fails with a `ConfigError` naming `url`.
 * - A Redis that cannot be reached fails with `Unavailable`, naming `redis://host:port` and never
 *   the password: a wrong URL is a start-up error, not a silent retry.
 * - Once connected, a lost connection is retried for as long as it takes (backoff of at most ~2 s),
 *   so a Redis restart heals without restarting the process.
 * - No offline queue: a command made while the connection is down fails at once instead of running
 *   later, after its caller has already been told it failed.
 */
export const make = (
  options: Options
): Effect.Effect<Redis.Redis["Service"], Config.ConfigError | MailroomError.Unavailable, Scope.Scope> =>
  Effect.gen(function* () {
    const url = yield* Check.redisUrl(options.url)
    // Per connection, so the same layer built again (another runtime) fails fast again on its first connect.
    let connected = false
    const context = yield* Layer.build(
      NodeRedis.layer({
        url,
        disableOfflineQueue: true,
        socket: {
          reconnectStrategy: (retries, cause) =>
            connected ? Math.min(2 ** retries * 50, 2000) + Math.floor(Math.random() * 200) : cause
        }
      })
    ).pipe(
      Effect.updateService(References.CurrentLoggers, (loggers) => quietUntil(() => connected, loggers)),
      Effect.mapError((error) =>
        toUnavailable(`Redis at ${describeUrl(url)}`, error.cause, `cannot be reached: ${String(error.cause)}`)
      )
    )
    connected = true
    return Context.get(context, Redis.Redis)
  })

/**
 * The connection as a layer, opened when the layer is built and closed with it. Build the layer once
 * and provide it to every store that should share the connection (a layer is built once per value,
 * so the same value given twice is one connection).
 */
export const layer = (options: Options): Layer.Layer<Redis.Redis, Config.ConfigError | MailroomError.Unavailable> =>
  Layer.effect(Redis.Redis, make(options))

/** As `layer`, with the URL read from `Config`, e.g. `layerConfig({ url: Config.Redacted("REDIS_URL") })`. */
export const layerConfig = (
  config: Config.Wrap<ConfigOptions>
): Layer.Layer<Redis.Redis, Config.ConfigError | MailroomError.Unavailable> =>
  Layer.effect(Redis.Redis, Effect.flatMap(Config.unwrap(config), make))
