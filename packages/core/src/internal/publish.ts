// What a local provider does with the events of a message it accepted: those of now published at
// once, those a simulator address acts out later (`delayed@`'s delivery) after the delay.
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type * as MailEvent from "../MailEvent.js"
import type { MailEvents } from "../MailEvents.js"
import type { Acted } from "../Simulator.js"

/** How long `delayed@simulator.mailroom.test` waits between its `deferred` and its `delivered`, unless told. */
export const defaultSimulatedDelay: Duration.Duration = Duration.seconds(1)

const publish = (events: MailEvents, accepted: ReadonlyArray<MailEvent.Unrouted>): Effect.Effect<void> =>
  accepted.length === 0
    ? Effect.void
    : events.publish(accepted).pipe(
        Effect.catchTag("MailEventsError", (error) =>
          Effect.logError(`[mailroom] the events of message ${accepted[0]?.message_id} were lost: ${error.message}`)
        ),
        Effect.asVoid
      )

/**
 * Where a send in progress holds the events of now that a local provider accepted, when core sends
 * through `Delivery.sendThen`: published as the provider's answer is recorded, not before it, so that
 * on a log with group commit (SQLite) the events and the answer share one commit before the reply.
 * Outside such a send (a provider called on its own) there is none, and they are published at once.
 */
export const HeldEvents: Context.Reference<Held | undefined> = Context.Reference<Held | undefined>(
  "@mailroom/core/HeldEvents",
  {
    defaultValue: () => undefined
  }
)

/** The publications a send holds; closed once its provider has answered, after which none is held. */
export interface Held {
  open: boolean
  readonly publications: Array<Effect.Effect<void>>
}

/** The events of now: published at once, or held by the send in progress. */
const publishNow = (events: MailEvents, accepted: ReadonlyArray<MailEvent.Unrouted>): Effect.Effect<void> =>
  accepted.length === 0
    ? Effect.void
    : Effect.flatMap(HeldEvents, (held) => {
        if (held === undefined || !held.open) return publish(events, accepted)
        held.publications.push(publish(events, accepted))
        return Effect.void
      })

/**
 * Publishes the events of a message a local provider accepted: those of now at once, or held by the
 * send in progress (`HeldEvents`) until its outcome is recorded. The message is sent whatever happens
 * to its events, so a failure to queue them is logged, not returned. Events for later are published
 * `delay` from now (on the `Clock`, so a `TestClock` moves them), in a fiber of `scope` when given
 * (the provider's layer), else of its own; the send does not wait for them.
 */
export const publishAccepted = (
  events: MailEvents,
  accepted: ReadonlyArray<MailEvent.Unrouted> | Acted,
  options: { readonly delay?: Duration.Duration; readonly scope?: Scope.Scope | undefined } = {}
): Effect.Effect<void> => {
  if (!("now" in accepted)) return publishNow(events, accepted)
  const later = Effect.andThen(Effect.sleep(options.delay ?? defaultSimulatedDelay), publish(events, accepted.later))
  return Effect.andThen(
    publishNow(events, accepted.now),
    accepted.later.length === 0
      ? Effect.void
      : options.scope === undefined
        ? Effect.asVoid(Effect.forkDetach(later))
        : Effect.asVoid(Effect.forkIn(later, options.scope))
  )
}
