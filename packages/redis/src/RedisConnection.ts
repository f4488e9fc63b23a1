// One connection to Redis as Effect's `Redis` service, opened the way mailroom needs it: a start-up
// failure is a clear error, a later outage heals on its own, and no command waits for a lost connection.
import { NodeRedis } from "@effect/platform-node"
import type { MailroomError } from "@mailroom/core"
import { Config, Context, Effect, Layer, Redacted } from "effect"
import { Redis } from "effect/persistence"
import { describeUrl, unavailable } from "./internal/redis.js"

export interface Options {
  /** `redis://[[user]:password@]host[:port][/db]`, or `rediss://` for TLS. */
  readonly url: string | Redacted.Redacted<string>
}

/**
 * Effect's `Redis` service on one connection to `url`, opened when the layer is built and closed with
 * it. Build the layer once and provide it to every store that should share the connection (a layer
 * is built once per value, so the same value given twice is one connection).
 *
 * - A Redis that cannot be reached when the layer is built fails it with `Unavailable`, naming
 *   `redis://host:port` and never the password: a wrong URL is a start-up error, not a silent retry.
 * - Once connected, a lost connection is retried for as long as it takes (backoff of at most ~2 s),
 *   so a Redis restart heals without restarting the process.
 * - No offline queue: a command made while the connection is down fails at once instead of running
 *   later, after its caller has already been told it failed.
 */
export const layer = (options: Options): Layer.Layer<Redis.Redis, MailroomError.Unavailable> =>
  Layer.effectContext(
    Effect.gen(function* () {
      const url = Redacted.isRedacted(options.url) ? Redacted.value(options.url) : options.url
      // Per build, so the same layer built again (another runtime) fails fast again on its first connect.
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
        Effect.mapError((error) =>
          unavailable(error.cause, `Redis at ${describeUrl(url)} cannot be reached: ${String(error.cause)}`)
        )
      )
      connected = true
      return Context.make(Redis.Redis, Context.get(context, Redis.Redis))
    })
  )

/** As `layer`, with the URL read from `Config`, e.g. `layerConfig({ url: Config.Redacted("REDIS_URL") })`. */
export const layerConfig = (
  options: Config.Wrap<Options>
): Layer.Layer<Redis.Redis, MailroomError.Unavailable | Config.ConfigError> =>
  Layer.unwrap(Effect.map(Config.unwrap(options), layer))
