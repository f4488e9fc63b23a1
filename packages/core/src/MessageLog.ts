// Every message mailroom accepted, as a record: each recipient's state, the delivery events that moved
// it, and what `GET /emails` answers. The send path writes it; delivery events only move it forward.

import type * as Config from "effect/Config"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Memory from "./internal/memoryMessageLog.js"
import * as Retention from "./internal/messageRetention.js"
import { v7 } from "./internal/uuid.js"
import { EmailTag } from "./internal/wireRules.js"
import type * as MailEvent from "./MailEvent.js"
import type { Unavailable, ValidationError } from "./MailroomError.js"

/**
 * A recipient's state. Mailroom's own: `scheduled` (waiting for its time), `sending`, `sent` (the
 * vendor accepted it), `suppressed` (dropped before sending: on the organisation's suppression list),
 * `cancelled`, `failed` (the vendor refused it), `unknown` (the vendor may have accepted it: never
 * sent again by itself). From the vendor's events: `delivery_delayed`, `delivered`, `bounced`,
 * `complained`.
 */
export const states = [
  "scheduled",
  "sending",
  "sent",
  "delivery_delayed",
  "delivered",
  "bounced",
  "complained",
  "suppressed",
  "cancelled",
  "failed",
  "unknown"
] as const
/** A recipient's state; it only moves forward. */
export const State = Schema.Literals(states)
export type State = typeof State.Type

/** Which list a recipient is on. */
export const RecipientKind = Schema.Literals(["to", "cc", "bcc"])
export type RecipientKind = typeof RecipientKind.Type

const Instant = Schema.String.annotate({ description: "ISO 8601, UTC, to the millisecond" })

/** Bytes: a whole number, so the API's document says `integer` rather than any number. */
const Bytes = Schema.Int.pipe(Schema.check(Schema.isGreaterThanOrEqualTo(0)))

/** One recipient of a message: address, list, state and what moved it. */
export const Recipient = Schema.Struct({
  email: Schema.String,
  kind: RecipientKind,
  state: State,
  /** When the state last moved. */
  updated_at: Instant,
  /** Why, when the vendor said: a bounce's diagnostic, a refusal's message. */
  detail: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "EmailRecipient" })
export type Recipient = typeof Recipient.Type

/** A tag as `POST /emails` took it: the same schema, so the API documents one `EmailTag`. */
export const Tag = EmailTag
export type Tag = typeof Tag.Type

/** An attachment as sent: its bytes are never kept, its size and storage key are. */
export const AttachmentRecord = Schema.Struct({
  filename: Schema.String,
  content_type: Schema.String,
  size: Bytes,
  /** The storage key, for a stored file; absent for bytes given in-process. */
  key: Schema.optionalKey(Schema.String),
  content_id: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "EmailAttachmentRecord" })
export type AttachmentRecord = typeof AttachmentRecord.Type

/** One delivery event in a message's history (the `MailEvent` without the vendor's raw record). */
export const TimelineEvent = Schema.Struct({
  id: Schema.String,
  type: Schema.String,
  recipient: Schema.NullOr(Schema.String),
  occurred_at: Instant,
  provider: Schema.String,
  bounce: Schema.optionalKey(
    Schema.Struct({
      kind: Schema.String,
      code: Schema.optionalKey(Schema.String),
      diagnostic: Schema.optionalKey(Schema.String)
    })
  ),
  click: Schema.optionalKey(Schema.Struct({ url: Schema.String }))
}).annotate({ identifier: "EmailEvent" })
export type TimelineEvent = typeof TimelineEvent.Type

/** A message as `GET /emails` lists it. Bodies and attachment bytes are never stored. */
export const EmailRecord = Schema.Struct({
  /** The `message_id` that `POST /emails` answered. */
  id: Schema.String,
  organization_id: Schema.String,
  created_at: Instant,
  /** Derived from the recipients' states: see `statusOf`. */
  status: State,
  from: Schema.String,
  from_name: Schema.NullOr(Schema.String),
  subject: Schema.String,
  recipients: Schema.Array(Recipient),
  tags: Schema.Array(Tag),
  attachments: Schema.Array(AttachmentRecord),
  /** UTF-8 bytes of the HTML and text bodies, which are not stored. */
  html_bytes: Bytes,
  text_bytes: Bytes,
  /** The provider that took (or refused) the message, and the id it gave; null until it answered. */
  provider: Schema.NullOr(Schema.String),
  provider_message_id: Schema.NullOr(Schema.String),
  idempotency_key: Schema.NullOr(Schema.String),
  scheduled_at: Schema.NullOr(Instant),
  /** The latest delivery event, by when it happened. */
  last_event: Schema.NullOr(Schema.Struct({ type: Schema.String, occurred_at: Instant })),
  /** Why the message is `failed` or `unknown`, when it is. */
  reason: Schema.NullOr(Schema.String)
}).annotate({ identifier: "EmailRecord" })
export type EmailRecord = typeof EmailRecord.Type

