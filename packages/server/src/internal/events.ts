// The events section of the config as layers: where events go (webhooks from a durable queue on disk,
// on Redis or in memory) and the providers' webhooks the server answers (SES, Postmark, Resend).
import type { EventSource, MailEvents, MailroomError, Organizations } from "@mailroom/core"
import { WebhookDelivery } from "@mailroom/core"
import { DiskQueueStore } from "@mailroom/local"
import type * as Config from "effect/Config"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as PersistedQueue from "effect/persistence/PersistedQueue"
import type * as Redis from "effect/persistence/Redis"
import * as Redacted from "effect/Redacted"
import type { EventsConfig } from "../ServerConfig.js"
import { fromAdapter } from "./configError.js"
import { lazy } from "./lazy.js"

const optional = <K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } =>
  (value === undefined ? {} : { [key]: value }) as { [P in K]?: V }

/**
 * `MailEvents` delivering to the configured webhooks, or undefined when there are none (core's
 * default: in-process subscribers only). Completed entries are kept two days, beyond the 24 h a
 * provider's redelivery can take, so a redelivered record is not queued twice.
 */
export const eventsLayer = (
  events: EventsConfig | undefined,
  /** The connection to a Redis URL, the same layer for the same URL so the server opens it once. */
  redis: (url: string) => Layer.Layer<Redis.Redis, Config.ConfigError | MailroomError.Unavailable>
):
  | Layer.Layer<
      MailEvents.MailEvents,
      Config.ConfigError | PersistedQueue.PersistedQueueError | MailroomError.Unavailable,
      Organizations.Organizations
    >
  | undefined => {
  if (events === undefined || events.webhooks.length === 0) return undefined
  const { queue: config } = events
  const store: Layer.Layer<
    PersistedQueue.PersistedQueueStore,
    Config.ConfigError | PersistedQueue.PersistedQueueError | MailroomError.Unavailable
  > =
    config.kind === "local"
      ? DiskQueueStore.layer({ dir: config.dir })
      : config.kind === "redis"
        ? lazy(async () =>
            (await import("@mailroom/redis")).RedisQueueStore.layerFromClient(optional("prefix", config.prefix))
          ).pipe(Layer.provide(redis(config.url)))
        : PersistedQueue.layerStoreMemory
  const queue = Layer.merge(PersistedQueue.layer, PersistedQueue.layerCleanup({ timeToLive: "2 days" })).pipe(
    Layer.provide(store)
  )
  return WebhookDelivery.layer({
    endpoints: events.webhooks.map((webhook) => ({
      organizationId: webhook.organization,
      url: webhook.url,
      secret: webhook.secret
    })),
    // The config checked each one is a duration Effect reads.
    retry: events.retry as WebhookDelivery.RetryPolicy,
    ...optional("timeout", events.timeout as Duration.Input | undefined)
  }).pipe(Layer.provide(queue))
}

/**
 * The providers' webhooks the config turns on, each served at `POST /webhooks/{name}`; each provider's
 * package is imported only when its webhook is on. Rejects with a ServerConfigError naming the field
 * for an option a source refuses.
 */
export const eventSources = async (
  events: EventsConfig | undefined
): Promise<ReadonlyArray<EventSource.EventSource>> => {
  const { ses, postmark, resend } = events ?? {}
  return [
    ...(ses === undefined
      ? []
      : [
          await Effect.runPromise(
            (await import("@mailroom/ses")).SesEventSource.make({
              topicArns: ses.topicArns,
              ...optional("eventBridgeSecret", ses.eventBridgeSecret),
              ...optional("eventBridgeHeader", ses.eventBridgeHeader)
            }).pipe(Effect.mapError((error) => fromAdapter("events.ses", error)))
          )
        ]),
    ...(postmark === undefined
      ? []
      : [
          await Effect.runPromise(
            (await import("@mailroom/postmark")).PostmarkEventSource.make(postmark).pipe(
              Effect.mapError((error) => fromAdapter("events.postmark", error))
            )
          )
        ]),
    ...(resend === undefined
      ? []
      : [
          await Effect.runPromise(
            (await import("@mailroom/resend")).ResendEventSource.make({
              secret: Redacted.make(resend.secret),
              ...optional("tolerance", resend.tolerance as Duration.Input | undefined)
            }).pipe(Effect.mapError((error) => fromAdapter("events.resend", error)))
          )
        ])
  ]
}
