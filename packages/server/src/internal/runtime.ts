// The layers a config names, built into one runtime: the Mailroom services on the configured adapters,
// a health watch per Redis, tracing when configured, and the metrics registry every fiber records to.
import { Mailroom, type MailroomError } from "@mailroom/core"
import type * as Duration from "effect/Duration"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import type * as PersistedQueue from "effect/persistence/PersistedQueue"
import type * as SqlError from "effect/sql/SqlError"
import type { Config, ServerConfigError } from "../ServerConfig.js"
import { idempotencyLayer, optional, providerLayer, storageLayer } from "./adapters.js"
import { inSection } from "./configError.js"
import { type redisConnections, redisUrls, type SqlConnections } from "./connections.js"
import { eventsLayer } from "./events.js"
import type * as Health from "./health.js"
import { observed } from "./inbox/written.js"
import { messagesLayer, queueLayer, workerOptions } from "./messages.js"
import type * as ServerOrganizations from "./organizations.js"
import type * as RateLimiting from "./rateLimit.js"
import * as Startup from "./startup.js"
import * as Telemetry from "./telemetry.js"

/**
 * What building the layers can fail with: a database or an event queue that cannot be opened, an
 * idempotency directory that cannot be created, a Redis (for keys or the queue) that cannot be reached,
 * or an option an adapter refuses (reported as a ServerConfigError naming the config's field).
 */
type LayerError = ServerConfigError | SqlError.SqlError | PersistedQueue.PersistedQueueError | MailroomError.Unavailable

/** What the runtime is built from: the config, its connections, and the server's hooks. */
export interface Inputs {
  readonly config: Config
  readonly sql: SqlConnections
  readonly redis: ReturnType<typeof redisConnections>
  readonly organizations: ReturnType<typeof ServerOrganizations.make>
  readonly rateLimiting: ReturnType<typeof RateLimiting.make>
  readonly health: ReturnType<typeof Health.make>
  readonly publicUrl: string
  /** Aborted when the grace period is over: sends still waiting on the provider are answered then. */
  readonly shutdown: AbortSignal
  /** Called with each message the outbox writes, for the viewer's index. */
  readonly noteWritten: (messageId: string) => void
}

/** The runtime of a config's layers; nothing is built until it is first used. */
export const make = ({
  config,
  sql,
  redis,
  organizations,
  rateLimiting,
  health,
  publicUrl,
  shutdown,
  noteWritten
}: Inputs) => {
  const events = eventsLayer(config.events, redis)
  const provider =
    config.provider.kind === "outbox"
      ? observed(providerLayer(config.provider), noteWritten)
      : providerLayer(config.provider)
  const layer = Mailroom.layer<LayerError>({
    provider: inSection("provider", provider),
    store: inSection("storage", storageLayer(config.storage, publicUrl)),
    organizations: inSection("organizations", organizations.layer),
    idempotency: inSection("idempotency", idempotencyLayer(config.idempotency, redis)),
    messages: inSection("messages", messagesLayer(config.messages, sql)),
    queue: inSection("messages", queueLayer(config.messages, sql)),
    worker: workerOptions(config.messages),
    ...optional("events", events && inSection("events", events)),
    attachments: {
      ...optional("idSecret", config.attachmentIdSecret),
      requireContentLength: config.requireContentLength
    },
    ...optional(
      "rateLimiter",
      rateLimiting.layer &&
        inSection("provider", Startup.asDependency("sending.rateLimit.from", config, rateLimiting.layer))
    ),
    mailer: {
      shutdown,
      ...optional("attachmentBytesInFlight", config.sending.attachmentBytesInFlight),
      // The config checked it is a duration Effect reads.
      ...optional("attachmentBudgetWait", config.sending.attachmentBudgetWait as Duration.Input | undefined)
    }
  })
  const watched = Layer.mergeAll(
    Layer.empty,
    ...redisUrls(config).map((redisUrl) => health.watchRedis(redisUrl).pipe(Layer.provide(redis(redisUrl)))),
    ...(config.tracing === undefined ? [] : [Telemetry.tracingLayer(config.tracing)])
  )
  // Provided to the layers too: what their own fibers count (the send queue's worker) is on /metrics.
  return ManagedRuntime.make(Layer.merge(layer, watched).pipe(Layer.provideMerge(Telemetry.registryLayer())))
}
