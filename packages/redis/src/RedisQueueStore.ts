// Effect's PersistedQueueStore on Redis, so a durable queue (core's WebhookDelivery) is one queue for
// every instance pointed at that Redis: what one queues, any other can deliver, also after a crash.
import type { MailroomError } from "@mailroom/core"
import * as Adapter from "@mailroom/core/adapter"
import { Config, Duration, Effect, Layer, type Scope } from "effect"
import { PersistedQueue, type Redis } from "effect/persistence"
import { connected } from "./internal/connected.js"
import type * as RedisConnection from "./RedisConnection.js"

export interface Options {
  /** Prepended to every key the queues write. Default `"mailroom:queue:"`. */
  readonly prefix?: string
  /**
   * How often an idle worker asks Redis for work. Default 1 second: an element queued by this process
   * wakes its own workers at once, so this is the latency of work queued by another instance, or of a
   * retry coming due.
   */
  readonly pollInterval?: Duration.Input
  /** How often a worker renews the locks of the elements it is working on. Default 5 seconds. */
  readonly lockRefreshInterval?: Duration.Input
  /**
   * How long a lock lives without renewal. Default 20 seconds. An element whose worker died (a crash,
   * a SIGKILL) is taken again by another worker once its lock has lapsed: within this plus one
   * `lockRefreshInterval`. Shorter means faster recovery but a duplicate attempt if a live worker
   * cannot reach Redis for that long.
   */
  readonly lockExpiration?: Duration.Input
}

export interface ConnectionOptions extends Options, RedisConnection.Options {}

/** The defaults, written out: Effect's own (30 s refresh, 90 s expiry) would leave a crashed attempt for two minutes. */
const defaults = {
  prefix: "mailroom:queue:",
  pollInterval: Duration.seconds(1),
  lockRefreshInterval: Duration.seconds(5),
  lockExpiration: Duration.seconds(20)
} as const

interface Settings {
  readonly prefix: string
  readonly pollInterval: Duration.Duration
  readonly lockRefreshInterval: Duration.Duration
  readonly lockExpiration: Duration.Duration
}

const settingsOf = (options: Options): Effect.Effect<Settings, Config.ConfigError> =>
  Effect.gen(function* () {
    const lockRefreshInterval = yield* Adapter.duration(
      "lockRefreshInterval",
      options.lockRefreshInterval ?? defaults.lockRefreshInterval
    )
    const lockExpiration = yield* Adapter.duration("lockExpiration", options.lockExpiration ?? defaults.lockExpiration)
    // A lock that lapses before its worker renews it hands a live attempt to another worker.
    if (!Duration.isLessThan(lockRefreshInterval, lockExpiration)) {
      return yield* Effect.fail(
        Adapter.invalidOption("lockRefreshInterval", "must be shorter than lockExpiration, or locks lapse while held")
      )
    }
    return {
      prefix: options.prefix ?? defaults.prefix,
      pollInterval: yield* Adapter.duration("pollInterval", options.pollInterval ?? defaults.pollInterval),
      lockRefreshInterval,
      lockExpiration
    }
  })

/**
 * The store on the `Redis` service in context, e.g. one `RedisConnection.layer` shared with a
 * `RedisIdempotencyStore`; its workers stop when the scope closes. Fails with a `ConfigError` naming
 * the option when a duration is not a finite one above zero, or `lockRefreshInterval` is not shorter
 * than `lockExpiration`.
 */
export const make = (
  options: Options = {}
): Effect.Effect<PersistedQueue.PersistedQueueStore["Service"], Config.ConfigError, Redis.Redis | Scope.Scope> =>
  Effect.flatMap(settingsOf(options), (settings) => PersistedQueue.makeStoreRedis(settings))

/** The store on its own connection to `url`, checked before it connects, closed with the scope. */
const makeConnected = (
  options: ConnectionOptions
): Effect.Effect<
  PersistedQueue.PersistedQueueStore["Service"],
  Config.ConfigError | MailroomError.Unavailable,
  Scope.Scope
> => connected(settingsOf(options), options.url, PersistedQueue.makeStoreRedis)

/** The store on a `Redis` service provided by the caller, e.g. one `RedisConnection.layer` shared with a `RedisIdempotencyStore`. */
export const layerRedis = (
  options: Options = {}
): Layer.Layer<PersistedQueue.PersistedQueueStore, Config.ConfigError, Redis.Redis> =>
  Layer.effect(PersistedQueue.PersistedQueueStore, make(options))

/** The store on its own connection to `url` (as `RedisConnection.make`): a Redis that cannot be reached fails it with `Unavailable`. */
export const layer = (
  options: ConnectionOptions
): Layer.Layer<PersistedQueue.PersistedQueueStore, Config.ConfigError | MailroomError.Unavailable> =>
  Layer.effect(PersistedQueue.PersistedQueueStore, makeConnected(options))

/** As `layer`, with the options read from `Config`, e.g. `layerConfig({ url: Config.Redacted("REDIS_URL") })`. */
export const layerConfig = (
  config: Config.Wrap<ConnectionOptions>
): Layer.Layer<PersistedQueue.PersistedQueueStore, Config.ConfigError | MailroomError.Unavailable> =>
  Layer.effect(PersistedQueue.PersistedQueueStore, Effect.flatMap(Config.unwrap(config), makeConnected))
