// Where delivery events go: each is routed to the organisation that sent its message (one for no known
// organisation is dropped with a log line), handed to the durable sinks, then to in-process subscribers.
import { Context, Data, Effect, Layer, PubSub, type Scope, Stream } from "effect"
import type * as MailEvent from "./MailEvent.js"
import { Organizations } from "./Organizations.js"

/** A durable destination (a webhook queue) failed to take the events: the caller should answer so the provider retries. */
const TypeId = Symbol.for("@mailroom/core/MailEventsError")

export class MailEventsError extends Data.TaggedError("MailEventsError")<{
  readonly message: string
  readonly cause?: unknown
}> {
  readonly [TypeId] = TypeId
  /** The destination (a queue) may take them later: the provider is asked to send them again. */
  readonly isRetryable = true
}

/** True for a MailEventsError from any copy of this package. */
export const isMailEventsError = (u: unknown): u is MailEventsError =>
  typeof u === "object" && u !== null && TypeId in u

/** A durable destination: `deliver` returns once the events are safe (written to disk or Redis), not delivered. */
export interface Sink {
  readonly deliver: (events: ReadonlyArray<MailEvent.MailEvent>) => Effect.Effect<void, MailEventsError>
}

export interface SubscribeOptions {
  /** Only this organisation's events. Default: every organisation's. */
  readonly organizationId?: string
}

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

export interface Options {
  /** Durable destinations, each awaited by `publish`. Default: none (subscribers only). */
  readonly sinks?: ReadonlyArray<Sink>
}

const only = (options: SubscribeOptions | undefined) => (event: MailEvent.MailEvent) =>
  options?.organizationId === undefined || event.organization_id === options.organizationId

export const make = Effect.fnUntraced(function* (options: Options = {}) {
  const organizations = yield* Organizations
  const sinks = options.sinks ?? []
  const hub = yield* PubSub.unbounded<MailEvent.MailEvent>()
  yield* Effect.addFinalizer(() => PubSub.shutdown(hub))

  const route = (event: MailEvent.Unrouted) => {
    const orgId = event.organization_id
    const dropped = (why: string) =>
      Effect.logWarning(
        `[mailroom] dropped a ${event.provider} ${event.type} event of message ${event.message_id}: ${why}`
      ).pipe(Effect.as([] as ReadonlyArray<MailEvent.MailEvent>))
    if (orgId === undefined) return dropped("it names no organisation (was it sent through mailroom?)")
    return organizations.find(orgId).pipe(
      Effect.as([{ ...event, organization_id: orgId }]),
      Effect.catchTag("NotFound", () => dropped(`no organisation ${orgId}`)),
      // The organisations cannot be looked up now: failing lets the provider deliver the event again later.
      Effect.catchTag(
        "Unavailable",
        (cause) => new MailEventsError({ message: `organisation ${orgId} cannot be looked up now`, cause })
      )
    )
  }

  return MailEvents.of({
    publish: (events) =>
      Effect.gen(function* () {
        const routed = (yield* Effect.forEach(events, route)).flat()
        if (routed.length === 0) return routed
        yield* Effect.forEach(sinks, (sink) => sink.deliver(routed), { discard: true })
        yield* PubSub.publishAll(hub, routed)
        return routed
      }),
    subscribe: (subscribeOptions) =>
      Effect.map(PubSub.subscribe(hub), (subscription) =>
        Stream.fromSubscription(subscription).pipe(Stream.filter(only(subscribeOptions)))
      ),
    stream: (subscribeOptions) => Stream.fromPubSub(hub).pipe(Stream.filter(only(subscribeOptions)))
  })
})

/** Events for in-process subscribers, and for `sinks` when given. */
export const layer = (options: Options = {}): Layer.Layer<MailEvents, never, Organizations> =>
  Layer.effect(MailEvents, make(options))
