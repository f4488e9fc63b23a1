// One delivery event, whichever provider reported it: the schema every adapter translates its vendor's
// records into, the body of the webhook an organisation receives, and the stable id of each event.
import { createHash } from "node:crypto"
import * as Schema from "effect/Schema"

/**
 * What happened, in the vocabulary of Django Anymail (the de facto cross-vendor one): `sent` (the
 * provider accepted the message), `delivered` (the recipient's server took it), `deferred` (delivery is
 * delayed and still being tried), `bounced`, `complained` (marked as spam), `rejected` (the provider
 * refused to deliver to this recipient: suppression list, policy, virus), `opened`, `clicked`,
 * `unsubscribed`, `failed` (the provider could not build or send it, e.g. a template that would not render).
 */
export const types = [
  "sent",
  "delivered",
  "deferred",
  "bounced",
  "complained",
  "rejected",
  "opened",
  "clicked",
  "unsubscribed",
  "failed"
] as const

/** What happened to a message for one recipient. */
export const Type = Schema.Literals(types)
export type Type = typeof Type.Type

/** What a bounce said: hard, soft or undetermined, with the code and diagnostic given. */
export const Bounce = Schema.Struct({
  /** `hard`: the address will not accept mail; `soft`: it failed this time; `undetermined`: the provider cannot tell. */
  kind: Schema.Literals(["hard", "soft", "undetermined"]),
  /** The enhanced status code (`5.1.1`) or the vendor's bounce code, when given. */
  code: Schema.optionalKey(Schema.String),
  /** What the receiving server said, when given. */
  diagnostic: Schema.optionalKey(Schema.String)
})
export type Bounce = typeof Bounce.Type

/** One delivery event of one recipient, as webhooks receive it. */
export const MailEvent = Schema.Struct({
  /** Stable across the vendor's redeliveries of the same record: de-duplicate on it. Also the `webhook-id`. */
  id: Schema.String,
  type: Type,
  /** The organisation that sent the message. */
  organization_id: Schema.String,
  /** Exactly the `message_id` that `POST /emails` returned. */
  message_id: Schema.String,
  /** The provider's own id of the message, when it differs from `message_id` (SES, Postmark, Resend). */
  provider_message_id: Schema.optionalKey(Schema.String),
  /**
   * The recipient the event is about; one event per recipient. `null` only when the provider does not
   * say which one (an SES open, click or unsubscribe of a message sent to several recipients).
   */
  recipient: Schema.NullOr(Schema.String),
  /** ISO 8601, UTC, as the provider reported it (to the millisecond). */
  occurred_at: Schema.String,
  /** Who reported it: `ses`, `postmark`, `outbox`, `memory`. */
  provider: Schema.String,
  /** Present on `bounced` events. */
  bounce: Schema.optionalKey(Bounce),
  /** Present on `clicked` events. */
  click: Schema.optionalKey(Schema.Struct({ url: Schema.String })),
  /** The message's tags, as sent (`POST /emails` `tags`), when the message log keeps its record. */
  tags: Schema.optionalKey(Schema.Array(Schema.Struct({ name: Schema.String, value: Schema.String }))),
  /** The vendor's record, unchanged, for whatever the fields above leave out. */
  raw: Schema.Unknown
}).annotate({ identifier: "MailEvent", description: "A delivery event of a message sent through mailroom" })
export type MailEvent = typeof MailEvent.Type

/** An event as its provider reported it: the organisation it names may be absent or unknown. */
export type Unrouted = Omit<MailEvent, "organization_id"> & { readonly organization_id: string | undefined }

/**
 * The metadata name under which core's Mailer records the sending organisation on every message
 * (`OutboundEmail.metadata`): an SES tag, a Postmark metadata field (whose names are at most 20
 * characters), the outbox's `X-Mailroom-Organization` header.
 */
export const organizationKey = "mailroom-org"

/**
 * The metadata name under which core's Mailer records the message's own id (the `message_id` the API
 * answered), so that a provider's events name the message as the caller knows it: the outbox names
 * its file after it; SES tags and Postmark metadata carry it back on each event.
 */
export const messageKey = "mailroom-message"

/** `value` as an ISO 8601 UTC instant, or `fallback` when it is missing or not a date. */
export const instant = (value: unknown, fallback: Date): string => {
  const date = typeof value === "string" || typeof value === "number" ? new Date(value) : undefined
  return (date !== undefined && !Number.isNaN(date.getTime()) ? date : fallback).toISOString()
}

/** What `make` builds an event from. */
export interface Fields {
  readonly type: Type
  readonly provider: string
  /** Mailroom's id of the message (`metadata[messageKey]`), else the provider's when the message carries none. */
  readonly messageId: string
  /** The provider's own id, when it differs from `messageId`. */
  readonly providerMessageId?: string
  readonly recipient: string | null
  readonly occurredAt: string
  readonly organizationId: string | undefined
  readonly bounce?: Bounce
  readonly click?: { readonly url: string }
  readonly raw: unknown
  /**
   * What else tells two records of the same kind apart when provider, message, recipient and time are
   * equal (a vendor's record id, a clicked link).
   */
  readonly discriminator?: string
}

/**
 * An event with its id: a digest of what identifies the record, so the vendor's redelivery of the same
 * record (SNS and Postmark deliver at least once) gets the same id, and two records never share one.
 */
export const make = (fields: Fields): Unrouted => {
  const digest = createHash("sha256")
    .update(
      JSON.stringify([
        fields.provider,
        fields.messageId,
        fields.type,
        fields.recipient,
        fields.occurredAt,
        fields.discriminator ?? ""
      ])
    )
    .digest("hex")
  return {
    id: `evt_${digest.slice(0, 32)}`,
    type: fields.type,
    organization_id: fields.organizationId,
    message_id: fields.messageId,
    ...(fields.providerMessageId === undefined || fields.providerMessageId === fields.messageId
      ? {}
      : { provider_message_id: fields.providerMessageId }),
    recipient: fields.recipient,
    occurred_at: fields.occurredAt,
    provider: fields.provider,
    ...(fields.bounce === undefined ? {} : { bounce: fields.bounce }),
    ...(fields.click === undefined ? {} : { click: fields.click }),
    raw: fields.raw
  }
}

/** The recipients of a message once each, compared without case, in to, cc, bcc order. */
export const recipientsOf = (email: {
  readonly to: ReadonlyArray<string>
  readonly cc: ReadonlyArray<string>
  readonly bcc: ReadonlyArray<string>
}): ReadonlyArray<string> => {
  const seen = new Set<string>()
  return [...email.to, ...email.cc, ...email.bcc].filter((r) => {
    const key = r.toLowerCase()
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
}
