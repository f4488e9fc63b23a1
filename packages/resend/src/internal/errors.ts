// Every way a Resend send can fail, translated into core's ProviderError reasons in this one place:
// Resend's answers by error `name` (then by status), and failures with no answer by what the transport says.
import { type EmailProvider, ProviderError } from "@mailroom/core"
import * as Adapter from "@mailroom/core/adapter"
import * as Duration from "effect/Duration"

/** An answer Resend gave: its status, headers, and the body `{statusCode, name, message}` when it had one. */
export interface Answered {
  readonly _tag: "Answered"
  readonly status: number
  readonly headers: Headers
  readonly body: unknown
}

/** No answer: `fetch` rejected (refused, reset, DNS...) with `error`. */
export interface NoAnswer {
  readonly _tag: "NoAnswer"
  readonly error: unknown
}

/** No answer within the `timeout` option. */
export interface TimedOut {
  readonly _tag: "TimedOut"
  readonly after: Duration.Duration
}

export type Failure = Answered | NoAnswer | TimedOut

export interface SendContext {
  readonly email: EmailProvider.OutboundEmail
  readonly forbiddenExtensions: ReadonlyArray<string>
  /** The time of the answer, in ms, for a `retry-after` given as an HTTP date. */
  readonly now: number
}

/** Resend's error body, `{statusCode, name, message}`; empty strings when it had none (a proxy's HTML page). */
export const errorBody = (body: unknown): { readonly name: string; readonly message: string } => {
  const { name, message } = (typeof body === "object" && body !== null ? body : {}) as Record<string, unknown>
  return { name: typeof name === "string" ? name : "", message: typeof message === "string" ? message : "" }
}

// What certainly happened before any byte of the request left: nothing can have been sent.
const neverSentCodes = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "UND_ERR_CONNECT_TIMEOUT"
])

/** The `code`s along an error's `cause` chain (and inside an AggregateError from trying several addresses). */
const codesOf = (error: unknown, depth = 0): ReadonlyArray<string> => {
  if (typeof error !== "object" || error === null || depth > 8) return []
  const { code, cause, errors } = error as { code?: unknown; cause?: unknown; errors?: unknown }
  return [
    ...(typeof code === "string" ? [code] : []),
    ...codesOf(cause, depth + 1),
    ...(Array.isArray(errors) ? errors.flatMap((e) => codesOf(e, depth + 1)) : [])
  ]
}

/**
 * A failure with no HTTP answer: retried only when the connection was never made, since otherwise
 * Resend may have taken the message. Kept as one function so that a transport classifier shared by
 * every adapter (from `@mailroom/core/adapter`) can replace it.
 */
export const transportReason = (error: unknown): ProviderError.Unavailable => {
  const codes = codesOf(error)
  if (codes.length > 0 && codes.every((code) => neverSentCodes.has(code))) {
    return new ProviderError.Unavailable({
      message: `Resend could not be reached (${codes[0]}); the message was not sent`,
      possiblySent: false
    })
  }
  return new ProviderError.Unavailable({
    message: `the connection to Resend failed${codes.length > 0 ? ` (${codes[0]})` : ""}; the message may have been sent`,
    possiblySent: true
  })
}

/** How long Resend asks to wait: `retry-after` (seconds or an HTTP date), else `ratelimit-reset` (seconds). */
export const retryAfterOf = (headers: Headers, now: number): Duration.Duration | undefined => {
  const seconds = (value: string | null) => (value !== null && /^\d+$/.test(value.trim()) ? Number(value) : undefined)
  const retryAfter = headers.get("retry-after")
  const wait =
    seconds(retryAfter) ??
    (retryAfter !== null && !Number.isNaN(Date.parse(retryAfter))
      ? Math.max(0, (Date.parse(retryAfter) - now) / 1000)
      : seconds(headers.get("ratelimit-reset")))
  return wait === undefined ? undefined : Duration.seconds(wait)
}