/** `GET /emails/{id}`: the record and its history, oldest event first. */
export const EmailDetail = Schema.Struct({
  ...EmailRecord.fields,
  events: Schema.Array(TimelineEvent)
}).annotate({ identifier: "EmailDetail" })
export type EmailDetail = typeof EmailDetail.Type

/** A page of a list, newest first; `next_cursor` is null on the last page. */
export interface Page<A> {
  readonly data: ReadonlyArray<A>
  readonly next_cursor: string | null
}

/** What `accept` records. `state` is `sending`, `scheduled` or `suppressed` for each recipient. */
export interface NewMessage {
  readonly id: string
  readonly organizationId: string
  readonly createdAt: string
  readonly from: string
  readonly fromName?: string
  readonly subject: string
  readonly recipients: ReadonlyArray<{
    readonly email: string
    readonly kind: RecipientKind
    readonly state: "sending" | "scheduled" | "suppressed"
  }>
  readonly tags: ReadonlyArray<Tag>
  readonly attachments: ReadonlyArray<AttachmentRecord>
  readonly htmlBytes: number
  readonly textBytes: number
  readonly idempotencyKey?: string
  readonly scheduledAt?: string
  /** The request of a scheduled message, kept until it leaves (`claim` hands it back), then dropped. */
  readonly request?: string
}

/**
 * What the provider answered a send: recipients still `sending` move to `sent`, `failed` or `unknown`,
 * except those in `suppressed`, dropped when a scheduled message left (they move to `suppressed`).
 */
export type Outcome = (
  | { readonly _tag: "Sent"; readonly provider: string; readonly providerMessageId: string }
  | { readonly _tag: "Failed"; readonly provider: string; readonly reason: string }
  | { readonly _tag: "Unknown"; readonly provider: string; readonly reason: string }
) & {
  /** Recipients, as the message names them, found on the suppression list when it left: not sent to. */
  readonly suppressed?: ReadonlyArray<string>
}

/** A page of messages: its size, the cursor, and the filters. */
export interface ListQuery {
  /** 1 to 100. */
  readonly limit: number
  /** The `next_cursor` of the page before. */
  readonly cursor?: string
  readonly status?: State
  /** Messages with this recipient (to, cc or bcc), compared as `Suppressions.normalize` does. */
  readonly to?: string
  readonly tag?: Tag
  /** Created at or after, ISO 8601. */
  readonly since?: string
  /** Created before, ISO 8601. */
  readonly until?: string
}

/** What `apply` did with an event. */
export interface Applied {
  /** False when the event id was applied before, or no record of the message is kept. */
  readonly applied: boolean
  /**
   * False when the event's organisation has no record under its `message_id`: an event that names
   * the message by the provider's id may then be found with `resolve` and applied again.
   */
  readonly found: boolean
  /** The message's tags, carried on the event to subscribers and webhooks; empty when no record is kept. */
  readonly tags: ReadonlyArray<Tag>
}

/** What `claim` hands a worker: the scheduled message, now `sending`, and its request. */
export interface Claimed {
  readonly record: EmailRecord
  readonly request: string
}

/** A scheduled message that is due, as `due` lists it. */
export interface Due {
  readonly id: string
  readonly organizationId: string
  readonly scheduledAt: string
}

/** What waits to be sent: the `scheduled` messages, and the time of the oldest that is due (null when none is). */
export interface Backlog {
  readonly scheduled: number
  readonly oldestDue: string | null
}

/** Why a scheduled message cannot be changed: it is not one, or it has left already. */
export type ChangeRefused = { readonly _tag: "NotFound" } | { readonly _tag: "NotScheduled"; readonly status: State }

/**
 * Where records live (memory, SQLite, PostgreSQL). Every method fails with `Unavailable` when its
 * database cannot be reached; nothing is then half-written. Records of one organisation are never
 * answered to another: every read and change names the organisation.
 */
