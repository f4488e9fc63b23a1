// Postmark's webhook records translated into MailEvents, one per record (Postmark sends one recipient
// per request), routed by the `mailroom-org` field of the send's Metadata and named by its
// `mailroom-message` field.
import { MailEvent, Simulator } from "@mailroom/core"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"

const text = Schema.optionalKey(Schema.NullOr(Schema.String))

/**
 * What mailroom reads of a webhook record, as Postmark documents each field's type (other fields, and
 * the records' own, are let be and kept as `raw`). A field of another type is a malformed record.
 */
const WebhookRecord = Schema.Struct({
  RecordType: Schema.String.annotate({ message: "missing" }).pipe(Schema.annotateKey({ messageMissingKey: "missing" })),
  MessageID: text,
  Metadata: Schema.optionalKey(Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown))),
  Recipient: text,
  Email: text,
  OriginalLink: text,
  Type: text,
  Details: text,
  Description: text,
  ID: Schema.optionalKey(Schema.Unknown),
  // Times as Postmark writes them; MailEvent.instant reads what it can and falls back to the receipt.
  DeliveredAt: Schema.optionalKey(Schema.Unknown),
  ReceivedAt: Schema.optionalKey(Schema.Unknown),
  ChangedAt: Schema.optionalKey(Schema.Unknown),
  BouncedAt: Schema.optionalKey(Schema.Unknown),
  SuppressSending: Schema.optionalKey(Schema.Unknown),
  SuppressionReason: Schema.optionalKey(Schema.Unknown)
})

type WebhookRecord = typeof WebhookRecord.Type

const decodeRecord = Schema.decodeUnknownExit(WebhookRecord)
const issues = SchemaIssue.makeFormatterStandardSchemaV1()

/** A string field's value, an empty one (or null) read as absent, as Postmark sends none. */
const string = (value: unknown): string | undefined => (typeof value === "string" && value !== "" ? value : undefined)

/**
 * What each bounce `Type` means, after Django Anymail's reading of Postmark's list. Types that say
 * nothing about delivery (auto-replies, subscribe requests, inbound errors) are left out: no event.
 */
const bounceTypes: Readonly<
  Record<string, { readonly type: MailEvent.Type; readonly kind?: MailEvent.Bounce["kind"] }>
> = {
  HardBounce: { type: "bounced", kind: "hard" },
  SoftBounce: { type: "bounced", kind: "soft" },
  Unknown: { type: "bounced", kind: "undetermined" },
  VirusNotification: { type: "bounced", kind: "undetermined" },
  Transient: { type: "deferred" },
  DnsError: { type: "deferred" },
  OpenRelayTest: { type: "deferred" },
  BadEmailAddress: { type: "rejected" },
  ManuallyDeactivated: { type: "rejected" },
  Unconfirmed: { type: "rejected" },
  Blocked: { type: "rejected" },
  DMARCPolicy: { type: "rejected" },
  SpamNotification: { type: "complained" },
  SpamComplaint: { type: "complained" },
  Unsubscribe: { type: "unsubscribed" },
  ManualSuppression: { type: "unsubscribed" },
  SMTPApiError: { type: "failed" },
  TemplateRenderingFailed: { type: "failed" }
}

export type Translation =
  | { readonly events: ReadonlyArray<MailEvent.Unrouted> }
  | { readonly ignored: string }
  | { readonly malformed: string }

/** The field of each record type's time; a bounce and a complaint have `BouncedAt`. */
const timeFields: Readonly<Partial<Record<string, "DeliveredAt" | "ReceivedAt" | "ChangedAt">>> = {
  Delivery: "DeliveredAt",
  Open: "ReceivedAt",
  Click: "ReceivedAt",
  SubscriptionChange: "ChangedAt"
}

