// What a local provider does with the events of a message it accepted: those of now published at
// once, those a simulator address acts out later (`delayed@`'s delivery) after the delay.
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
 * Publishes the events of a message a local provider accepted. The message is sent whatever happens
 * to its events, so a failure to queue them is logged, not returned. Events for later are published
 * `delay` from now (on the `Clock`, so a `TestClock` moves them), in a fiber of `scope` when given
 * (the provider's layer), else of its own; the send does not wait for them.
 */
export const publishAccepted = (
  events: MailEvents,
  accepted: ReadonlyArray<MailEvent.Unrouted> | Acted,
  options: { readonly delay?: Duration.Duration; readonly scope?: Scope.Scope | undefined } = {}
): Effect.Effect<void> => {
  if (!("now" in accepted)) return publish(events, accepted)
  const later = Effect.andThen(Effect.sleep(options.delay ?? defaultSimulatedDelay), publish(events, accepted.later))
  return Effect.andThen(
    publish(events, accepted.now),
    accepted.later.length === 0
      ? Effect.void
      : options.scope === undefined
        ? Effect.asVoid(Effect.forkDetach(later))
        : Effect.asVoid(Effect.forkIn(later, options.scope))
  )
}