const recipientsOf = (email: EmailProvider.OutboundEmail) => [...email.to, ...email.cc, ...email.bcc]

/** `validation_error` answered with 403: the testing sender's sandbox, or a From on no verified domain. */
const forbidden = (message: string, context: SendContext): ProviderError.Reason => {
  const { email } = context
  if (/only send testing emails/i.test(message)) {
    // "... to your own email address (you@example.com). ..." names the one recipient allowed.
    const own = /\(([^()\s]+@[^()\s]+)\)/.exec(message)?.[1]?.toLowerCase()
    const recipients = recipientsOf(email).filter((address) => address.toLowerCase() !== own)
    return new ProviderError.RecipientNotVerified({
      message: `Resend sends from its testing address only to the account's own address${own === undefined ? "" : ` (${own})`}, not to ${recipients.join(", ")}; verify a domain to send to others`,
      recipients
    })
  }
  if (/not verified/i.test(message)) {
    const sender = email.from.address
    return new ProviderError.SenderNotVerified({
      message: `the domain of ${sender} is not a verified domain of the Resend account`,
      sender
    })
  }
  return new ProviderError.InvalidRequest({ message: `Resend refused the message: ${message}` })
}

const keyRefused = new ProviderError.Unknown({ message: "the Resend API key was refused" })

/** The file names Resend will not take, or every attachment's when none matches the list. */
const attachmentNames = (context: SendContext) => {
  const forbidden = new Set(context.forbiddenExtensions)
  const names = context.email.attachments.map((a) => a.filename)
  const named = names.filter((name) => forbidden.has(Adapter.attachmentExtension(name)))
  return (named.length > 0 ? named : names).map((name) => `"${name}"`).join(", ")
}

/** An answer with Resend's documented error `name`, or undefined to fall back on the status. */
const byName = (name: string, message: string, answer: Answered, context: SendContext) => {
  const { status } = answer
  switch (name) {
    case "validation_error":
      // Every status but 400 and 422 says the key, the sandbox or the domain; 400 and 422 name a field.
      if (status === 401 || /api key/i.test(message)) return keyRefused
      if (status === 403) return forbidden(message, context)
      return new ProviderError.InvalidRequest({ message: `Resend refused the message: ${message}` })
    case "missing_required_field":
    case "invalid_from_address":
    case "invalid_parameter":
    case "invalid_access":
    case "invalid_region":
    case "security_error":
      return new ProviderError.InvalidRequest({ message: `Resend refused the message: ${message}` })
    case "invalid_attachment":
      return new ProviderError.InvalidRequest({
        message: `Resend refused the attachment ${attachmentNames(context)}: ${message}`
      })
    // The key is the operator's configuration, not the caller's request: an internal error, never shown.
    case "missing_api_key":
    case "invalid_api_key":
    case "restricted_api_key":
      return keyRefused
    case "invalid_idempotency_key":
      return new ProviderError.Unknown({ message: "Resend refused the Idempotency-Key mailroom derived" })
    case "invalid_idempotent_request":
      return new ProviderError.InvalidRequest({
        message: "Resend already took another message under this Idempotency-Key within 24 hours; this one was not sent"
      })
    // "It is safe to retry this request later": the first is still running, and this one sent nothing.
    case "concurrent_idempotent_requests":
      return new ProviderError.Unavailable({
        message: "Resend is still sending the first request with this Idempotency-Key; this one was not sent",
        possiblySent: false
      })
    case "rate_limit_exceeded": {
      const retryAfter = retryAfterOf(answer.headers, context.now)
      return new ProviderError.RateLimited({
        message: "Resend is rate limiting this account; the message was not sent",
        ...(retryAfter === undefined ? {} : { retryAfter })
      })
    }
    case "daily_quota_exceeded":
    case "monthly_quota_exceeded":
      return new ProviderError.SendingPaused({
        message: `Resend's ${name === "daily_quota_exceeded" ? "daily" : "monthly"} sending quota of this account is used up; sending resumes when it resets or the plan is raised`,
        permanent: false
      })
    case "not_found":
    case "method_not_allowed":
      return new ProviderError.Unknown({
        message: `Resend answered ${status} (${name}) to POST /emails: check the baseUrl option`
      })
    default:
      return undefined
  }
}

