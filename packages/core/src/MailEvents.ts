// Where delivery events go: each is routed to the organisation that sent its message (one for no known
// organisation is dropped with a log line), recorded on its message (suppressing a recipient that
// bounced hard or complained), handed to the durable sinks, then to in-process subscribers.
import { Clock, Context, Data, Effect, Layer, Option, PubSub, type Scope, Stream } from "effect"
import { guard, mark } from "./internal/reasonError.js"
import type * as MailEvent from "./MailEvent.js"
import type { Unavailable } from "./MailroomError.js"
import * as MessageLog from "./MessageLog.js"
import { Organizations } from "./Organizations.js"
import * as Suppressions from "./Suppressions.js"

/** A durable destination (a webhook queue) failed to take the events: the caller should answer so the provider retries. */
export class MailEventsError extends Data.TaggedError("MailEventsError")<{
  readonly message: string
  readonly cause?: unknown
}> {
  /** The destination (a queue) may take them later: the provider is asked to send them again. */
  readonly isRetryable = true
}
mark(MailEventsError, "MailEventsError")

/** True for a MailEventsError from any copy of this package. */
export const isMailEventsError = guard<MailEventsError>("MailEventsError")

/** A durable destination: `deliver` returns once the events are safe (written to disk or Redis), not delivered. */
export interface Sink {
  readonly deliver: (events: ReadonlyArray<MailEvent.MailEvent>) => Effect.Effect<void, MailEventsError>
}

/** Which events a subscriber gets. */
export interface SubscribeOptions {
  /** Only this organisation's events. Default: every organisation's. */
  readonly organizationId?: string
}

/** Where delivery events go: routed, recorded, handed to sinks, then to subscribers. */
export interface MailEvents {
  /**
   * Routes the events, hands them to every sink, then to subscribers; answers the events that were
   * routed. Fails, delivering nothing to subscribers, when a sink fails.
   */
  readonly publish: (
    events: ReadonlyArray<MailEvent.Unrouted>
  ) => Effect.Effect<ReadonlyArray<MailEvent.MailEvent>, MailEventsError>
  /**
   * Subscribes now, and answers the stream of events published from now on (until the scope closes).
   * In-process subscribers are a live feed: events published while nobody subscribes are not kept, and
   * a subscriber's backlog waits in memory. For delivery that survives a restart, use a sink.
   */
  readonly subscribe: (
    options?: SubscribeOptions
  ) => Effect.Effect<Stream.Stream<MailEvent.MailEvent>, never, Scope.Scope>
  /** The same events as a stream that subscribes when it starts running. */
  readonly stream: (options?: SubscribeOptions) => Stream.Stream<MailEvent.MailEvent>
}

export const MailEvents: Context.Service<MailEvents, MailEvents> = Context.Service("@mailroom/core/MailEvents")

/** The durable destinations `publish` awaits. */
export interface Options {
  /** Durable destinations, each awaited by `publish`. Default: none (subscribers only). */
  readonly sinks?: ReadonlyArray<Sink>
}

const only = (options: SubscribeOptions | undefined) => (event: MailEvent.MailEvent) =>
  options?.organizationId === undefined || event.organization_id === options.organizationId

