// Delivers each organisation's events to its webhook URL, signed with Standard Webhooks, from a durable
// queue per organisation (Effect's PersistedQueue: on disk, in Redis or in memory), retried with backoff.
import { createHmac } from "node:crypto"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import type * as Config from "effect/Config"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as PersistedQueue from "effect/persistence/PersistedQueue"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import { invalidOption, type Secret, secretValue } from "./internal/options.js"
import * as MailEvent from "./MailEvent.js"
import * as MailEvents from "./MailEvents.js"
import type { Organizations } from "./Organizations.js"

/** Where one organisation's events are sent, and the secret they are signed with. */
export interface Endpoint {
  readonly organizationId: string
  /** Where the organisation's events are POSTed. Redirects are not followed. */
  readonly url: string
  /** The Standard Webhooks signing secret: `whsec_` and the key in base64 (24 to 64 bytes). */
  readonly secret: Secret
}

/** How a failed delivery is tried again. */
export interface RetryPolicy {
  /** Wait before the first retry, doubled after each failure (with ±20% jitter). Default 5 seconds. */
  readonly firstDelay?: Duration.Input
  /** No wait between attempts is longer. Default 1 hour. */
  readonly maxDelay?: Duration.Input
  /** An event still undelivered this long after it was queued is given up, with an error log line. Default 24 hours. */
  readonly giveUpAfter?: Duration.Input
}

// The answer's body is not needed. A short one is read to its end, which lets the connection serve the
// next attempt; past 64 KiB the rest is cancelled (the connection closed), never held: a receiver that
// answers with a download or a stream would otherwise fill the memory until the attempt's timeout.
const discardBodyBytes = 65_536
const discardBody = async (body: ReadableStream<Uint8Array> | null) => {
  if (body === null) return
  const reader = body.getReader()
  try {
    for (let read = 0; read <= discardBodyBytes; ) {
      const chunk = await reader.read()
      if (chunk.done) return
      read += chunk.value.byteLength
    }
    await reader.cancel()
  } catch {
    // A body cut off by the receiver or by the attempt's timeout: the status is what counts.
  }
}

/** The endpoints, the retries, the deliveries' timeout and concurrency, the queue and the `fetch` they use. */
export interface Options {
  readonly endpoints: ReadonlyArray<Endpoint>
  readonly retry?: RetryPolicy
  /** How long one attempt may take; a slower receiver counts as failed. Default 15 seconds. */
  readonly timeout?: Duration.Input
  /** Attempts in flight at once for each organisation (each has a queue of its own). Default 4. */
  readonly concurrency?: number
  /** The queues' name in their store, followed by `/` and the organisation's id. Default `"mailroom-webhooks"`. */
  readonly queueName?: string
  /** Default: the global `fetch`. */
  readonly fetch?: typeof globalThis.fetch
}

/** One attempt that did not get a 2xx answer. */
export class DeliveryFailed extends Data.TaggedError("DeliveryFailed")<{ readonly message: string }> {}

/** What the queue holds for each event: the exact body, so every retry sends the same bytes. */
const Queued = Schema.Struct({
  organizationId: Schema.String,
  eventId: Schema.String,
  body: Schema.String,
  queuedAt: Schema.Number
})

const secretProblem = 'must be a Standard Webhooks secret, "whsec_" followed by 24 to 64 bytes in base64'

/** The key of a `whsec_` secret; undefined when it is not one. */
const signingKeyOf = (secret: Secret): Buffer | undefined => {
  const value = secretValue(secret)
  const encoded = value.startsWith("whsec_") ? value.slice(6) : undefined
  const key =
    encoded !== undefined && /^[A-Za-z0-9+/]+={0,2}$/.test(encoded) ? Buffer.from(encoded, "base64") : undefined
  return key === undefined || key.byteLength < 24 || key.byteLength > 64 ? undefined : key
}

/** The key of a `whsec_` secret, or a thrown error naming what is wrong with it (for checks outside an Effect). */
export const signingKey = (secret: Secret, what = "secret"): Buffer => {
  const key = signingKeyOf(secret)
  if (key === undefined) throw new Error(`${what}: ${secretProblem}`)
  return key
}

/** The `webhook-signature` header: `v1,` and the base64 HMAC-SHA256 of `{id}.{timestamp}.{body}`. */
export const signature = (key: Buffer, id: string, timestamp: number, body: string): string =>
  `v1,${createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest("base64")}`

const encodeEvent = Schema.encodeSync(Schema.toCodecJson(MailEvent.MailEvent))

/**
 * A sink that queues each event of an organisation with an endpoint, and the workers that deliver them
 * (stopped when the scope closes; an attempt cut short is tried again, not counted). Delivery is at
 * least once: every retry of an event carries the same `webhook-id` (the event id) and body.
 */
