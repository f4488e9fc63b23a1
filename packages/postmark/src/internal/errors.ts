// Every way a Postmark send can fail, translated into core's ProviderError reasons in this one place.
// The postmark client's own error is kept as `cause`; no message ever carries the server token.
import { type EmailProvider, ProviderError } from "@mailroom/core"
import * as Adapter from "@mailroom/core/adapter"

/** What the `postmark` client rejects with: an `Errors.PostmarkError` (or a subclass) with these fields. */
interface PostmarkFailure {
  readonly message: string
  /** Postmark's `ErrorCode`; 0 when the answer had none. */
  readonly code: number
  /** The HTTP status; 0 when no answer came back (network failure, timeout). */
  readonly statusCode: number
}

export interface SendContext {
  readonly email: EmailProvider.OutboundEmail
  readonly forbiddenExtensions: ReadonlyArray<string>
  readonly messageStream: string
  /**
   * The transport error behind a failure without an HTTP status, when it was seen: the client reduces it
   * to its message ("fetch failed"), which cannot tell a refused connection from a dropped one.
   */
  readonly transportError: unknown
}

// Duck-typed rather than `instanceof`, so a second copy of the `postmark` package is still understood.
const isPostmarkFailure = (u: unknown): u is PostmarkFailure =>
  u instanceof Error &&
  typeof (u as Partial<PostmarkFailure>).code === "number" &&
  typeof (u as Partial<PostmarkFailure>).statusCode === "number"

const domainOf = (address: string) => address.slice(address.lastIndexOf("@") + 1).toLowerCase()

// The patterns Postmark's own clients read the addresses with, from the 406 message
// "... Found inactive addresses: a@x.com, b@y.com. Inactive recipients are ...".
const inactivePatterns = [/Found inactive addresses: (.+?)\.? Inactive/, /these inactive addresses: (.+?)\.?$/]

const inactiveRecipients = (message: string): ReadonlyArray<string> => {
  for (const pattern of inactivePatterns) {
    const found = pattern.exec(message)?.[1]
    if (found !== undefined) return found.split(",").map((address) => address.trim())
  }
  return []
}

const quoted = (names: ReadonlyArray<string>) => names.map((name) => `"${name}"`).join(", ")

/** Translates Postmark's `ErrorCode` from an HTTP 422 (or a 2xx answer that carries one). */
const fromErrorCode = (code: number, message: string, context: SendContext): ProviderError.Reason => {
  const { email } = context
  const sender = email.from.address
  switch (code) {
    case 400:
      return new ProviderError.SenderNotVerified({
        message: `${sender} is not a sender signature or on a verified domain of the Postmark account`,
        sender
      })
    case 401:
      return new ProviderError.SenderNotVerified({
        message: `the Postmark sender signature of ${sender} is not confirmed yet`,
        sender
      })
    case 412: {
      // Postmark names the domains; the recipients on them are those outside the sender's domain.
      const own = domainOf(sender)
      const recipients = [...email.to, ...email.cc, ...email.bcc].filter((address) => domainOf(address) !== own)
      return new ProviderError.RecipientNotVerified({
        message: `the Postmark account is pending approval: it sends only to addresses on ${own}${recipients.length > 0 ? `, not to ${recipients.join(", ")}` : ""}`,
        recipients
      })
    }
    case 406: {
      const recipients = inactiveRecipients(message)
      return new ProviderError.RecipientSuppressed({
        message:
          recipients.length > 0
            ? `Postmark will not send to ${recipients.join(", ")}: marked inactive after a hard bounce, a spam complaint or a manual suppression`
            : "Postmark will not send to a recipient marked inactive after a hard bounce, a spam complaint or a manual suppression",
        recipients
      })
    }
    case 405:
      return new ProviderError.SendingPaused({
        message: "Postmark does not allow this account to send (ErrorCode 405)",
        permanent: true
      })
    case 413:
      return new ProviderError.SendingPaused({
        message: "the Postmark account is not approved to send email",
        permanent: true
      })
    case 411: {
      const forbidden = new Set(context.forbiddenExtensions)
      const named = email.attachments
        .map((a) => a.filename)
        .filter((name) => Adapter.attachmentExtensions(name).some((extension) => forbidden.has(extension)))
      const names = named.length > 0 ? named : email.attachments.map((a) => a.filename)
      return new ProviderError.InvalidRequest({
        message: `Postmark does not accept the file type of the attachment ${quoted(names)}`
      })
    }
    // The server is not set up for what the options ask: a configuration error, not the caller's.
    case 1235:
    case 1236:
      return new ProviderError.Unknown({
        message: `the Postmark message stream "${context.messageStream}" does not exist on this server or cannot send; check the messageStream option`
      })
    case 1480:
      return new ProviderError.Unknown({ message: "Postmark refuses to send from this IP address (IP allowlist)" })
    case 10:
    case 422:
      return new ProviderError.Unknown({ message: "the Postmark server token was refused" })
    // 300 (invalid email request), 402 (invalid JSON), 403 (invalid field), 409 (JSON required), and any
    // other code Postmark answers with 422: it found something wrong with the message. Its text names it.
    default:
      return new ProviderError.InvalidRequest({ message: `Postmark refused the message: ${message}` })
  }
}

