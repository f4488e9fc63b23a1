// The send queue's service key and shape, apart from its implementations and its worker: the Mailer
// offers to it and the worker sends through the Mailer, so this is what both import.
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { Unavailable } from "../MailroomError.js"
import type { Due } from "../MessageLog.js"

/** Which look this is: its attempt (1 for the first), and whether another will follow if it fails. */
export interface Attempt {
  readonly attempts: number
  readonly last: boolean
}

/** Says when each scheduled message is looked at: offered once, taken when due, by any instance. */
export interface SendQueue {
  /**
   * Asks for `due.id` to be looked at when `due.scheduledAt` comes (at once when it has). One look per
   * message and time however often it is offered, so a retried schedule or reschedule adds nothing.
   */
  readonly offer: (due: Due) => Effect.Effect<void, Unavailable>
  /**
   * Waits for the next due look and runs `handle` on it. A look that fails is tried again later, with
   * backoff, until its last attempt; one cut short by an interruption is tried again without counting.
   */
  readonly take: <E, R>(
    handle: (due: Due, attempt: Attempt) => Effect.Effect<void, E, R>
  ) => Effect.Effect<void, E | Unavailable, R>
  /** Reaches the queue's store (readiness): fails with `Unavailable` when it cannot. */
  readonly check: Effect.Effect<void, Unavailable>
}

/** The service key of the send queue. */
export const SendQueue: Context.Service<SendQueue, SendQueue> = Context.Service("@mailroom/core/SendQueue")
