// The one place SES's answers become core's ProviderError: each SES exception, HTTP status and network
// failure maps to a reason, and the SDK's own error is kept as `cause`.
import type { EmailProvider } from "@mailroom/core"
import { ProviderError } from "@mailroom/core"
import * as Adapter from "@mailroom/core/adapter"
import * as Duration from "effect/Duration"

export interface Context {
  readonly email: EmailProvider.OutboundEmail
  /** Credential values that must never appear in a message, even when a vendor echoes them. */
  readonly secrets: ReadonlyArray<string>
  /** The provider's own deadline, when it passed and the provider aborted the request. */
  readonly timedOutAfter?: Duration.Duration
}

interface SdkError {
  readonly name?: unknown
  readonly message?: unknown
  readonly $metadata?: { readonly httpStatusCode?: number }
  readonly $response?: { readonly headers?: Record<string, string | undefined> }
}

/**
 * SES says nothing about how soon a spent quota comes back (it is a rolling 24 hours); its guide on
 * sending-limit errors advises waiting up to 10 minutes before trying again. Being far above core's
 * longest backoff, it also stops core from retrying at once.
 */
export const quotaRetryAfter: Duration.Duration = Duration.minutes(10)

// Refusals of the credentials or of the IAM policy: a deployment problem, not the caller's.
const credentialRefusals = new Set([
  "AccessDeniedException",
  "UnrecognizedClientException",
  "InvalidSignatureException",
  "SignatureDoesNotMatch",
  "IncompleteSignatureException",
  "InvalidClientTokenId",
  "MissingAuthenticationTokenException",
  "ExpiredTokenException",
  "NotAuthorized"
])

const throttling = new Set([
  "TooManyRequestsException",
  "ThrottlingException",
  "Throttling",
  "ThrottledException",
  "RequestLimitExceeded"
])

const asSdkError = (error: unknown): SdkError => (typeof error === "object" && error !== null ? error : {})
const text = (u: unknown): string => (typeof u === "string" ? u : "")

const scrubber =
  (secrets: ReadonlyArray<string>) =>
  (message: string): string =>
    secrets.reduce((m, secret) => (secret.length >= 4 ? m.split(secret).join("<redacted>") : m), message)

/** `Retry-After` as seconds or as an HTTP date; SES rarely sends it, but it is honoured when it does. */
const retryAfterOf = (error: SdkError): Duration.Duration | undefined => {
  const value = error.$response?.headers?.["retry-after"]?.trim()
  if (value === undefined || value === "") return undefined
  if (/^\d+$/.test(value)) return Duration.seconds(Number(value))
  const at = Date.parse(value)
  return Number.isNaN(at) ? undefined : Duration.millis(Math.max(0, at - Date.now()))
}

const domainOf = (address: string) => address.slice(address.lastIndexOf("@") + 1).toLowerCase()

