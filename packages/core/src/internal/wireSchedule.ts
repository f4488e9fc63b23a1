// The wire schemas of sending later and sending many: `scheduled_at` and its bounds, the answers of a
// scheduled send, a cancel and a reschedule, and the per-item answer of `POST /emails/batch`.
import * as Schema from "effect/Schema"
import { Timestamp } from "./wireMessages.js"

/** The soonest a message may be scheduled, from now: 1 second. */
export const minScheduleLeadMillis = 1000
/** The latest a message may be scheduled, from now: 30 days. */
export const maxScheduleLeadMillis = 30 * 24 * 60 * 60 * 1000
/** The most send requests one batch holds. */
export const maxBatchItems = 100

/** `scheduled_at`: an RFC 3339 date-time with an offset, 1 second to 30 days ahead, stored as UTC. */
export const ScheduledAt = Timestamp.annotate({
  description: "When to send: RFC 3339 with an offset, at least 1 second and at most 30 days ahead"
})

const Suppressed = Schema.optionalKey(Schema.Array(Schema.String))

/** `POST /emails` with `scheduled_at`, answered 202: the message waits for its time. */
export const ScheduledEmailResponse = Schema.Struct({
  message_id: Schema.String,
  status: Schema.Literal("scheduled"),
  /** UTC, to the millisecond. */
  scheduled_at: Schema.String,
  /** The recipients dropped because the organisation suppressed them; absent when none was. */
  suppressed: Suppressed
}).annotate({ identifier: "ScheduledEmailResponse" })
export type ScheduledEmailResponse = typeof ScheduledEmailResponse.Type

/** `PATCH /emails/{id}`'s body. */
export const RescheduleRequest = Schema.Struct({ scheduled_at: ScheduledAt }).annotate({
  identifier: "RescheduleRequest"
})
export type RescheduleRequest = typeof RescheduleRequest.Type

/** `POST /emails/{id}/cancel`'s answer. */
export const CancelResponse = Schema.Struct({
  message_id: Schema.String,
  status: Schema.Literal("cancelled")
}).annotate({ identifier: "CancelResponse" })
export type CancelResponse = typeof CancelResponse.Type

const Index = Schema.Int.pipe(Schema.check(Schema.isBetween({ minimum: 0, maximum: maxBatchItems - 1 })))

/** An item of a batch that was sent, or scheduled. */
export const BatchAccepted = Schema.Struct({
  index: Index,
  message_id: Schema.String,
  status: Schema.Literals(["sent", "scheduled"]),
  scheduled_at: Schema.optionalKey(Schema.String),
  suppressed: Suppressed
}).annotate({ identifier: "BatchAccepted" })
export type BatchAccepted = typeof BatchAccepted.Type

/** An item of a batch that was not: one message per problem, each naming its field, as `POST /emails` answers. */
export const BatchRefused = Schema.Struct({
  index: Index,
  errors: Schema.Array(Schema.String)
}).annotate({ identifier: "BatchRefused" })
export type BatchRefused = typeof BatchRefused.Type

/** `POST /emails/batch`'s answer: each item in `data` or in `errors`, by its index in the request. */
export const SendBatchResponse = Schema.Struct({
  data: Schema.Array(BatchAccepted),
  errors: Schema.Array(BatchRefused)
}).annotate({ identifier: "SendBatchResponse" })
export type SendBatchResponse = typeof SendBatchResponse.Type