export interface MessageLog {
  /** Records a message about to be sent (or scheduled). Its id is new. */
  readonly accept: (message: NewMessage) => Effect.Effect<void, Unavailable>
  /** Records the provider's answer to a send, once: a message already answered is left as it is. */
  readonly settle: (id: string, outcome: Outcome) => Effect.Effect<void, Unavailable>
  /**
   * A send refused because `accept` was not confirmed in time, though its record may still have been
   * written (a COMMIT sent to a server that stalled): once any such write has ended, a record there
   * is settled `failed` with `reason` (nothing was sent), and nothing is left when there is none.
   * Optional for a log of your own; without it, such a record reads `sending` until the stalled sweep.
   */
  readonly abandon?: (id: string, reason: string) => Effect.Effect<void, Unavailable>
  /**
   * Applies a delivery event to its message's recipient, once per event id, in any order: a state
   * only moves forward (`advance`), so a late `delivered` never overwrites `bounced`.
   */
  readonly apply: (event: MailEvent.MailEvent) => Effect.Effect<Applied, Unavailable>
  /**
   * Applies events as `apply` does, in one write where the database has them (the events a provider
   * reports for one message arrive together); answers what was done with each, in their order. An
   * event id given twice is applied once.
   */
  readonly applyAll: (events: ReadonlyArray<MailEvent.MailEvent>) => Effect.Effect<ReadonlyArray<Applied>, Unavailable>
  /** The record and its history; undefined when the organisation has no message with this id. */
  readonly find: (organizationId: string, id: string) => Effect.Effect<EmailDetail | undefined, Unavailable>
  /** The organisation's records, newest first. A cursor this log did not make is a `ValidationError` naming it. */
  readonly list: (
    organizationId: string,
    query: ListQuery
  ) => Effect.Effect<Page<EmailRecord>, Unavailable | ValidationError>
  /** The mailroom id of a message the provider knows by `providerMessageId`, for events that carry no other. */
  readonly resolve: (
    provider: string,
    providerMessageId: string
  ) => Effect.Effect<{ readonly id: string; readonly organizationId: string } | undefined, Unavailable>
  /**
   * Moves a scheduled message to `sending` and hands back its request, if it is still scheduled and
   * due (`scheduled_at` at or before `now`); of concurrent claims, from any instance, one wins.
   */
  readonly claim: (id: string, now: string) => Effect.Effect<Claimed | undefined, Unavailable>
  /** Cancels a message that is still scheduled. */
  readonly cancel: (organizationId: string, id: string) => Effect.Effect<ChangeRefused | undefined, Unavailable>
  /** Moves a message that is still scheduled to another time. */
  readonly reschedule: (
    organizationId: string,
    id: string,
    scheduledAt: string
  ) => Effect.Effect<ChangeRefused | undefined, Unavailable>
  /**
   * Puts a claimed message back to `scheduled`, its request kept, for another attempt: its send
   * certainly did not reach the provider, or its worker stopped and the provider de-duplicates by key.
   * False when the message is not a claimed one still `sending` (a send made at once keeps no request).
   */
  readonly release: (id: string) => Effect.Effect<boolean, Unavailable>
  /** The scheduled messages due at or before `before`, of every organisation, oldest first, at most `limit`. */
  readonly due: (before: string, limit: number) => Effect.Effect<ReadonlyArray<Due>, Unavailable>
  /**
   * The ids of messages with a recipient still `sending` since before `before` (accepted then, or
   * claimed then), of every organisation, oldest first, at most `limit`: sends whose process stopped.
   */
  readonly stalled: (before: string, limit: number) => Effect.Effect<ReadonlyArray<string>, Unavailable>
  /** How many messages are `scheduled`, and the oldest time among them that is at or before `now`. */
  readonly backlog: (now: string) => Effect.Effect<Backlog, Unavailable>
  /** Deletes the records created before `before` (their events with them); answers how many. */
  readonly purge: (before: string) => Effect.Effect<number, Unavailable>
  /**
   * True when writes begun together share one commit (`@mailroom/sqlite`'s group commit): a send then
   * writes the events a local provider reported beside its outcome, in one commit, where otherwise
   * (PostgreSQL, memory) it writes them first, then the outcome, holding one connection at a time.
   */
  readonly sharesCommits?: boolean
}

export const MessageLog: Context.Service<MessageLog, MessageLog> = Context.Service("@mailroom/core/MessageLog")

export {
  /** Where a delivery event takes a recipient, or undefined when it stays: states only move forward. */
  advance,
  /** Where the provider's answer takes a recipient still `sending` (`suppressed` when the outcome names its address). */
  settled,
  /** A message's status from its recipients' states. */
  statusOf
} from "./internal/messageState.js"

/** A new message id: a UUIDv7 (RFC 9562), unique and time-ordered, so ids sort as messages were made. */
export const makeId = (): string => v7()

/** Records kept in memory: for tests, and a single process that need not keep its history across a restart. */
export const makeMemory = (): MessageLog => Memory.make()

/** The memory log as a layer. */
export const layerMemory = (): Layer.Layer<MessageLog> => Layer.sync(MessageLog, makeMemory)

/** Options of `layerRetention`. */
export interface RetentionOptions {
  /** How long a record is kept from its creation (`"30 days"`); above zero. */
  readonly retention: Duration.Input
  /** How often the sweep runs; it also runs once as the layer is built. Default `"1 hour"`. */
  readonly every?: Duration.Input | undefined
}

/**
 * Deletes the records (with their events) created more than `retention` ago, through `purge` on the
 * log in context: once as the layer is built, without delaying it, then every `every`, for as long as
 * the layer lives. A sweep that fails (a database that is down) is logged and the next one tries
 * again. Suppressions are never purged. Fails with a `ConfigError` naming a duration that is not
 * finite and above zero.
 */
export const layerRetention = (options: RetentionOptions): Layer.Layer<never, Config.ConfigError, MessageLog> =>
  Layer.effectDiscard(Effect.flatMap(MessageLog, (log) => Retention.start(log, options)))
