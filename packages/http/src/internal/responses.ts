// How each outcome becomes a status and a body, in the shape the spec gives each operation
// (SPEC section 7, DESIGN section 3): {"errors"}, {"message"} or {"error"}.
import { Duration } from "effect"

/** Which error-body rules an operation follows. */
export type Variant = "emails" | "attachments" | "v1" | "other"

export interface Outgoing {
  readonly status: number
  readonly headers: Record<string, string>
  readonly body: string
}

const json = (status: number, value: unknown, headers: Record<string, string> = {}): Outgoing => ({
  status,
  headers: { "content-type": "application/json; charset=utf-8", ...headers },
  body: JSON.stringify(value)
})

export const ok = (status: number, value: unknown, headers: Record<string, string> = {}) => json(status, value, headers)

/** The most problems one answer lists: a body with 60,000 unknown fields gets 20 and a count. */
export const maxProblems = 20

const bounded = (messages: ReadonlyArray<string>) =>
  messages.length <= maxProblems
    ? messages
    : [...messages.slice(0, maxProblems), `request: and ${messages.length - maxProblems} more problems`]

/** An error in the operation's own shape: one message per problem where the shape allows a list. */
export const failure = (
  variant: Variant,
  status: number,
  all: ReadonlyArray<string>,
  headers: Record<string, string> = {}
): Outgoing => {
  const messages = bounded(all)
  if (variant === "emails" && status === 400) return json(status, { errors: messages }, headers)
  const message = messages.join("; ")
  const messageShape =
    variant === "v1" ||
    variant === "other" ||
    (variant === "emails" && status === 401) ||
    (variant === "attachments" && (status === 401 || status === 404 || status === 500))
  return json(status, messageShape ? { message } : { error: message }, headers)
}

interface Tagged {
  readonly _tag: string
}

/** The status, messages and headers for an operation's typed failure; undefined for anything unexpected. */
export const describe = (
  error: unknown
):
  | { readonly status: number; readonly messages: ReadonlyArray<string>; readonly headers?: Record<string, string> }
  | undefined => {
  if (typeof error !== "object" || error === null || !("_tag" in error)) return undefined
  const e = error as Tagged & Record<string, unknown>
  switch (e._tag) {
    case "ValidationError":
      return { status: 400, messages: e.errors as ReadonlyArray<string> }
    case "Unauthorized":
      return { status: 401, messages: ["missing, invalid or revoked credential"] }
    case "Forbidden":
      return { status: 403, messages: [String(e.message)] }
    case "NotFound":
      return { status: 404, messages: [String(e.message)] }
    case "Conflict":
      return { status: 409, messages: [String(e.message)] }
    case "Unavailable": {
      const retryAfter = e.retryAfter as Duration.Duration | undefined
      return retryAfter === undefined
        ? { status: 503, messages: [String(e.message)] }
        : { status: 503, messages: [String(e.message)], headers: { "retry-after": retryAfterSeconds(retryAfter) } }
    }
    case "ProviderError":
      return provider(e.reason as Tagged & Record<string, unknown>)
    // A provider's webhook: refused (bad signature or credential, a body it never sends) or not
    // checkable now (a certificate out of reach), so the provider sends it again later.
    case "EventSourceError":
      return {
        status: e.reason === "Unauthenticated" ? 401 : e.reason === "Malformed" ? 400 : 503,
        messages: [String(e.message)]
      }
    // The events could not be queued: 503, so the provider retries and nothing is lost.
    case "MailEventsError":
      return { status: 503, messages: ["the events could not be queued; send them again later"] }
    default:
      return undefined
  }
}

/** Whole seconds, at least 1, as `Retry-After` takes them. */
const retryAfterSeconds = (retryAfter: Duration.Duration) =>
  String(Math.max(1, Math.ceil(Duration.toMillis(retryAfter) / 1000)))

const provider = (reason: Tagged & Record<string, unknown>) => {
  const message = String(reason.message)
  switch (reason._tag) {
    case "SenderNotVerified":
    case "RecipientNotVerified":
    case "RecipientSuppressed":
    case "MessageTooLarge":
    case "InvalidRequest":
      return { status: 422, messages: [message] }
    case "SendingPaused":
      return { status: 503, messages: [message] }
    case "RateLimited": {
      const retryAfter = reason.retryAfter as Duration.Duration | undefined
      return {
        status: 429,
        messages: [message],
        headers: { "retry-after": retryAfter === undefined ? "1" : retryAfterSeconds(retryAfter) }
      }
    }
    case "Unavailable":
      return {
        status: 503,
        messages: [
          reason.possiblySent
            ? "the email provider did not confirm the message; it may have been sent, so check before sending it again"
            : "the email provider is unavailable; nothing was sent"
        ]
      }
    default:
      return undefined
  }
}

/** A 500 tells the caller nothing internal; the cause goes to the log. */
export const internal = (variant: Variant) => failure(variant, 500, ["internal error"])