/** The record, or what is wrong with it. */
const decode = (body: unknown): { readonly record: WebhookRecord } | { readonly malformed: string } => {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return { malformed: "not a JSON object" }
  const decoded = decodeRecord(body)
  if (Exit.isSuccess(decoded)) {
    return decoded.value.RecordType === "" ? { malformed: "RecordType: missing" } : { record: decoded.value }
  }
  const error = decoded.cause.reasons.find((reason) => reason._tag === "Fail")
  const first = error === undefined ? undefined : issues(error.error.issue).issues[0]
  return { malformed: first === undefined ? "not a webhook record" : `${String(first.path?.[0])}: ${first.message}` }
}

/** The events of one webhook body. */
export const translate = (body: unknown, receivedAt: Date): Translation => {
  const decoded = decode(body)
  if ("malformed" in decoded) return decoded
  const { record } = decoded
  const recordType = record.RecordType
  const metadata = record.Metadata ?? {}
  const organizationId = string(metadata[MailEvent.organizationKey])
  // Mailroom's id when the send carried it; an older message keeps Postmark's MessageID, which the
  // message log resolves through the provider's id it recorded.
  const ownMessageId = string(metadata[MailEvent.messageKey])
  // Delivery, Open, Click and SubscriptionChange name the recipient `Recipient`; Bounce and SpamComplaint `Email`.
  const recipientField = recordType === "Bounce" || recordType === "SpamComplaint" ? "Email" : "Recipient"
  const timeField = timeFields[recordType]
  const messageId = string(record.MessageID)
  const recipient = string(record[recipientField])

  const one = (
    type: MailEvent.Type,
    extra: Partial<Pick<MailEvent.Fields, "bounce" | "click" | "discriminator">> = {}
  ): Translation => {
    if (messageId === undefined) return { malformed: `${recordType}: MessageID missing` }
    if (recipient === undefined) return { malformed: `${recordType}: ${recipientField} missing` }
    const occurredAt = MailEvent.instant(record[timeField ?? "BouncedAt"], receivedAt)
    return {
      events: [
        MailEvent.make({
          type,
          provider: "postmark",
          messageId: ownMessageId ?? messageId,
          providerMessageId: messageId,
          // An address the provider sent to Postmark's bounce-testing domain is the simulator address the caller gave.
          recipient: Simulator.fromVendor("postmark", recipient),
          occurredAt,
          organizationId,
          // The record as Postmark sent it, every field kept.
          raw: body,
          ...extra
        })
      ]
    }
  }
  const id = record.ID === undefined ? {} : { discriminator: String(record.ID) }

  switch (recordType) {
    case "Delivery":
      return one("delivered")
    case "Open":
      return one("opened")
    case "Click": {
      const url = string(record.OriginalLink)
      if (url === undefined) return { malformed: "Click: OriginalLink missing" }
      return one("clicked", { click: { url }, discriminator: url })
    }
    case "SpamComplaint":
      return one("complained", id)
    case "Bounce": {
      const bounceType = string(record.Type) ?? "Unknown"
      const meaning = bounceTypes[bounceType]
      if (meaning === undefined) return { ignored: `a Bounce of Type ${bounceType}, which says nothing about delivery` }
      const diagnostic = string(record.Details) ?? string(record.Description)
      return one(meaning.type, {
        ...id,
        ...(meaning.kind === undefined
          ? {}
          : { bounce: { kind: meaning.kind, code: bounceType, ...(diagnostic === undefined ? {} : { diagnostic }) } })
      })
    }
    case "SubscriptionChange": {
      // A suppression because of a bounce or a complaint was already reported by that webhook, and a
      // reactivation has no word in the vocabulary; an unsubscribe is news.
      if (record.SuppressSending !== true) return { ignored: "a SubscriptionChange that reactivates the recipient" }
      if (record.SuppressionReason !== "ManualSuppression") {
        return { ignored: `a suppression for ${String(record.SuppressionReason)}, reported by its own webhook` }
      }
      if (messageId === undefined) return { ignored: "a suppression made without a message (MessageID null)" }
      return one("unsubscribed")
    }
    default:
      return { ignored: `a ${recordType} record, which mailroom does not report` }
  }
}
