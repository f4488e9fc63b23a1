// The bodies of the HTTP API as plain types, so the client depends on nothing at run time or for
// types. test/wire.test.ts checks each is exactly core's wire schema type, so they cannot drift.

export interface EmailAttachment {
  readonly filename: string
  readonly key: string
  readonly content_type?: string
  /** Makes the file an inline part the HTML shows as `cid:{content_id}`. */
  readonly content_id?: string
}

/** A tag of the message: ASCII letters, digits, `_` and `-`, at most 256 characters each. */
export interface EmailTag {
  readonly name: string
  readonly value: string
}

export interface SendEmailRequest {
  readonly from: string
  readonly from_name?: string
  readonly to: ReadonlyArray<string>
  readonly cc?: ReadonlyArray<string>
  readonly bcc?: ReadonlyArray<string>
  readonly reply_to?: ReadonlyArray<string>
  readonly subject: string
  readonly body: { readonly html?: string; readonly text?: string }
  readonly attachments?: ReadonlyArray<EmailAttachment>
  /** At most 10; stored with the message and carried on its events. */
  readonly tags?: ReadonlyArray<EmailTag>
  /** Custom headers; the ones mailroom writes itself (From, Subject, Content-*...) are refused. */
  readonly headers?: { readonly [name: string]: string }
  /** RFC 8058 one-click unsubscribe: `List-Unsubscribe` and `List-Unsubscribe-Post`. */
  readonly unsubscribe?: { readonly url: string; readonly mailto?: string }
  /** Send later: RFC 3339 with an offset, 1 second to 30 days ahead. */
  readonly scheduled_at?: string
}

export interface SendEmailResponse {
  readonly message_id: string
  readonly from: string
  readonly to: ReadonlyArray<string>
  readonly subject: string
  readonly attachments: ReadonlyArray<string>
  /** The recipients dropped because they are suppressed; absent when none was. */
  readonly suppressed?: ReadonlyArray<string>
}

/** The 202 of a scheduled send; also what a reschedule answers. */
export interface ScheduledEmailResponse {
  readonly message_id: string
  readonly status: "scheduled"
  /** UTC, to the millisecond. */
  readonly scheduled_at: string
  /** The recipients dropped because they are suppressed; absent when none was. */
  readonly suppressed?: ReadonlyArray<string>
}

export interface RescheduleRequest {
  readonly scheduled_at: string
}

export interface CancelResponse {
  readonly message_id: string
  readonly status: "cancelled"
}

/** An item of a batch that was sent, or scheduled. */
export interface BatchAccepted {
  readonly index: number
  readonly message_id: string
  readonly status: "sent" | "scheduled"
  readonly scheduled_at?: string
  readonly suppressed?: ReadonlyArray<string>
}

/** An item of a batch that was not: one message per problem, each naming its field. */
export interface BatchRefused {
  readonly index: number
  readonly errors: ReadonlyArray<string>
}

export interface SendBatchResponse {
  readonly data: ReadonlyArray<BatchAccepted>
  readonly errors: ReadonlyArray<BatchRefused>
}

export interface PresignRequest {
  readonly filename: string
  readonly content_type?: string
  readonly org_id?: string
  readonly content_length?: number
}

export interface PresignResponse {
  readonly url: string
  readonly key: string
  readonly expires_in: number
  readonly attachment_id: string
}

export interface DownloadResponse {
  readonly download_url: string
  readonly expires_in: number
}

export interface DeleteByKeyResponse {
  readonly deleted: boolean
  readonly key: string
}

export interface DeleteByIdResponse {
  readonly deleted: boolean
  readonly attachment_id: string
}

// --- message records and suppressions -----------------------------------------------------------

/** A recipient's state, and a message's (the state of its recipient furthest from delivered). */
export type EmailStatus =
  | "scheduled"
  | "sending"
  | "sent"
  | "delivery_delayed"
  | "delivered"
  | "bounced"
  | "complained"
  | "suppressed"
  | "cancelled"
  | "failed"
  | "unknown"

export interface EmailRecipient {
  readonly email: string
  readonly kind: "to" | "cc" | "bcc"
  readonly state: EmailStatus
  /** When the state last moved: ISO 8601, UTC. */
  readonly updated_at: string
  /** Why, when the vendor said: a bounce's diagnostic, a refusal's message. */
  readonly detail?: string
}

/** An attachment as sent: its size and storage key are kept, never its bytes. */
export interface EmailAttachmentRecord {
  readonly filename: string
  readonly content_type: string
  readonly size: number
  readonly key?: string
  readonly content_id?: string
}

/** One delivery event in a message's history. */
export interface EmailEvent {
  readonly id: string
  readonly type: string
  readonly recipient: string | null
  readonly occurred_at: string
  readonly provider: string
  readonly bounce?: { readonly kind: string; readonly code?: string; readonly diagnostic?: string }
  readonly click?: { readonly url: string }
}