export const make = (
  options: Options
): Effect.Effect<MailEvents.Sink, Config.ConfigError, PersistedQueue.PersistedQueueFactory | Scope.Scope> =>
  Effect.gen(function* () {
    const endpoints = new Map<string, { readonly url: string; readonly key: Buffer }>()
    for (const [i, endpoint] of options.endpoints.entries()) {
      if (endpoints.has(endpoint.organizationId)) {
        return yield* Effect.fail(
          invalidOption(["endpoints", i], `organisation ${endpoint.organizationId} already has an endpoint`)
        )
      }
      if (!URL.canParse(endpoint.url) || !/^https?:$/.test(new URL(endpoint.url).protocol)) {
        return yield* Effect.fail(invalidOption(["endpoints", i, "url"], "must be an http(s) URL"))
      }
      const key = signingKeyOf(endpoint.secret)
      if (key === undefined) return yield* Effect.fail(invalidOption(["endpoints", i, "secret"], secretProblem))
      endpoints.set(endpoint.organizationId, { url: endpoint.url, key })
    }
    const millis = (input: Duration.Input | undefined, fallback: Duration.Input) =>
      Duration.toMillis(Duration.fromInputUnsafe(input ?? fallback))
    const firstDelay = millis(options.retry?.firstDelay, "5 seconds")
    const maxDelay = millis(options.retry?.maxDelay, "1 hour")
    const giveUpAfter = millis(options.retry?.giveUpAfter, "24 hours")
    const timeout = millis(options.timeout, "15 seconds")
    const fetchImpl = options.fetch ?? globalThis.fetch

    const queueName = options.queueName ?? "mailroom-webhooks"
    const queueNamed = (name: string) =>
      PersistedQueue.make({
        name,
        schema: Queued,
        // The age of an event decides when to give up (a restart does not reset it); this only keeps
        // the count within what every store can hold.
        maxAttempts: 2_147_483_647,
        retrySchedule: Schedule.min([Schedule.exponential(firstDelay), Schedule.spaced(maxDelay)]).pipe(
          Schedule.jittered
        )
      })
    // A queue and workers per organisation: a receiver that is down or slow holds its own organisation's
    // workers until their attempts time out, never another's (one shared queue let it hold them all).
    const queues = new Map<string, PersistedQueue.PersistedQueue<typeof Queued.Type>>()
    for (const organizationId of endpoints.keys()) {
      queues.set(organizationId, yield* queueNamed(`${queueName}/${organizationId}`))
    }
    // Events queued by a version with one shared queue are still delivered from it.
    const shared = yield* queueNamed(queueName)

    const attempt = (queued: typeof Queued.Type, attempts: number) =>
      Effect.gen(function* () {
        const endpoint = endpoints.get(queued.organizationId)
        if (endpoint === undefined) {
          return yield* Effect.logWarning(
            `[mailroom] dropped event ${queued.eventId}: organisation ${queued.organizationId} no longer has a webhook endpoint`
          )
        }
        const now = yield* Clock.currentTimeMillis
        if (now - queued.queuedAt > giveUpAfter) {
          return yield* Effect.logError(
            `[mailroom] gave up on event ${queued.eventId} for organisation ${queued.organizationId} after ${attempts - 1} attempts over ${Duration.format(Duration.millis(now - queued.queuedAt))}`
          )
        }
        const timestamp = Math.floor(now / 1000)
        const status = yield* Effect.tryPromise({
          try: async (signal) => {
            const response = await fetchImpl(endpoint.url, {
              method: "POST",
              redirect: "manual",
              headers: {
                "content-type": "application/json",
                "user-agent": "mailroom-webhooks",
                "webhook-id": queued.eventId,
                "webhook-timestamp": String(timestamp),
                "webhook-signature": signature(endpoint.key, queued.eventId, timestamp, queued.body)
              },
              body: queued.body,
              signal: AbortSignal.any([signal, AbortSignal.timeout(timeout)])
            })
            await discardBody(response.body)
            return response.status
          },
          catch: (cause) => new DeliveryFailed({ message: String((cause as Error)?.message ?? cause) })
        })
        if (status < 200 || status > 299) return yield* new DeliveryFailed({ message: `answered ${status}` })
      }).pipe(
        Effect.tapError((error) =>
          Effect.logWarning(
            `[mailroom] webhook attempt ${attempts} of event ${queued.eventId} for organisation ${queued.organizationId} failed (${error.message}); it will be retried`
          )
        )
      )

    const worker = (queue: PersistedQueue.PersistedQueue<typeof Queued.Type>) =>
      queue
        .take((queued, { attempts }) => attempt(queued, attempts))
        .pipe(
          Effect.catchCause((cause) => {
            if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause)
            const error = Cause.findErrorOption(cause)
            // A failed attempt is already logged and scheduled again by the queue.
            if (error._tag === "Some" && error.value._tag === "DeliveryFailed") return Effect.void
            // The store itself failed (a full disk, Redis gone): say so, and do not spin.
            return Effect.logError(`[mailroom] webhook queue: ${Cause.pretty(cause)}`).pipe(
              Effect.andThen(Effect.sleep("1 second"))
            )
          }),
          Effect.forever
        )
    for (const queue of [...queues.values(), shared]) {
      for (let i = 0; i < Math.max(1, options.concurrency ?? 4); i++) yield* Effect.forkScoped(worker(queue))
    }

    return {
      deliver: (events) =>
        Effect.gen(function* () {
          const now = yield* Clock.currentTimeMillis
          yield* Effect.forEach(
            events.flatMap((event) => {
              const queue = queues.get(event.organization_id)
              return queue === undefined ? [] : [{ event, queue }]
            }),
            ({ event, queue }) =>
              queue.offer(
                {
                  organizationId: event.organization_id,
                  eventId: event.id,
                  body: JSON.stringify(encodeEvent(event)),
                  queuedAt: now
                },
                // The event id is the queue id: a provider's redelivery of a record is not queued twice.
                { id: event.id }
              ),
            { discard: true }
          )
        }).pipe(
          Effect.mapError(
            (cause) => new MailEvents.MailEventsError({ message: "the webhook queue could not take the events", cause })
          )
        )
    } satisfies MailEvents.Sink
  })

/** `MailEvents` whose events also go to each organisation's webhook endpoint; a bad endpoint fails it with a `ConfigError` naming it. */
export const layer = (
  options: Options
): Layer.Layer<MailEvents.MailEvents, Config.ConfigError, PersistedQueue.PersistedQueueFactory | Organizations> =>
  Layer.effect(
    MailEvents.MailEvents,
    Effect.gen(function* () {
      const sink = yield* make(options)
      return yield* MailEvents.make({ sinks: [sink] })
    })
  )
