// Effect's PersistedQueueStore on Redis, so a durable queue (core's WebhookDelivery) is one queue for
// every instance pointed at that Redis: what one queues, any other can deliver, also after a crash.
import type { MailroomError } from "@mailroom/core"
import * as Adapter from "@mailroom/core/adapter"
import * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as PersistedQueue from "effect/persistence/PersistedQueue"
import type * as Redis from "effect/persistence/Redis"
import type * as Scope from "effect/Scope"
import { connected } from "./internal/connected.js"
import type * as RedisConnection from "./RedisConnection.js"

/** The options a connection of its own and a client of yours both take. */
export interface CommonOptions {
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

/** What `layerConfig` reads: the store opens a connection of its own to `url`. */
export interface ConfigOptions extends CommonOptions, RedisConnection.ConfigOptions {}

/** A `Redis` service of your own (`RedisConnection.make`, `NodeRedis`), e.g. shared with a `RedisIdempotencyStore`. */
export interface ClientOptions extends CommonOptions {
  readonly client: Redis.Redis["Service"]
}

/** What `make` and `layer` take: a URL to connect to, or a client of your own. */
export type Options = ConfigOptions | ClientOptions

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

const settingsOf = (options: CommonOptions): Effect.Effect<Settings, Config.ConfigError> =>
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
 * The store, on a connection of its own to `url` (as `RedisConnection.make`: a Redis that cannot be
 * reached fails it with `Unavailable`) or on the `client` given; its workers stop when the scope
 * closes. Fails with a `ConfigError` naming the option, before it connects, when a duration is not a
 * finite one above zero, or `lockRefreshInterval` is not shorter than `lockExpiration`.
 */
export const make = (
  options: Options
): Effect.Effect<
  PersistedQueue.PersistedQueueStore["Service"],
  Config.ConfigError | MailroomError.Unavailable,
  Scope.Scope
> => connected(settingsOf(options), options, PersistedQueue.makeStoreRedis)

/** Provides Effect's `PersistedQueueStore` (the server's `"events": { "queue": { "kind": "redis" } }`). */
export const layer = (
  options: Options
): Layer.Layer<PersistedQueue.PersistedQueueStore, Config.ConfigError | MailroomError.Unavailable> =>
  Layer.effect(PersistedQueue.PersistedQueueStore, make(options))

/** As `layer`, with the options read from `Config`, e.g. `layerConfig({ url: Config.Redacted("REDIS_URL") })`. */
export const layerConfig = (
  config: Config.Wrap<ConfigOptions>
): Layer.Layer<PersistedQueue.PersistedQueueStore, Config.ConfigError | MailroomError.Unavailable> =>
  Layer.effect(PersistedQueue.PersistedQueueStore, Effect.flatMap(Config.unwrap(config), make))

/** The store on the `Redis` service in the context: one connection your application shares between stores. */
export const layerFromClient = (
  options: CommonOptions = {}
): Layer.Layer<PersistedQueue.PersistedQueueStore, Config.ConfigError, Redis.Redis> =>
  Layer.effect(
    PersistedQueue.PersistedQueueStore,
    Effect.flatMap(settingsOf(options), (settings) => PersistedQueue.makeStoreRedis(settings))
  )
