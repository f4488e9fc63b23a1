// The one error every EmailProvider fails with. Adapters translate their vendor's answers into a
// `reason` from this vocabulary and keep the vendor's own error as `cause`.
import { Data, type Duration } from "effect"

const TypeId = Symbol.for("@mailroom/core/ProviderError")

/** The sender address or its domain is not verified with the provider (or with the organisation). */
export class SenderNotVerified extends Data.TaggedClass("SenderNotVerified")<{
  readonly message: string
  readonly sender?: string
}> {
  readonly isRetryable = false
}

/** The provider is in a sandbox and one or more recipients are not verified with it. */
export class RecipientNotVerified extends Data.TaggedClass("RecipientNotVerified")<{
  readonly message: string
  readonly recipients: ReadonlyArray<string>
}> {
  readonly isRetryable = false
}

/** The provider refuses to deliver to these recipients (bounced, complained, unsubscribed). */
export class RecipientSuppressed extends Data.TaggedClass("RecipientSuppressed")<{
  readonly message: string
  readonly recipients: ReadonlyArray<string>
}> {
  readonly isRetryable = false
}

/** Sending is paused on the provider account; `permanent` when the account is suspended or closed. */
export class SendingPaused extends Data.TaggedClass("SendingPaused")<{
  readonly message: string
  readonly permanent: boolean
}> {
  readonly isRetryable = false
}

/** The provider throttled the request; it was not accepted and may be tried again. */
export class RateLimited extends Data.TaggedClass("RateLimited")<{
  readonly message: string
  readonly retryAfter?: Duration.Duration
}> {
  readonly isRetryable = true
}

/** The message is larger than the provider accepts. */
export class MessageTooLarge extends Data.TaggedClass("MessageTooLarge")<{
  readonly message: string
}> {
  readonly isRetryable = false
}

/** The provider refused the request as malformed or not allowed (bad configuration set, forbidden attachment...). */
export class InvalidRequest extends Data.TaggedClass("InvalidRequest")<{
  readonly message: string
}> {
  readonly isRetryable = false
}

/**
 * The provider could not be reached or failed. `possiblySent` is true when the request had already
 * gone out (a timeout or a dropped connection after sending): retrying could then send twice.
 * `retryAfter`, when known, is how long the outage is expected to last (a full disk under the
 * outbox): callers are told to wait that long.
 */
export class Unavailable extends Data.TaggedClass("Unavailable")<{
  readonly message: string
  readonly possiblySent: boolean
  readonly retryAfter?: Duration.Duration
}> {
  get isRetryable(): boolean {
    return !this.possiblySent
  }
}

/** Anything the adapter could not classify. Not retried. */
export class Unknown extends Data.TaggedClass("Unknown")<{
  readonly message: string
}> {
  readonly isRetryable = false
}

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

export class ProviderError extends Data.TaggedError("ProviderError")<{
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
}> {
  readonly [TypeId] = TypeId

  override get message(): string {
    return this.reason.message
  }

  get isRetryable(): boolean {
    return this.reason.isRetryable
  }
}

/** True for a ProviderError from any copy of this package (safer than `instanceof` across duplicates). */
export const isProviderError = (u: unknown): u is ProviderError => typeof u === "object" && u !== null && TypeId in u
