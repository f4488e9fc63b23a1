// Every way an SMTP send can fail, translated into core's ProviderError reasons in this one place: the
// server's reply code (and enhanced status code) where it answered, the stage the session reached where it did not.
import { ProviderError } from "@mailroom/core"

/** What nodemailer rejects with: an `Error` with some of these fields, depending on where it failed. */
interface SmtpFailure {
  readonly message: string
  /** nodemailer's code: `ECONNECTION`, `ETIMEDOUT`, `EENVELOPE`, `EMESSAGE`, `EAUTH`, `ETLS`... */
  readonly code?: string
  /** The system error's code behind nodemailer's own (`ECONNREFUSED` behind `ESOCKET`). */
  readonly originalCode?: string
  /** The SMTP command in flight: `MAIL FROM`, `RCPT TO`, `DATA`, `AUTH PLAIN`, `STARTTLS`, `CONN`... */
  readonly command?: string
  readonly response?: string
  readonly responseCode?: number
  readonly timeoutType?: string
  /** Recipients the server refused at `RCPT TO`, each with its own reply. */
  readonly rejected?: ReadonlyArray<string>
  readonly rejectedErrors?: ReadonlyArray<{ readonly response?: string; readonly recipient?: string }>
}

export interface SendContext {
  /** `host:port`, named in messages so an operator knows which server answered. */
  readonly server: string
  /** The login, when `auth` is configured: named when the server refuses it. Never the password. */
  readonly user: string | undefined
  readonly sender: string
  /**
   * Whether the whole message had been handed over, so that the final `.` of DATA may have reached the
   * server: a connection lost or a reply awaited past this point may hide an accepted message.
   */
  readonly dataSent: boolean
}

// Duck-typed rather than `instanceof`, so a second copy of nodemailer is still understood.
const asFailure = (u: unknown): SmtpFailure | undefined =>
  u instanceof Error && typeof (u as { code?: unknown }).code === "string" ? (u as SmtpFailure) : undefined

/** The enhanced status code (RFC 3463) that follows the reply code, `5.1.1`, when the server gave one. */
const enhancedCode = (response: string | undefined): string | undefined =>
  /^\d{3}[ -]([245]\.\d{1,3}\.\d{1,3})\b/.exec(response ?? "")?.[1]

/** The server's reply on one line, bounded: it says what the server objected to. */
const replyText = (response: string | undefined): string => (response ?? "").replace(/\s+/g, " ").trim().slice(0, 300)

const unavailable = (message: string, possiblySent: boolean) => new ProviderError.Unavailable({ message, possiblySent })

/**
 * A failure without an SMTP reply (no connection, TLS, a dropped connection, a timeout), by what the
 * session had reached: before the whole message was handed over the server cannot have accepted it;
 * after, the final `.` may have arrived and the server's acceptance been lost on the way back. The one
 * place SMTP's network errors are classified, so that it can give way to a shared classifier.
 */
export const transportFailure = (failure: SmtpFailure, context: SendContext): ProviderError.Reason => {
  const code = failure.originalCode ?? failure.code ?? "unknown"
  const at = `the SMTP server ${context.server}`
  if (context.dataSent) {
    return failure.code === "ETIMEDOUT"
      ? unavailable(`${at} did not answer the end of the message in time; it may have been sent`, true)
      : unavailable(
          `the connection to ${at} was lost after the whole message was sent (${code}); it may have been sent`,
          true
        )
  }
  if (failure.code === "ETIMEDOUT") {
    const wait = {
      CONNECT_TIMEOUT: "did not accept the connection within connectionTimeout",
      GREETING_TIMEOUT: "did not greet within greetingTimeout",
      UPGRADE_TIMEOUT: "did not complete the TLS upgrade in time"
    }[failure.timeoutType ?? ""]
    return unavailable(`${at} ${wait ?? "stopped answering (socketTimeout)"}; the message was not sent`, false)
  }
  // A certificate refused during the handshake comes as ESOCKET with the TLS code behind it.
  if (failure.code === "ETLS" || /CERT|SELF_SIGNED|UNABLE_TO_|ERR_TLS|ERR_SSL/.test(failure.originalCode ?? "")) {
    return unavailable(`TLS with ${at} failed (${failure.message}); the message was not sent`, false)
  }
  if (failure.code === "EDNS")
    return unavailable(
      `the SMTP host of ${context.server} could not be resolved (${code}); the message was not sent`,
      false
    )
  return unavailable(`the connection to ${at} failed (${code}); the message was not sent`, false)
}

// Replies that say "too much, too fast" rather than "not now": enhanced X.7.x for a 4xx (greylisting,
// sending rate), or the words servers use for it.
const isThrottling = (enhanced: string | undefined, text: string) =>
  enhanced?.startsWith("4.7.") === true ||
  /\b(rate|throttl\w*|slow down|too many (connections|messages|mails|sessions|requests))\b/i.test(text)

const isSize = (code: number, enhanced: string | undefined) =>
  enhanced === "5.3.4" ||
  enhanced === "5.2.3" ||
  (code === 552 && (enhanced === undefined || enhanced.startsWith("5.3.")))

/** A 4xx: the server did not take the message, now; any stage, so nothing was sent. */
const transient = (code: number, enhanced: string | undefined, text: string, context: SendContext) =>
  isThrottling(enhanced, text)
    ? new ProviderError.RateLimited({
        message: `the SMTP server ${context.server} is throttling (${text}); the message was not sent`
      })
    : unavailable(`the SMTP server ${context.server} answered ${code} (${text}); the message was not sent`, false)

