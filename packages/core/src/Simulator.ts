// The simulator domain: recipient addresses that say what should happen to them (`bounced@...`), acted
// out by the local providers through the real event pipeline, and mapped to the vendors' own simulators.
import type * as MailEvent from "./MailEvent.js"
import { make, messageKey, organizationKey, recipientsOf } from "./MailEvent.js"

/** The reserved domain (`.test` is never delegated, RFC 2606): mail to it never leaves mailroom. */
export const domain = "simulator.mailroom.test"

/**
 * What a mailbox of the simulator domain acts out, each as the vendors report it: `delivered`;
 * `bounced` (a hard bounce, 5.1.1: the recipient is suppressed); `soft-bounced` (4.2.2, mailbox full:
 * not suppressed); `complained` (delivered, then marked as spam: suppressed); `delayed` (deferred,
 * then delivered); `suppressed` (on the vendor's own suppression list: `rejected`).
 */
export const outcomes = ["delivered", "bounced", "soft-bounced", "complained", "delayed", "suppressed"] as const
/** What a simulator address acts out. */
export type Outcome = (typeof outcomes)[number]

/** A simulator address read: its outcome, and the label after `+` when it has one. */
export interface Mailbox {
  readonly outcome: Outcome
  readonly label: string | undefined
}

/** What the simulator domain holds: its mailboxes, written as the refusals name them. */
export const mailboxes = outcomes.map((outcome) => `${outcome}@${domain}`).join(", ")

const label = /^[A-Za-z0-9._-]{1,64}$/

/**
 * The outcome an address asks for; undefined for an address of any other domain; `{ unknown }` for
 * a mailbox the domain does not have (a typo such as `bounce@`), which providers refuse. Compared
 * without case; `bounced+alice@` is `bounced` with the label `alice`.
 */
export const parse = (address: string): Mailbox | { readonly unknown: string } | undefined => {
  const at = address.lastIndexOf("@")
  // Compared by length first: nearly every address is of another domain, and is then not copied.
  if (at < 0 || address.length - at - 1 !== domain.length || address.slice(at + 1).toLowerCase() !== domain) {
    return undefined
  }
  const local = address.slice(0, at)
  const plus = local.indexOf("+")
  const name = (plus < 0 ? local : local.slice(0, plus)).toLowerCase()
  const tag = plus < 0 ? undefined : local.slice(plus + 1)
  const outcome = outcomes.find((o) => o === name)
  if (outcome === undefined || (tag !== undefined && !label.test(tag))) return { unknown: address }
  return { outcome, label: tag }
}

/** The addresses of `recipients` at the simulator domain whose mailbox does not exist. */
export const unknownMailboxes = (recipients: ReadonlyArray<string>): ReadonlyArray<string> =>
  recipients.filter((r) => {
    const parsed = parse(r)
    return parsed !== undefined && "unknown" in parsed
  })

/** Why a provider refuses `unknown`, naming the mailboxes that exist. */
export const unknownMailboxMessage = (unknown: ReadonlyArray<string>): string =>
  `the simulator domain has no mailbox ${unknown.join(", ")}: use ${mailboxes} (a +label may follow the name)`

/** The events a local provider reports at once, and those it reports `delay` later (`delayed@`'s delivery). */
export interface Acted {
  readonly now: ReadonlyArray<MailEvent.Unrouted>
  readonly later: ReadonlyArray<MailEvent.Unrouted>
}

const bounces = {
  bounced: { kind: "hard", code: "5.1.1", diagnostic: "smtp; 550 5.1.1 user unknown (mailroom simulator)" },
  "soft-bounced": { kind: "soft", code: "4.2.2", diagnostic: "smtp; 452 4.2.2 mailbox full (mailroom simulator)" }
} as const

/** What each outcome reports at once (in order) and later. */
const script: Readonly<
  Record<Outcome, { readonly now: ReadonlyArray<MailEvent.Type>; readonly later: ReadonlyArray<MailEvent.Type> }>
> = {
  delivered: { now: ["delivered"], later: [] },
  bounced: { now: ["bounced"], later: [] },
  "soft-bounced": { now: ["bounced"], later: [] },
  complained: { now: ["delivered", "complained"], later: [] },
  delayed: { now: ["deferred"], later: ["delivered"] },
  suppressed: { now: ["rejected"], later: [] }
}

