// SES's event records (event publishing through SNS or EventBridge, and identity feedback
// notifications) translated into MailEvents: one per recipient, routed by the send's `mailroom-org`
// tag and named by its `mailroom-message` tag.
import { MailEvent, Simulator } from "@mailroom/core"

type Record_ = Readonly<Record<string, unknown>>

const isRecord = (value: unknown): value is Record_ =>
  typeof value === "object" && value !== null && !Array.isArray(value)
const string = (value: unknown): string | undefined => (typeof value === "string" && value !== "" ? value : undefined)
const strings = (value: unknown): ReadonlyArray<string> =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === "string" && v !== "") : []
const records = (value: unknown): ReadonlyArray<Record_> => (Array.isArray(value) ? value.filter(isRecord) : [])

// Bounce and complaint subtypes SES gives when it did not try to deliver at all: the address is on a
// suppression list. The provider refused; the recipient's server never saw the message.
const suppressedSubtypes = new Set([
  "Suppressed",
  "OnAccountSuppressionList",
  "OnTenantSuppressionList",
  "EmailValidationSuppressed"
])

const bounceKinds: Readonly<Record<string, MailEvent.Bounce["kind"]>> = {
  Permanent: "hard",
  Transient: "soft",
  Undetermined: "undetermined"
}

/** The events of one SES record, or why it has none (not an SES sending event, or a kind mailroom does not report). */
export const translate = (
  record: unknown,
  receivedAt: Date
): { readonly events: ReadonlyArray<MailEvent.Unrouted> } | { readonly ignored: string } => {
  if (!isRecord(record)) return { ignored: "not a JSON object" }
  const kind = string(record.eventType) ?? string(record.notificationType)
  const mail = isRecord(record.mail) ? record.mail : undefined
  const sesMessageId = string(mail?.messageId)
  if (kind === undefined || mail === undefined || sesMessageId === undefined) {
    return { ignored: "not an SES event record (no eventType and mail.messageId)" }
  }
  const tags = isRecord(mail.tags) ? mail.tags : {}
  const organizationId = strings(tags[MailEvent.organizationKey])[0]
  // Mailroom's id when the send carried it; an older message or an identity-level notification
  // (no tags) keeps SES's, which the message log resolves through the provider's id it recorded.
  const messageId = strings(tags[MailEvent.messageKey])[0] ?? sesMessageId
  const destination = strings(mail.destination)
  // Opens, clicks and unsubscribes name no recipient; with one recipient there is no doubt.
  const soleRecipient = destination.length === 1 ? (destination[0] ?? null) : null
  const sentAt = MailEvent.instant(mail.timestamp, receivedAt)
  const event = (
    type: MailEvent.Type,
    recipient: string | null,
    occurredAt: string,
    extra: Partial<Pick<MailEvent.Fields, "bounce" | "click" | "discriminator">> = {}
  ) =>
    MailEvent.make({
      type,
      provider: "ses",
      messageId,
      providerMessageId: sesMessageId,
      // An address the provider sent to SES's mailbox simulator is the simulator address the caller gave.
      recipient: recipient === null ? null : Simulator.fromVendor("ses", recipient),
      occurredAt,
      organizationId,
      raw: record,
      ...extra
    })
  const detail = (name: string) => (isRecord(record[name]) ? (record[name] as Record_) : {})

  switch (kind) {
    case "Send":
      return { events: destination.map((r) => event("sent", r, sentAt)) }
    case "Reject":
      return { events: destination.map((r) => event("rejected", r, sentAt)) }
    case "Rendering Failure":
      return { events: destination.map((r) => event("failed", r, sentAt)) }
    case "Delivery": {
      const delivery = detail("delivery")
      const at = MailEvent.instant(delivery.timestamp, receivedAt)
      return { events: strings(delivery.recipients).map((r) => event("delivered", r, at)) }
    }
    case "Bounce": {
      const bounce = detail("bounce")
      const at = MailEvent.instant(bounce.timestamp, receivedAt)
      const suppressed = suppressedSubtypes.has(String(bounce.bounceSubType))
      const feedback = string(bounce.feedbackId)
      return {
        events: records(bounce.bouncedRecipients).flatMap((recipient) => {
          const address = string(recipient.emailAddress)
          if (address === undefined) return []
          const discriminator = feedback === undefined ? {} : { discriminator: feedback }
          if (suppressed) return [event("rejected", address, at, discriminator)]
          const code = string(recipient.status)
          const diagnostic = string(recipient.diagnosticCode)
          return [
            event("bounced", address, at, {
              ...discriminator,
              bounce: {
                kind: bounceKinds[String(bounce.bounceType)] ?? "undetermined",
                ...(code === undefined ? {} : { code }),
                ...(diagnostic === undefined ? {} : { diagnostic })
              }
            })
          ]
        })
      }
    }
    case "Complaint": {
      const complaint = detail("complaint")
      const at = MailEvent.instant(complaint.timestamp, receivedAt)
      const type = suppressedSubtypes.has(String(complaint.complaintSubType)) ? "rejected" : "complained"
      const feedback = string(complaint.feedbackId)
      return {
        events: records(complaint.complainedRecipients).flatMap((recipient) => {
          const address = string(recipient.emailAddress)
          return address === undefined
            ? []
            : [event(type, address, at, feedback === undefined ? {} : { discriminator: feedback })]
        })
      }
    }
    case "DeliveryDelay": {
      const delay = detail("deliveryDelay")
      const at = MailEvent.instant(delay.timestamp, receivedAt)
      return {
        events: records(delay.delayedRecipients).flatMap((recipient) => {
          const address = string(recipient.emailAddress)
          return address === undefined ? [] : [event("deferred", address, at)]
        })
      }
    }
    case "Open": {
      const open = detail("open")
      return { events: [event("opened", soleRecipient, MailEvent.instant(open.timestamp, receivedAt))] }
    }
    case "Click": {
      const click = detail("click")
      const link = string(click.link)
      if (link === undefined) return { ignored: "a Click record without click.link" }
      const at = MailEvent.instant(click.timestamp, receivedAt)
      return { events: [event("clicked", soleRecipient, at, { click: { url: link }, discriminator: link })] }
    }
    case "Subscription": {
      const subscription = detail("subscription")
      const preferences = isRecord(subscription.newTopicPreferences) ? subscription.newTopicPreferences : {}
      const optedOut =
        preferences.unsubscribeAll === true ||
        records(preferences.topicSubscriptionStatus).some((topic) => topic.subscriptionStatus === "OptOut")
      if (!optedOut) return { ignored: "a Subscription record that unsubscribes from nothing" }
      return { events: [event("unsubscribed", soleRecipient, MailEvent.instant(subscription.timestamp, receivedAt))] }
    }
    default:
      return { ignored: `an SES ${kind} record, which mailroom does not report` }
  }
}
