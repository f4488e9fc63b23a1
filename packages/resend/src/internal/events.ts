// Resend's webhook events decoded with Schema and translated into MailEvents, one per recipient of
// `data.to`, routed by the `mailroom-org` tag the send carried.
import { MailEvent } from "@mailroom/core"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import { decodeTagValue } from "./message.js"

/** Tags as Resend documents them in events (`{name: value}`), or as the list a send takes. */
const Tags = Schema.Union([
  Schema.Record(Schema.String, Schema.String),
  Schema.Array(Schema.Struct({ name: Schema.String, value: Schema.String }))
])

/** What every `email.*` event's `data` holds (Resend's `OutboundEmailEventData`), and each type's extra. */
const EmailData = Schema.Struct({
  email_id: Schema.String.pipe(Schema.check(Schema.isMinLength(1))),
  created_at: Schema.optionalKey(Schema.String),
  to: Schema.Union([Schema.String, Schema.Array(Schema.String)]),
  tags: Schema.optionalKey(Tags),
  bounce: Schema.optionalKey(
    Schema.Struct({
      type: Schema.optionalKey(Schema.String),
      subType: Schema.optionalKey(Schema.String),
      message: Schema.optionalKey(Schema.String),
      diagnosticCode: Schema.optionalKey(Schema.Array(Schema.String))
    })
  ),
  click: Schema.optionalKey(Schema.Struct({ link: Schema.String, timestamp: Schema.optionalKey(Schema.String) }))
})
type EmailData = typeof EmailData.Type

/** The envelope of every event: `{type, created_at, data}`. */
const Envelope = Schema.Struct({
  type: Schema.String,
  created_at: Schema.String.pipe(
    Schema.check(Schema.makeFilter((s: string) => (Number.isNaN(Date.parse(s)) ? "must be a date" : undefined)))
  ),
  data: Schema.Unknown
})

const formatIssue = SchemaIssue.makeFormatterStandardSchemaV1()

/** The first problem Schema found, as `path: message`. */
const problemOf = (error: Schema.SchemaError): string => {
  const issue = formatIssue(error.issue).issues[0]
  const path = (issue?.path ?? []).map((p) => String(typeof p === "object" && p !== null ? p.key : p)).join(".")
  return `${path === "" ? "" : `${path}: `}${issue?.message ?? "invalid"}`
}

/** The `email.*` events reported, by what they mean (Django Anymail's vocabulary, as core has it). */
const types: Readonly<Record<string, MailEvent.Type>> = {
  "email.sent": "sent",
  "email.delivered": "delivered",
  "email.delivery_delayed": "deferred",
  "email.bounced": "bounced",
  "email.complained": "complained",
  "email.opened": "opened",
  "email.clicked": "clicked",
  "email.failed": "failed",
  // Resend did not send to an address on its suppression list: a refusal of that recipient.
  "email.suppressed": "rejected"
}

const bounceKinds: Readonly<Record<string, MailEvent.Bounce["kind"]>> = {
  Permanent: "hard",
  Transient: "soft",
  Undetermined: "undetermined"
}

const tagValue = (tags: EmailData["tags"], name: string): string | undefined => {
  if (tags === undefined) return undefined
  const value = Array.isArray(tags)
    ? tags.find((tag) => tag.name === name)?.value
    : (tags as Readonly<Record<string, string>>)[name]
  return value === undefined ? undefined : decodeTagValue(value)
}

/** The bounce of the `index`th recipient: kind from `type`, the enhanced status code from its diagnostic. */
const bounceOf = (data: EmailData, index: number, recipients: number): MailEvent.Bounce => {
  const { type = "Undetermined", subType, message, diagnosticCode = [] } = data.bounce ?? {}
  // "One entry per recipient": the recipient's own when the counts agree, the only one when there is one.
  const diagnostic =
    (diagnosticCode.length === recipients ? diagnosticCode[index] : undefined) ??
    (diagnosticCode.length === 1 ? diagnosticCode[0] : undefined) ??
    (message === "" ? undefined : message)
  const code = (diagnostic === undefined ? undefined : /\b[245]\.\d{1,3}\.\d{1,3}\b/.exec(diagnostic)?.[0]) ?? subType
  return {
    kind: bounceKinds[type] ?? "undetermined",
    ...(code === undefined || code === "" ? {} : { code }),
    ...(diagnostic === undefined ? {} : { diagnostic })
  }
}

export type Translation =
  | { readonly events: ReadonlyArray<MailEvent.Unrouted> }
  | { readonly ignored: string }
  | { readonly malformed: string }

/** The events of one webhook body; `deliveryId` (`svix-id`) tells two deliveries of like records apart. */
export const translate = (body: unknown, deliveryId: string): Translation => {
  const envelope = Schema.decodeUnknownResult(Envelope)(body)
  if (Result.isFailure(envelope)) return { malformed: problemOf(envelope.failure) }
  const { type: eventType, created_at: createdAt, data: rawData } = envelope.success
  const type = types[eventType]
  if (type === undefined) return { ignored: `a ${eventType} event, which mailroom does not report` }
  const decoded = Schema.decodeUnknownResult(EmailData)(rawData)
  if (Result.isFailure(decoded)) return { malformed: `data.${problemOf(decoded.failure)}` }
  const data = decoded.success
  if (type === "clicked" && data.click === undefined) return { malformed: "data.click: Missing key" }
  const recipients = typeof data.to === "string" ? [data.to] : data.to
  if (recipients.length === 0) return { malformed: "data.to: no recipient" }
  // A click's own time when it has one; the event's otherwise.
  const occurredAt = MailEvent.instant(data.click?.timestamp ?? createdAt, new Date(createdAt))
  const organizationId = tagValue(data.tags, MailEvent.organizationKey)
  // Mailroom's own id when the message carried it; Resend's otherwise (an older message): the pipeline
  // then finds the record by Resend's id.
  const messageId = tagValue(data.tags, MailEvent.messageKey)
  return {
    events: recipients.map((recipient, index) =>
      MailEvent.make({
        type,
        provider: "resend",
        messageId: messageId ?? data.email_id,
        providerMessageId: data.email_id,
        recipient,
        occurredAt,
        organizationId,
        raw: body,
        // Svix keeps `svix-id` across its retries of one delivery: the same record gets the same id.
        discriminator: deliveryId,
        ...(type === "bounced" ? { bounce: bounceOf(data, index, recipients.length) } : {}),
        ...(type === "clicked" && data.click !== undefined ? { click: { url: data.click.link } } : {})
      })
    )
  }
}