/**
 * The events of a message a local provider (the outbox, the memory provider) accepted: `delivered` to
 * each recipient, `rejected` to those `isRejected` names, and for each simulator address what its
 * mailbox acts out; `delayed@`'s `delivered` is dated `delayMillis` after `at`.
 */
export const accepted = (options: {
  readonly provider: string
  readonly messageId: string
  readonly email: {
    readonly to: ReadonlyArray<string>
    readonly cc: ReadonlyArray<string>
    readonly bcc: ReadonlyArray<string>
    readonly metadata?: Readonly<Record<string, string>>
  }
  readonly at: Date
  readonly delayMillis: number
  readonly isRejected?: (recipient: string) => boolean
}): Acted => {
  const now: Array<MailEvent.Unrouted> = []
  const later: Array<MailEvent.Unrouted> = []
  const event = (recipient: string, type: MailEvent.Type, at: Date, outcome: Outcome | undefined) =>
    make({
      type,
      provider: options.provider,
      messageId: options.email.metadata?.[messageKey] ?? options.messageId,
      providerMessageId: options.messageId,
      recipient,
      occurredAt: at.toISOString(),
      organizationId: options.email.metadata?.[organizationKey],
      ...(type === "bounced" && (outcome === "bounced" || outcome === "soft-bounced")
        ? { bounce: bounces[outcome] }
        : {}),
      raw: {
        messageId: options.messageId,
        recipient,
        status: type === "rejected" ? "suppressed" : type,
        ...(outcome === undefined ? {} : { simulated: outcome }),
        timestamp: at.toISOString()
      }
    })
  const laterAt = new Date(options.at.getTime() + options.delayMillis)
  for (const recipient of recipientsOf(options.email)) {
    const parsed = parse(recipient)
    if (options.isRejected?.(recipient) === true) now.push(event(recipient, "rejected", options.at, undefined))
    else if (parsed === undefined || "unknown" in parsed) now.push(event(recipient, "delivered", options.at, undefined))
    else {
      const { outcome } = parsed
      for (const type of script[outcome].now) now.push(event(recipient, type, options.at, outcome))
      for (const type of script[outcome].later) later.push(event(recipient, type, laterAt, outcome))
    }
  }
  return { now, later }
}

// --- the vendors' simulators ------------------------------------------------------------------------

/**
 * SES's mailbox simulator (`simulator.amazonses.com`): what each outcome is sent to, where SES has
 * one. SES has no soft bounce and no delay. Labels are SES's own (`bounce+label@`).
 */
export const sesDomain = "simulator.amazonses.com"
const sesMailboxes: Readonly<Partial<Record<Outcome, string>>> = {
  delivered: "success",
  bounced: "bounce",
  complained: "complaint",
  suppressed: "suppressionlist"
}
// Every address mailroom maps carries this label first, so SES's events are mapped back without
// touching mail a caller sent to the SES simulator itself.
const sesMark = "mailroom"

/**
 * Postmark's bounce-testing domain: each outcome Postmark can act out, as the `X-PM-Bounce-Type`
 * that selects it (Postmark has no delivery address, and no SpamComplaint there: SpamNotification,
 * which mailroom reads as `complained`, stands in).
 */
export const postmarkDomain = "bounce-testing.postmarkapp.com"
const postmarkBounceTypes: Readonly<Partial<Record<Outcome, string>>> = {
  bounced: "HardBounce",
  "soft-bounced": "SoftBounce",
  complained: "SpamNotification",
  delayed: "Transient",
  suppressed: "ManuallyDeactivated"
}

/** The vendors whose own simulators a simulator address maps to. */
export type Vendor = "ses" | "postmark"

/** What a vendor has no simulator for, in the words of a refusal. */
const missing: Readonly<Record<Vendor, string>> = {
  ses: "SES's mailbox simulator has no soft bounce and no delay",
  postmark: "Postmark's bounce-testing domain has no delivery: send through a Postmark sandbox server instead"
}

/**
 * The vendor's address for a simulator address, or why it has none. SES: `bounced+alice@` is sent to
 * `bounce+mailroom-alice@simulator.amazonses.com`. Postmark: the local part is kept
 * (`bounced+alice@bounce-testing.postmarkapp.com`) and `bounceType` goes in `X-PM-Bounce-Type`.
 */
