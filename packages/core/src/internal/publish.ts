// What a local provider does with the events of a message it accepted.
import { Effect } from "effect"
import type * as MailEvent from "../MailEvent.js"
import type { MailEvents } from "../MailEvents.js"

/**
 * Publishes the events of a message a local provider accepted. The message is sent whatever happens
 * to its events, so a failure to queue them is logged, not returned.
 */
export const publishAccepted = (events: MailEvents, accepted: ReadonlyArray<MailEvent.Unrouted>): Effect.Effect<void> =>
  events.publish(accepted).pipe(
    Effect.catchTag("MailEventsError", (error) =>
      Effect.logError(`[mailroom] the events of message ${accepted[0]?.message_id} were lost: ${error.message}`)
    ),
    Effect.asVoid
  )