/** A 5xx to AUTH or one that asks for it: the operator's configuration, so `Unknown` (a 500), never the password. */
const authentication = (code: number, enhanced: string | undefined, context: SendContext) =>
  new ProviderError.Unknown({
    message:
      context.user === undefined
        ? `the SMTP server ${context.server} requires authentication (${code}${enhanced === undefined ? "" : ` ${enhanced}`}): set auth.user and auth.pass`
        : `the SMTP server ${context.server} refused the login of user "${context.user}" (${code}${enhanced === undefined ? "" : ` ${enhanced}`}): check auth.user and auth.pass`
  })

const recipients = (failure: SmtpFailure): ReadonlyArray<string> =>
  failure.rejected ?? failure.rejectedErrors?.flatMap((e) => (e.recipient === undefined ? [] : [e.recipient])) ?? []

/** A 5xx, by the command it answered. */
const permanent = (failure: SmtpFailure, code: number, context: SendContext): ProviderError.Reason => {
  const command = failure.command ?? ""
  const response = failure.rejectedErrors?.[0]?.response ?? failure.response
  const enhanced = enhancedCode(response)
  const text = replyText(response)
  const at = `the SMTP server ${context.server}`
  // "530 5.7.0 Must issue a STARTTLS command first": TLS, not a login, is what is missing.
  if (/STARTTLS/i.test(text)) {
    return new ProviderError.Unknown({ message: `${at} requires TLS first (${text}): set requireTLS or secure` })
  }
  if (
    command.startsWith("AUTH") ||
    code === 535 ||
    code === 534 ||
    code === 530 ||
    enhanced === "5.7.8" ||
    (enhanced === "5.7.0" && /auth/i.test(text))
  ) {
    return authentication(code, enhanced, context)
  }
  if (isSize(code, enhanced)) {
    return new ProviderError.MessageTooLarge({ message: `${at} refused the message as too large (${text})` })
  }
  if (command === "MAIL FROM") {
    return enhanced?.startsWith("5.5.") === true
      ? new ProviderError.InvalidRequest({ message: `${at} refused the sender ${context.sender} (${text})` })
      : new ProviderError.SenderNotVerified({
          message: `${at} does not accept ${context.sender} as the sender (${text})`,
          sender: context.sender
        })
  }
  if (command === "RCPT TO") {
    if (enhanced?.startsWith("5.7.") === true && /relay/i.test(text)) {
      return new ProviderError.Unknown({
        message: `${at} does not relay for this client (${text}): configure auth, or allow this host on the server`
      })
    }
    const refused = recipients(failure)
    return new ProviderError.RecipientSuppressed({
      message: `${at} refused ${refused.length > 0 ? refused.join(", ") : "every recipient"} (${text}); the message was not sent`,
      recipients: refused
    })
  }
  if (command === "DATA") {
    return new ProviderError.InvalidRequest({
      message:
        enhanced?.startsWith("5.7.") === true
          ? `${at} refused the message by policy (${text})`
          : `${at} refused the message (${text})`
    })
  }
  // 5xx to EHLO and the like: the server will not talk to this client as configured.
  return new ProviderError.Unknown({ message: `${at} refused ${command || "the session"} (${text})` })
}

const reasonOf = (failure: SmtpFailure, context: SendContext): ProviderError.Reason => {
  const code = failure.responseCode
  // 503 (bad sequence of commands) says the session was in the wrong state, not that the message was
  // refused: a new connection can send it (as nodemailer reads it).
  if (code !== undefined && code >= 400 && code < 600) {
    const text = replyText(failure.response)
    // Whatever the code, a refused STARTTLS is the server's setup, not a passing state.
    if (failure.command === "STARTTLS") {
      return new ProviderError.Unknown({
        message: `the SMTP server ${context.server} does not offer STARTTLS, which requireTLS asks for (${text}); the message was not sent`
      })
    }
    if (code < 500 || code === 503) return transient(code, enhancedCode(failure.response), text, context)
    return permanent(failure, code, context)
  }
  // Refused before a byte went out: nodemailer compares the message with the server's EHLO SIZE.
  if (failure.code === "EMESSAGE" && failure.command === "MAIL FROM") {
    return new ProviderError.MessageTooLarge({
      message: `the message is larger than the SMTP server ${context.server} accepts (its EHLO SIZE); it was not sent`
    })
  }
  switch (failure.code) {
    case "ECONNECTION":
    case "ETIMEDOUT":
    case "ESOCKET":
    case "EDNS":
    case "ETLS":
    case "EPROXY":
      return transportFailure(failure, context)
    case "EAUTH":
    case "ENOAUTH":
      return new ProviderError.Unknown({
        message: `the SMTP server ${context.server} cannot log in with auth (${failure.message}); the message was not sent`
      })
    // Refused by nodemailer before a command went out.
    case "EENVELOPE":
    case "EMAXRECIPIENTS":
      return new ProviderError.InvalidRequest({ message: `${failure.message}; the message was not sent` })
    default:
      return context.dataSent
        ? transportFailure(failure, context)
        : new ProviderError.Unknown({
            message: `the SMTP transport failed (${failure.code}); the message was not sent`
          })
  }
}

/**
 * How a send failed, as core's error. `error` is what nodemailer's `sendMail` rejected with; it is kept
 * as `cause` (nodemailer never puts the password in its errors).
 */
export const toProviderError = (error: unknown, context: SendContext): ProviderError.ProviderError => {
  const failure = asFailure(error)
  return new ProviderError.ProviderError({
    provider: "smtp",
    reason:
      failure === undefined
        ? new ProviderError.Unknown({ message: "the SMTP transport failed unexpectedly" })
        : reasonOf(failure, context),
    cause: error
  })
}