const reasonOf = (failure: PostmarkFailure, context: SendContext): ProviderError.Reason => {
  const { statusCode } = failure
  // No answer: the client keeps only "fetch failed", so the error its `fetch` saw is what is read.
  if (statusCode === 0) return Adapter.transportUnavailable("Postmark", context.transportError)
  if (statusCode === 422) return fromErrorCode(failure.code, failure.message, context)
  // A refused token is the operator's configuration, not the caller's request: it must surface as an
  // internal error, so it is `Unknown`, and says nothing of the token.
  if (statusCode === 401) return new ProviderError.Unknown({ message: "the Postmark server token was refused" })
  if (statusCode === 413) {
    return new ProviderError.MessageTooLarge({ message: "the message is larger than the 10 MB Postmark accepts" })
  }
  if (statusCode === 429) {
    return new ProviderError.RateLimited({ message: "Postmark is rate limiting this server; the message was not sent" })
  }
  // Postmark documents 503 as its answer during planned outages: the API is offline and took nothing.
  if (statusCode === 503) {
    return new ProviderError.Unavailable({
      message: "Postmark is unavailable (HTTP 503); the message was not sent",
      possiblySent: false
    })
  }
  // "In most cases the message is lost" (Postmark on 500) is not a promise: a retry could send twice.
  if (statusCode >= 500) {
    return new ProviderError.Unavailable({
      message: `Postmark failed with HTTP ${statusCode}; the message may have been sent`,
      possiblySent: true
    })
  }
  // 404, 415 and the like: this integration sent something Postmark does not serve.
  return new ProviderError.Unknown({ message: `Postmark answered HTTP ${statusCode} to the send request` })
}

/** A 2xx answer without a MessageID: Postmark reports the refusal in its `ErrorCode` instead. */
const answerReason = (answer: unknown, context: SendContext): ProviderError.Reason => {
  const { ErrorCode, Message } = (typeof answer === "object" && answer !== null ? answer : {}) as {
    ErrorCode?: unknown
    Message?: unknown
  }
  return typeof ErrorCode === "number" && ErrorCode !== 0
    ? fromErrorCode(ErrorCode, typeof Message === "string" ? Message : "", context)
    : new ProviderError.Unknown({ message: "Postmark accepted the request but answered without a MessageID" })
}

/**
 * How a send failed, as core's error. `error` is what `ServerClient.sendEmail` rejected with (an
 * `Error`: what the client read of Postmark's answer, or of no answer), or else what it resolved to
 * when that held no MessageID.
 */
export const toProviderError = (error: unknown, context: SendContext): ProviderError.ProviderError =>
  new ProviderError.ProviderError({
    provider: "postmark",
    reason: !(error instanceof Error)
      ? answerReason(error, context)
      : isPostmarkFailure(error)
        ? reasonOf(error, context)
        : new ProviderError.Unknown({ message: "the Postmark client failed unexpectedly" }),
    cause: error
  })