/** The identities SES names after "...failed the check in region X:", as lower-case words. */
const namedIdentities = (message: string): ReadonlyArray<string> => {
  const list = /failed the check in region[^:]*:(.*)$/is.exec(message)?.[1] ?? ""
  return list
    .split(/[\s,<>"]+/)
    .map((word) => word.replace(/(\.\.\.|…|\.)+$/, "").toLowerCase())
    .filter((word) => word !== "")
}

/**
 * "Email address is not verified" covers both the unverified sender and, in the sandbox, the
 * unverified recipient. SES names the identities that failed: when all of those are recipients of this
 * message, it is the sandbox; anything else named (the From address, its domain, a Return-Path), or
 * nothing named at all, is the sender's side.
 */
const notVerified = (message: string, email: EmailProvider.OutboundEmail): ProviderError.Reason => {
  const named = namedIdentities(message)
  const sender = email.from.address.toLowerCase()
  const senderDomain = domainOf(sender)
  const recipients = [...email.to, ...email.cc, ...email.bcc]
  const isRecipient = (word: string) => recipients.some((r) => r.toLowerCase() === word)
  const identities = named.filter((word) => word.includes("@") || word === senderDomain)
  const senderSide = identities.some((word) => word === sender || word === senderDomain || !isRecipient(word))
  if (identities.length === 0 || senderSide) {
    return new ProviderError.SenderNotVerified({
      message: `the sender ${email.from.address} is not verified with SES: ${message}`,
      sender: email.from.address
    })
  }
  const unverified = recipients.filter((r, i) => identities.includes(r.toLowerCase()) && recipients.indexOf(r) === i)
  return new ProviderError.RecipientNotVerified({
    message: `SES is in the sandbox and these recipients are not verified: ${unverified.join(", ")}`,
    recipients: unverified
  })
}

const quotaExhausted = (name: string, message: string, error: SdkError) =>
  new ProviderError.RateLimited({
    message: `the SES sending quota is used up (${name}: ${message})`,
    retryAfter: retryAfterOf(error) ?? quotaRetryAfter
  })

const throttled = (name: string, message: string, error: SdkError) => {
  if (/daily message quota/i.test(message)) return quotaExhausted(name, message, error)
  const retryAfter = retryAfterOf(error)
  const base = `SES throttled the request (${name}: ${message})`
  return retryAfter === undefined
    ? new ProviderError.RateLimited({ message: base })
    : new ProviderError.RateLimited({ message: base, retryAfter })
}

/** MessageRejected is SES's catch-all refusal of a message; its text says which one. */
const rejected = (message: string, email: EmailProvider.OutboundEmail, error: SdkError): ProviderError.Reason => {
  if (/not verified/i.test(message)) return notVerified(message, email)
  if (/sending (is )?paused/i.test(message)) {
    return new ProviderError.SendingPaused({ message: `SES sending is paused: ${message}`, permanent: false })
  }
  if (/suspended/i.test(message)) {
    return new ProviderError.SendingPaused({ message: `the SES account is suspended: ${message}`, permanent: true })
  }
  if (/quota|sending rate/i.test(message)) return throttled("MessageRejected", message, error)
  if (/message length|too (large|long)|message size/i.test(message)) {
    return new ProviderError.MessageTooLarge({ message: `SES refused the message as too large: ${message}` })
  }
  if (/blacklist|suppress/i.test(message)) {
    const lower = message.toLowerCase()
    const recipients = [...email.to, ...email.cc, ...email.bcc].filter((r) => lower.includes(r.toLowerCase()))
    return new ProviderError.RecipientSuppressed({ message: `SES refused a recipient: ${message}`, recipients })
  }
  return new ProviderError.InvalidRequest({ message: `SES rejected the message: ${message}` })
}

/**
 * Failures with no HTTP answer: core's one reading of network failures decides whether SES may have
 * received the request. An error that shows no network failure at all (a bad SDK setting) is Unknown.
 */
const unanswered = (error: SdkError, name: string, message: string): ProviderError.Reason => {
  if (name === "CredentialsProviderError" || name === "TokenProviderError") {
    return new ProviderError.Unavailable({ message: `could not load AWS credentials: ${message}`, possiblySent: false })
  }
  if (Adapter.transportFailure(error).kind !== "unknown") return Adapter.transportUnavailable("SES", error)
  return new ProviderError.Unknown({ message: `the SES request failed: ${name === "" ? "" : `${name}: `}${message}` })
}

const reasonOf = (error: unknown, context: Context): ProviderError.Reason => {
  const sdk = asSdkError(error)
  const scrub = scrubber(context.secrets)
  const name = text(sdk.name)
  const message = scrub(text(sdk.message))
  const status = sdk.$metadata?.httpStatusCode
  if (status === undefined) return unanswered(sdk, name, message)
  if (name === "MessageRejected") return rejected(message, context.email, sdk)
  if (name === "SendingPausedException") {
    return new ProviderError.SendingPaused({ message: `SES sending is paused: ${message}`, permanent: false })
  }
  if (name === "AccountSuspendedException") {
    return new ProviderError.SendingPaused({ message: `the SES account is suspended: ${message}`, permanent: true })
  }
  if (name === "LimitExceededException") return quotaExhausted(name, message, sdk)
  if (throttling.has(name) || status === 429) return throttled(name, message, sdk)
  if (name === "MailFromDomainNotVerifiedException") {
    return new ProviderError.InvalidRequest({ message: `the MAIL FROM domain is not verified with SES: ${message}` })
  }
  if (name === "NotFoundException") {
    return new ProviderError.InvalidRequest({ message: `SES could not find a resource the request names: ${message}` })
  }
  if (name === "BadRequestException" || name === "ValidationException" || name === "SerializationException") {
    return new ProviderError.InvalidRequest({ message: `SES refused the request: ${message}` })
  }
  if (credentialRefusals.has(name) || status === 401 || status === 403) {
    return new ProviderError.Unknown({
      message: `SES refused the credentials or their permissions (${name}): ${message}`
    })
  }
  if (status >= 500) {
    return new ProviderError.Unavailable({
      message: `SES failed with HTTP ${status} (${name}); the message may have been accepted: ${message}`,
      possiblySent: true
    })
  }
  if (status < 300) {
    return new ProviderError.Unavailable({
      message: `SES answered HTTP ${status} but the answer could not be read; the message may have been accepted: ${message}`,
      possiblySent: true
    })
  }
  return new ProviderError.Unknown({ message: `SES answered HTTP ${status} (${name}): ${message}` })
}

/**
 * How a send failed, as core's error. `error` is what `SESv2Client.send` rejected with (an `Error`:
 * SES's exception, or the network's), or else what it resolved to when that held no MessageId.
 */
export const toProviderError = (error: unknown, context: Context): ProviderError.ProviderError =>
  new ProviderError.ProviderError({
    provider: "ses",
    reason:
      context.timedOutAfter !== undefined
        ? new ProviderError.Unavailable({
            message: `SES did not answer within ${Duration.format(context.timedOutAfter)}; the message may have been sent`,
            possiblySent: true
          })
        : error instanceof Error
          ? reasonOf(error, context)
          : // SES always answers a MessageId; without one, nothing says whether the message went out.
            new ProviderError.Unavailable({
              message: "SES answered without a MessageId; the message may have been accepted",
              possiblySent: true
            }),
    cause: error
  })
