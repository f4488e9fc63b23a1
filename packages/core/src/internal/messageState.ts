// How a message's recipients move between states: forward only, whatever order events come in, and
// the message's status derived from them. Shared by every MessageLog, in memory and on SQL.
import type * as MailEvent from "../MailEvent.js"
import type { Outcome, State } from "../MessageLog.js"

/** How far along each state is: a recipient's state only ever moves to a higher rank. */
const rank: Readonly<Record<State, number>> = {
  scheduled: 0,
  sending: 1,
  unknown: 2,
  sent: 2,
  delivery_delayed: 3,
  delivered: 4,
  failed: 5,
  bounced: 5,
  complained: 6,
  suppressed: 9,
  cancelled: 9
}

/** States no event moves on: the message never left (or the vendor refused it at the door). */
const untouchable: ReadonlySet<State> = new Set(["scheduled", "suppressed", "cancelled"])

/**
 * Where a delivery event takes a recipient in `from`; undefined when it leaves it where it is (an
 * older or lesser event, an open or click, a recipient that was never sent to). An `unknown`
 * recipient moves too: the vendor's event proves it accepted the message.
 */
export const advance = (from: State, event: MailEvent.Type): State | undefined => {
  const to = eventState[event]
  if (to === undefined || untouchable.has(from)) return undefined
  return rank[to] > rank[from] ? to : undefined
}

const eventState: Readonly<Partial<Record<MailEvent.Type, State>>> = {
  sent: "sent",
  deferred: "delivery_delayed",
  delivered: "delivered",
  bounced: "bounced",
  complained: "complained",
  rejected: "failed",
  failed: "failed"
}

/**
 * Where the provider's answer takes a recipient: only one still `sending` moves (an event may have
 * come first); `email`, when the outcome names it as suppressed, to `suppressed`.
 */
export const settled = (from: State, outcome: Outcome, email?: string): State | undefined => {
  if (from !== "sending") return undefined
  if (email !== undefined && outcome.suppressed?.includes(email)) return "suppressed"
  return outcome._tag === "Sent" ? "sent" : outcome._tag === "Failed" ? "failed" : "unknown"
}

/** Worst first: a message's status is the first of these that any recipient is in. */
const statusOrder: ReadonlyArray<State> = [
  "scheduled",
  "cancelled",
  "sending",
  "unknown",
  "failed",
  "complained",
  "bounced",
  "delivery_delayed",
  "sent",
  "delivered"
]

// Each state's place in `statusOrder`; `suppressed`, not in it, after all of them.
const statusPlace = Object.fromEntries(
  (Object.keys(rank) as ReadonlyArray<State>).map((state) => [
    state,
    statusOrder.includes(state) ? statusOrder.indexOf(state) : statusOrder.length
  ])
) as Readonly<Record<State, number>>

/**
 * A message's status from its recipients: the state of the one furthest from a good outcome
 * (`delivered` only when every recipient is), leaving out suppressed recipients unless all are.
 */
export const statusOf = (recipients: ReadonlyArray<{ readonly state: State }>): State => {
  // The lowest place in `statusOrder` among the recipients: every record written takes this.
  let worst = statusOrder.length
  for (const r of recipients) {
    const place = statusPlace[r.state]
    if (place < worst) worst = place
  }
  return statusOrder[worst] ?? "suppressed"
}