/** The service on the `Organizations` (and, when provided, the message log and suppressions) in context. */
export const make = Effect.fnUntraced(function* (options: Options = {}) {
  const organizations = yield* Organizations
  // Optional: with a log (as `Mailroom.layer` provides), every event is recorded on its message.
  const log = Option.getOrUndefined(yield* Effect.serviceOption(MessageLog.MessageLog))
  const suppressions = Option.getOrUndefined(yield* Effect.serviceOption(Suppressions.Suppressions))
  const sinks = options.sinks ?? []
  const hub = yield* PubSub.unbounded<MailEvent.MailEvent>()
  yield* Effect.addFinalizer(() => PubSub.shutdown(hub))

  const dropped = (event: MailEvent.Unrouted, why: string) =>
    Effect.logWarning(
      `[mailroom] dropped a ${event.provider} ${event.type} event of message ${event.message_id}: ${why}`
    ).pipe(Effect.as([] as ReadonlyArray<MailEvent.MailEvent>))

  /** The organisation and the message's own id, from the event or, when it names neither, from the log. */
  const identify = (event: MailEvent.Unrouted): Effect.Effect<MailEvent.Unrouted, Unavailable> =>
    log === undefined || (event.organization_id !== undefined && event.provider_message_id !== undefined)
      ? Effect.succeed(event)
      : Effect.map(log.resolve(event.provider, event.message_id), (found) =>
          found === undefined
            ? event
            : {
                ...event,
                organization_id: event.organization_id ?? found.organizationId,
                message_id: found.id,
                provider_message_id: event.message_id
              }
        )

  const route = (unrouted: MailEvent.Unrouted) =>
    Effect.flatMap(identify(unrouted), (event) => {
      const orgId = event.organization_id
      if (orgId === undefined) return dropped(event, "it names no organisation (was it sent through mailroom?)")
      return organizations.find(orgId).pipe(
        Effect.as([{ ...event, organization_id: orgId }]),
        Effect.catchTag("NotFound", () => dropped(event, `no organisation ${orgId}`))
      )
    })

  /** The event recorded on its message, and its recipient suppressed on a hard bounce or a complaint. */
  const record = (event: MailEvent.MailEvent): Effect.Effect<MailEvent.MailEvent, Unavailable> =>
    Effect.flatMap(log === undefined ? Effect.succeed(unrecorded) : log.apply(event), ({ tags }) => {
      const reason = suppressionOf(event)
      const withTags = tags.length === 0 ? event : { ...event, tags }
      if (reason === undefined || event.recipient === null || suppressions === undefined)
        return Effect.succeed(withTags)
      // Added again on a redelivered event too: the suppression is what matters, and adding is idempotent.
      return Effect.as(
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          suppressions.add(
            event.organization_id,
            [
              {
                email: event.recipient ?? "",
                reason,
                messageId: event.message_id,
                ...(event.bounce?.diagnostic === undefined ? {} : { detail: event.bounce.diagnostic })
              }
            ],
            new Date(now).toISOString()
          )
        ),
        withTags
      )
    })

  return MailEvents.of({
    publish: (events) =>
      Effect.gen(function* () {
        const routed = (yield* Effect.forEach(events, route)).flat()
        if (routed.length === 0) return routed
        const recorded = yield* Effect.forEach(routed, record)
        yield* Effect.forEach(sinks, (sink) => sink.deliver(recorded), { discard: true })
        yield* PubSub.publishAll(hub, recorded)
        return recorded
      }).pipe(
        // The organisations or the log cannot be reached now: failing lets the provider deliver the events again later.
        Effect.catchTag(
          "Unavailable",
          (cause) => new MailEventsError({ message: `the events cannot be recorded now: ${cause.message}`, cause })
        )
      ),
    subscribe: (subscribeOptions) =>
      Effect.map(PubSub.subscribe(hub), (subscription) =>
        Stream.fromSubscription(subscription).pipe(Stream.filter(only(subscribeOptions)))
      ),
    stream: (subscribeOptions) => Stream.fromPubSub(hub).pipe(Stream.filter(only(subscribeOptions)))
  })
})

const unrecorded: MessageLog.Applied = { applied: false, tags: [] }

/** The suppression an event calls for: a hard bounce or a complaint of its recipient, nothing else. */
const suppressionOf = (event: MailEvent.MailEvent): Suppressions.Reason | undefined =>
  event.type === "complained"
    ? "complained"
    : event.type === "bounced" && event.bounce?.kind === "hard"
      ? "bounced"
      : undefined

/**
 * Events for in-process subscribers, and for `sinks` when given; recorded on their messages when a
 * `MessageLog` (and `Suppressions`) is provided, as `Mailroom.layer` does.
 */
export const layer = (options: Options = {}): Layer.Layer<MailEvents, never, Organizations> =>
  Layer.effect(MailEvents, make(options))
