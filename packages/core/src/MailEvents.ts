// Where delivery events go: each is routed to the organisation that sent its message (one for no known
// organisation is dropped with a log line), recorded on its message (suppressing a recipient that
// bounced hard or complained), handed to the durable sinks, then to in-process subscribers.
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
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

  /**
   * An event naming no organisation, with the organisation and the message's own id found in the log
   * by the provider's id. One naming its organisation is looked up only if the log has no record
   * under its `message_id` (`apply`): events nearly always carry mailroom's own id.
   */
  const identify = (event: MailEvent.Unrouted): Effect.Effect<MailEvent.Unrouted, Unavailable> =>
    log === undefined || event.organization_id !== undefined
      ? Effect.succeed(event)
      : Effect.map(log.resolve(event.provider, event.message_id), (found) =>
          found === undefined ? event : byMailroomId(event, found.id, found.organizationId)
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

  return MailEvents.of({
    publish: (events) =>
      Effect.gen(function* () {
        const routed = (yield* Effect.forEach(events, route)).flat()
        if (routed.length === 0) return routed
        const recorded = log === undefined ? routed : yield* apply(log, routed)
        if (suppressions !== undefined) yield* suppress(suppressions, recorded)
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

const unrecorded: MessageLog.Applied = { applied: false, found: false, tags: [] }

/** The event under the message's own id, the id it named kept as the provider's. */
const byMailroomId = (event: MailEvent.Unrouted, id: string, organizationId: string): MailEvent.Unrouted => ({
  ...event,
  organization_id: event.organization_id ?? organizationId,
  message_id: id,
  provider_message_id: event.message_id
})

/**
 * The events applied to their messages in one write: those the log has no record of under their
 * `message_id`, and which carry no other id, are looked up by it as the provider's id and applied
 * again (a second write, only then). Answers the events as published, each with its message's tags.
 */
const apply = (
  log: MessageLog.MessageLog,
  routed: ReadonlyArray<MailEvent.MailEvent>
): Effect.Effect<ReadonlyArray<MailEvent.MailEvent>, Unavailable> =>
  Effect.gen(function* () {
    const events = [...routed]
    const results = [...(yield* log.applyAll(events))]
    const unknown = events.flatMap((event, i) =>
      results[i]?.found === false && event.provider_message_id === undefined ? [i] : []
    )
    if (unknown.length > 0) {
      const again: Array<number> = []
      for (const i of unknown) {
        const event = events[i] as MailEvent.MailEvent
        const found = yield* log.resolve(event.provider, event.message_id)
        if (found === undefined || found.id === event.message_id) continue
        events[i] = { ...byMailroomId(event, found.id, found.organizationId), organization_id: event.organization_id }
        again.push(i)
      }
      const reapplied =
        again.length === 0 ? [] : yield* log.applyAll(again.map((i) => events[i] as MailEvent.MailEvent))
      again.forEach((i, n) => {
        results[i] = reapplied[n] ?? unrecorded
      })
    }
    return events.map((event, i) => {
      const tags = results[i]?.tags ?? []
      return tags.length === 0 ? event : { ...event, tags }
    })
  })

/** The recipients of hard bounces and complaints suppressed, one write per organisation. */
const suppress = (
  suppressions: Suppressions.Suppressions,
  events: ReadonlyArray<MailEvent.MailEvent>
): Effect.Effect<void, Unavailable> => {
  const byOrganization = new Map<string, Array<Suppressions.NewSuppression>>()
  for (const event of events) {
    const reason = suppressionOf(event)
    if (reason === undefined || event.recipient === null) continue
    const entries = byOrganization.get(event.organization_id) ?? []
    entries.push({
      email: event.recipient,
      reason,
      messageId: event.message_id,
      ...(event.bounce?.diagnostic === undefined ? {} : { detail: event.bounce.diagnostic })
    })
    byOrganization.set(event.organization_id, entries)
  }
  if (byOrganization.size === 0) return Effect.void
  // Added again on a redelivered event too: the suppression is what matters, and adding is idempotent.
  return Effect.flatMap(Clock.currentTimeMillis, (now) =>
    Effect.forEach(
      byOrganization,
      ([organizationId, entries]) => suppressions.add(organizationId, entries, new Date(now).toISOString()),
      { discard: true }
    )
  )
}

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
