// The one error every EmailProvider fails with. Adapters translate their vendor's answers into a
// `reason` from this vocabulary and keep the vendor's own error as `cause`.
import type * as Duration from "effect/Duration"
import { guard, ReasonError, TaggedReason } from "./internal/reasonError.js"

/** The sender address or its domain is not verified with the provider (or with the organisation). */
export class SenderNotVerified extends TaggedReason("SenderNotVerified", false)<{
  readonly message: string
  readonly sender?: string
}> {}

/** The provider is in a sandbox and one or more recipients are not verified with it. */
export class RecipientNotVerified extends TaggedReason("RecipientNotVerified", false)<{
  readonly message: string
  readonly recipients: ReadonlyArray<string>
}> {}

/** The provider refuses to deliver to these recipients (bounced, complained, unsubscribed). */
export class RecipientSuppressed extends TaggedReason("RecipientSuppressed", false)<{
  readonly message: string
  readonly recipients: ReadonlyArray<string>
}> {}

/** Sending is paused on the provider account; `permanent` when the account is suspended or closed. */
export class SendingPaused extends TaggedReason("SendingPaused", false)<{
  readonly message: string
  readonly permanent: boolean
}> {}

/** The provider throttled the request; it was not accepted and may be tried again. */
export class RateLimited extends TaggedReason("RateLimited", true)<{
  readonly message: string
  readonly retryAfter?: Duration.Duration
}> {}

/** The message is larger than the provider accepts. */
export class MessageTooLarge extends TaggedReason("MessageTooLarge", false)<{
  readonly message: string
}> {}

/** The provider refused the request as malformed or not allowed (bad configuration set, forbidden attachment...). */
export class InvalidRequest extends TaggedReason("InvalidRequest", false)<{
  readonly message: string
}> {}

/**
 * The provider could not be reached or failed. `possiblySent` is true when the request had already
 * gone out (a timeout or a dropped connection after sending): retrying could then send twice.
 * `retryAfter`, when known, is how long the outage is expected to last (a full disk under the
 * outbox): callers are told to wait that long.
 */
export class Unavailable extends TaggedReason("Unavailable", (fields) => !fields.possiblySent)<{
  readonly message: string
  readonly possiblySent: boolean
  readonly retryAfter?: Duration.Duration
}> {}

/** Anything the adapter could not classify. Not retried. */
export class Unknown extends TaggedReason("Unknown", false)<{
  readonly message: string
}> {}

/** Why a provider refused or failed a send. */
export type Reason =
  | SenderNotVerified
  | RecipientNotVerified
  | RecipientSuppressed
  | SendingPaused
  | RateLimited
  | MessageTooLarge
  | InvalidRequest
  | Unavailable
  | Unknown

/** The one error every provider fails with; `reason` says what happened. */
export class ProviderError extends ReasonError("ProviderError")<{
  /** The provider that answered: "ses", "postmark", "outbox", "memory", or "mailroom" for checks core makes itself. */
  readonly provider: string
  readonly reason: Reason
  readonly cause?: unknown
  /**
   * Set on every error of an `EmailProvider.failover`: what each other provider of the chain answered
   * before this one (a provider skipped while its circuit was open as `Unavailable`), in chain order.
   * The failover already tried every provider that could take the message, so core's Mailer does not
   * retry it.
   */
  readonly failover?: ReadonlyArray<ProviderError>
}> {}

/** True for a ProviderError from any copy of this package (safer than `instanceof` across duplicates). */
export const isProviderError = guard<ProviderError>("ProviderError")