/** A message as `GET /emails` lists it; bodies and attachment bytes are not stored. */
export interface EmailRecord {
  /** The `message_id` that `send` answered. */
  readonly id: string
  readonly organization_id: string
  readonly created_at: string
  readonly status: EmailStatus
  readonly from: string
  readonly from_name: string | null
  readonly subject: string
  readonly recipients: ReadonlyArray<EmailRecipient>
  readonly tags: ReadonlyArray<EmailTag>
  readonly attachments: ReadonlyArray<EmailAttachmentRecord>
  readonly html_bytes: number
  readonly text_bytes: number
  readonly provider: string | null
  readonly provider_message_id: string | null
  readonly idempotency_key: string | null
  readonly scheduled_at: string | null
  readonly last_event: { readonly type: string; readonly occurred_at: string } | null
  /** Why the message is `failed` or `unknown`, when it is. */
  readonly reason: string | null
}

/** `GET /emails/{id}`: the record and its events, oldest first. */
export interface EmailDetail extends EmailRecord {
  readonly events: ReadonlyArray<EmailEvent>
}

export interface EmailList {
  readonly data: ReadonlyArray<EmailRecord>
  /** Null on the last page. */
  readonly next_cursor: string | null
}

export interface ListEmailsQuery {
  /** 1 to 100; default 20. */
  readonly limit?: number
  /** The `next_cursor` of the page before. */
  readonly cursor?: string
  readonly status?: EmailStatus
  /** A recipient, to, cc or bcc. */
  readonly to?: string
  /** `name:value`. */
  readonly tag?: string
  /** Created at or after: RFC 3339 with an offset, such as `2026-05-01T09:00:00Z`. */
  readonly since?: string
  /** Created before: RFC 3339 with an offset. */
  readonly until?: string
}

export type SuppressionReason = "bounced" | "complained" | "manual"

export interface Suppression {
  /** The address as compared: the domain in lower-case ASCII, the local part as given. */
  readonly email: string
  readonly reason: SuppressionReason
  readonly created_at: string
  /** The message whose bounce or complaint added it; null when added by hand. */
  readonly message_id: string | null
  readonly detail: string | null
}

export interface SuppressionList {
  readonly data: ReadonlyArray<Suppression>
  readonly next_cursor: string | null
}

export interface ListSuppressionsQuery {
  readonly limit?: number
  readonly cursor?: string
  readonly reason?: SuppressionReason
}

export interface SuppressRequest {
  readonly email: string
  /** Default `manual`; `bounced` or `complained` to import a list with its reasons. */
  readonly reason?: SuppressionReason
  /** A note kept with the entry, at most 500 characters. */
  readonly detail?: string
}

export interface UnsuppressResponse {
  readonly deleted: boolean
  readonly email: string
}

/** An address of a message in the outbox inbox. */
export interface InboxAddress {
  readonly address: string
  readonly name: string | null
}

/** A link of a message: an `<a href>` of its HTML with the text it shows, or a URL of its text part. */
export interface InboxLink {
  readonly url: string
  readonly text: string
  readonly source: "html" | "text"
}

/** A message of the outbox, as the inbox API lists it. */
export interface InboxMessageSummary {
  /** The `message_id` that `POST /emails` answered. */
  readonly id: string
  readonly organization_id: string | null
  readonly from: InboxAddress | null
  readonly to: ReadonlyArray<InboxAddress>
  readonly cc: ReadonlyArray<InboxAddress>
  readonly bcc: ReadonlyArray<string>
  readonly subject: string
  /** When the outbox wrote it, to the millisecond. */
  readonly received_at: string
  /** Its Date header; null without one. */
  readonly date: string | null
  readonly size: number
  readonly attachment_count: number
  readonly links: ReadonlyArray<InboxLink>
  readonly read: boolean
}

export interface InboxAttachment {
  readonly filename: string | null
  readonly content_type: string
  readonly size: number
  readonly content_id: string | null
  readonly inline: boolean
  /** The bytes, under the inbox's access rule. */
  readonly download_url: string
}

/** A message of the outbox with its headers, bodies, attachments and delivery events. */
export interface InboxMessage extends InboxMessageSummary {
  readonly reply_to: ReadonlyArray<InboxAddress>
  readonly headers: ReadonlyArray<{ readonly name: string; readonly value: string }>
  readonly text: string | null
  readonly html: string | null
  readonly attachments: ReadonlyArray<InboxAttachment>
  readonly events: ReadonlyArray<EmailEvent>
  readonly raw_url: string
}

export interface InboxMessageList {
  readonly data: ReadonlyArray<InboxMessageSummary>
  readonly next_cursor: string | null
}
