// An inbound webhook a provider calls with its delivery records: it checks that the caller is the
// provider, and translates each record into MailEvents. @mailroom/http serves each at POST /webhooks/{name}.
import type * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { guard, ReasonError, reasonOf, TaggedReason } from "./internal/reasonError.js"
import { isHashed, matcher } from "./internal/secret.js"
import type * as MailEvent from "./MailEvent.js"

/** What a transport hands a source: the request's headers and its raw body. */
export interface InboundRequest {
  /** A header by lower-case name. */
  readonly header: (name: string) => string | undefined
  readonly body: Uint8Array
}

/** A bad signature or credential (401): the caller is not the provider. */
export class Unauthenticated extends TaggedReason("Unauthenticated", false)<{ readonly message: string }> {}

/** A body the provider never sends (400). */
export class Malformed extends TaggedReason("Malformed", false)<{ readonly message: string }> {}

/** Something needed to check the request (the signing certificate) could not be had (503): the provider sends it again. */
export class Unavailable extends TaggedReason("Unavailable", true)<{ readonly message: string }> {}

/** Why a source refused a request. */
export type Reason = Unauthenticated | Malformed | Unavailable

/** Why a request was refused; `cause` keeps what failed underneath (a fetch, a parser). */
export class EventSourceError extends ReasonError("EventSourceError")<{
  /** The vendor whose source refused it: "ses", "postmark". */
  readonly source: string
  readonly reason: Reason
  readonly cause?: unknown
}> {}

const reason = reasonOf({ Unauthenticated, Malformed, Unavailable })

/** An EventSourceError with a reason of `tag`, as sources build their refusals. */
export const refusal = (source: string, tag: Reason["_tag"], message: string, cause?: unknown): EventSourceError =>
  new EventSourceError({ source, reason: reason(tag, message), ...(cause === undefined ? {} : { cause }) })

/** True for an EventSourceError from any copy of this package. */
export const isEventSourceError = guard<EventSourceError>("EventSourceError")

/**
 * What a request's headers alone prove, before its body is read: `"verified"` (they carry the
 * provider's credential: the body is read and `receive` checks again), `"unverified"` (only the body
 * can prove it, as an SNS signature does: a transport reads few such bodies at once), or the refusal.
 */
export type HeaderCheck = "verified" | "unverified" | EventSourceError

/** A provider's webhook: checks the caller and translates the records into MailEvents. */
export interface EventSource {
  /** The path segment it is served under: `ses` -> `POST /webhooks/ses`. Letters, digits and `-`. */
  readonly name: string
  /** The events in a verified request (none for a subscription confirmation), or why it was refused. */
  readonly receive: (request: InboundRequest) => Effect.Effect<ReadonlyArray<MailEvent.Unrouted>, EventSourceError>
  /**
   * The largest body the provider sends, in bytes: a transport refuses a larger one (413) before or
   * while reading it. Absent: the transport's own limit.
   */
  readonly maxBodyBytes?: number
  /** Checks what the headers can prove, so a caller they refuse costs no body. Absent: `"unverified"`. */
  readonly checkHeaders?: (header: InboundRequest["header"]) => HeaderCheck
}

/** A shared secret as configured: the value, a `Redacted` value, or `sha256:<hex>` of the value. */
export type Secret = string | Redacted.Redacted<string>

/**
 * A check of presented values against a configured secret, in constant time, keeping only the
 * secret's SHA-256 digest; the check never throws. Building it throws on an empty secret, which would
 * let an empty header in, or a malformed `sha256:` value.
 */
export const secretMatcher = (secret: Secret, what: string): ((presented: string | undefined) => boolean) =>
  matcher(typeof secret === "string" ? secret : Redacted.value(secret), what)

/** True for a secret given as `sha256:<hex>` (which can be checked, but not sent or signed with). */
export const isHashedSecret = (secret: Secret): boolean =>
  isHashed(typeof secret === "string" ? secret : Redacted.value(secret))