/** An answer without a known `name`: a proxy's page, or a code Resend added since. */
const byStatus = (answer: Answered, context: SendContext): ProviderError.Reason => {
  const { status } = answer
  if (status === 401 || status === 403) return keyRefused
  if (status === 413) {
    return new ProviderError.MessageTooLarge({ message: "the message is larger than the 40 MB Resend accepts" })
  }
  if (status === 429) {
    const retryAfter = retryAfterOf(answer.headers, context.now)
    return new ProviderError.RateLimited({
      message: "Resend is rate limiting this account; the message was not sent",
      ...(retryAfter === undefined ? {} : { retryAfter })
    })
  }
  // Resend documents no 5xx as "not sent" (application_error, internal_server_error): a retry could send twice.
  if (status >= 500) {
    return new ProviderError.Unavailable({
      message: `Resend failed with HTTP ${status}; the message may have been sent`,
      possiblySent: true
    })
  }
  if (status === 400 || status === 422) {
    const { message } = errorBody(answer.body)
    return new ProviderError.InvalidRequest({
      message: `Resend refused the message${message === "" ? ` (HTTP ${status})` : `: ${message}`}`
    })
  }
  return new ProviderError.Unknown({ message: `Resend answered HTTP ${status} to the send request` })
}

const reasonOf = (failure: Failure, context: SendContext): ProviderError.Reason => {
  if (failure._tag === "Answered" && failure.status >= 200 && failure.status < 300) {
    return new ProviderError.Unavailable({
      message: `Resend answered HTTP ${failure.status} without an email id; the message may have been sent`,
      possiblySent: true
    })
  }
  switch (failure._tag) {
    case "NoAnswer":
      return transportReason(failure.error)
    case "TimedOut":
      return new ProviderError.Unavailable({
        message: `Resend did not answer within ${Duration.format(failure.after)}; the message may have been sent`,
        possiblySent: true
      })
    case "Answered": {
      const { name, message } = errorBody(failure.body)
      return byName(name, message, failure, context) ?? byStatus(failure, context)
    }
  }
}

/** How a send failed, as core's error; the failure (Resend's answer, or the transport's error) is its `cause`. */
export const toProviderError = (failure: Failure, context: SendContext): ProviderError.ProviderError =>
  new ProviderError.ProviderError({
    provider: "resend",
    reason: reasonOf(failure, context),
    cause: failure._tag === "NoAnswer" ? failure.error : failure
  })

/**
 * Why `GET /domains` says the provider cannot send, or undefined when it can: a sending-only key is
 * refused there as `restricted_api_key`, which proves the key, and a 429 is an answer too.
 */
export const accessReason = (failure: Failure): ProviderError.Reason | undefined => {
  switch (failure._tag) {
    case "NoAnswer": {
      const code = codesOf(failure.error)[0]
      return new ProviderError.Unavailable({
        message: `Resend could not be reached${code === undefined ? "" : ` (${code})`}`,
        possiblySent: false
      })
    }
    case "TimedOut":
      return new ProviderError.Unavailable({
        message: `Resend did not answer within ${Duration.format(failure.after)}`,
        possiblySent: false
      })
    case "Answered": {
      const { name, message } = errorBody(failure.body)
      if (name === "restricted_api_key" || failure.status === 429) return undefined
      if (failure.status === 400 || failure.status === 401 || failure.status === 403 || /api key/i.test(message)) {
        return keyRefused
      }
      return failure.status >= 500
        ? new ProviderError.Unavailable({ message: `Resend failed with HTTP ${failure.status}`, possiblySent: false })
        : new ProviderError.Unknown({ message: `Resend answered HTTP ${failure.status} to GET /domains` })
    }
  }
}