export const toVendor = (
  vendor: Vendor,
  mailbox: Mailbox
): { readonly address: string; readonly bounceType?: string } | { readonly refused: string } => {
  const suffix = mailbox.label === undefined ? "" : `+${mailbox.label}`
  if (vendor === "ses") {
    const name = sesMailboxes[mailbox.outcome]
    if (name === undefined) return { refused: `${mailbox.outcome}@${domain}: ${missing.ses}` }
    const tag = mailbox.label === undefined ? sesMark : `${sesMark}-${mailbox.label}`
    return { address: `${name}+${tag}@${sesDomain}` }
  }
  const bounceType = postmarkBounceTypes[mailbox.outcome]
  if (bounceType === undefined) return { refused: `${mailbox.outcome}@${domain}: ${missing.postmark}` }
  return { address: `${mailbox.outcome}${suffix}@${postmarkDomain}`, bounceType }
}

/**
 * The simulator address a vendor's event names, for an address `toVendor` made; any other address
 * as it is. So events, the message log and suppressions speak of the address the caller sent to.
 */
export const fromVendor = (vendor: Vendor, address: string): string => {
  const at = address.lastIndexOf("@")
  const host = address.slice(at + 1).toLowerCase()
  const local = address.slice(0, at)
  const plus = local.indexOf("+")
  const name = (plus < 0 ? local : local.slice(0, plus)).toLowerCase()
  const tag = plus < 0 ? undefined : local.slice(plus + 1)
  if (vendor === "ses") {
    if (host !== sesDomain || tag === undefined || !(tag === sesMark || tag.startsWith(`${sesMark}-`))) return address
    const outcome = outcomes.find((o) => sesMailboxes[o] === name)
    if (outcome === undefined) return address
    const rest = tag.slice(sesMark.length + 1)
    return `${outcome}${rest === "" ? "" : `+${rest}`}@${domain}`
  }
  if (host !== postmarkDomain || !outcomes.some((o) => o === name && postmarkBounceTypes[o] !== undefined)) {
    return address
  }
  return `${local}@${domain}`
}

/** The header through which Postmark's bounce-testing domain selects the bounce it acts out. */
export const postmarkBounceHeader = "X-PM-Bounce-Type"

/**
 * A message as a vendor provider sends it: each simulator recipient replaced by the vendor's address
 * (and, for Postmark, the bounce type in `X-PM-Bounce-Type`) when `enabled`; otherwise, or when the
 * vendor has nothing for one, why it must not go out (mail to `.test` would bounce for real, which
 * counts against the account's reputation). Other recipients are kept as they are.
 */
export const forVendor = <
  E extends {
    readonly to: ReadonlyArray<string>
    readonly cc: ReadonlyArray<string>
    readonly bcc: ReadonlyArray<string>
    readonly headers?: ReadonlyArray<{ readonly name: string; readonly value: string }>
  }
>(
  vendor: Vendor,
  email: E,
  enabled: boolean
): { readonly email: E } | { readonly refused: string } => {
  // A message to no simulator address (nearly every one) goes as it is.
  const simulated = (list: ReadonlyArray<string>) => list.some((address) => parse(address) !== undefined)
  if (!simulated(email.to) && !simulated(email.cc) && !simulated(email.bcc)) return { email }
  const problems: Array<string> = []
  const bounceTypes = new Set<string>()
  const map = (list: ReadonlyArray<string>) =>
    list.map((address) => {
      const parsed = parse(address)
      if (parsed === undefined) return address
      if ("unknown" in parsed) {
        problems.push(unknownMailboxMessage([address]))
        return address
      }
      if (!enabled) {
        problems.push(
          `${address} is a mailroom simulator address, which ${vendor === "ses" ? "SES" : "Postmark"} would bounce for real: set the provider's simulator option to send it to the vendor's own simulator`
        )
        return address
      }
      const mapped = toVendor(vendor, parsed)
      if ("refused" in mapped) {
        problems.push(mapped.refused)
        return address
      }
      if (mapped.bounceType !== undefined) bounceTypes.add(mapped.bounceType)
      return mapped.address
    })
  const mapped = { ...email, to: map(email.to), cc: map(email.cc), bcc: map(email.bcc) }
  if (bounceTypes.size > 1) {
    problems.push(
      `Postmark acts out one bounce type per message (${postmarkBounceHeader}): send one simulator outcome at a time`
    )
  }
  if (problems.length > 0) return { refused: [...new Set(problems)].join("; ") }
  const [bounceType] = bounceTypes
  return {
    email:
      bounceType === undefined
        ? mapped
        : { ...mapped, headers: [...(email.headers ?? []), { name: postmarkBounceHeader, value: bounceType }] }
  }
}
