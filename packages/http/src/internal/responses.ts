// How each outcome becomes a status and a body, in the shape the spec gives each operation
// (SPEC section 7, DESIGN section 3): {"errors"}, {"message"} or {"error"}.
import { EventSource, MailEvents, MailroomError, ProviderError } from "@mailroom/core"
import * as Duration from "effect/Duration"
import type * as Option from "effect/Option"

/**
 * Which error-body rules an operation follows. `emails` is every `/emails` route (400 `{errors}`);
 * `suppressions` is DESIGN section 7's `{error}` for all but a 401, which is `{message}` everywhere.
 */
export type Variant = "emails" | "suppressions" | "attachments" | "v1" | "other"

export interface Outgoing {
  readonly status: number
  readonly headers: Record<string, string>
  readonly body: string
  /** The request's body was left unread and may never end: close the connection after the answer. */
  readonly close?: true
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

/**
 * An error in the operation's own shape: one message per problem where the shape allows a list. A
 * 503 to a send (`mayHaveBeenSent` given, the send's route only) also says, as `may_have_been_sent`,
 * whether the provider may have the message; the other routes of the variant answer `{error}`.
 */
export const failure = (
  variant: Variant,
  status: number,
  all: ReadonlyArray<string>,
  headers: Record<string, string> = {},
  mayHaveBeenSent?: boolean
): Outgoing => {
  const messages = bounded(all)
  if (variant === "emails" && status === 400) return json(status, { errors: messages }, headers)
  const message = messages.join("; ")
  if (variant === "emails" && status === 503 && mayHaveBeenSent !== undefined) {
    return json(status, { error: message, may_have_been_sent: mayHaveBeenSent }, headers)
  }
  const messageShape =
    variant === "v1" ||
    variant === "other" ||
    ((variant === "emails" || variant === "suppressions") && status === 401) ||
    (variant === "attachments" && (status === 401 || status === 404 || status === 500))
  return json(status, messageShape ? { message } : { error: message }, headers)
}

/** The status, messages and headers of an error the spec names. */
export interface Described {
  readonly status: number
  readonly messages: ReadonlyArray<string>
  readonly headers?: Record<string, string>
  /** A provider that did not confirm a message it may have accepted (a 503 to a send says so). */
  readonly mayHaveBeenSent?: boolean
}

/** Whole seconds, at least 1, as `Retry-After` takes them. */
const retryAfterSeconds = (retryAfter: Duration.Duration) =>
  String(Math.max(1, Math.ceil(Duration.toMillis(retryAfter) / 1000)))

const withRetryAfter = (status: number, message: string, retryAfter: Duration.Duration | undefined): Described =>
  retryAfter === undefined
    ? { status, messages: [message] }
    : { status, messages: [message], headers: { "retry-after": retryAfterSeconds(retryAfter) } }

/** Each reason a provider gives, as the caller sees it. Typed by reason, so a new reason cannot be missed. */
const providerReasons: {
  readonly [T in ProviderError.Reason["_tag"]]: (
    reason: Extract<ProviderError.Reason, { _tag: T }>
  ) => Described | undefined
} = {
  SenderNotVerified: (r) => ({ status: 422, messages: [r.message] }),
  RecipientNotVerified: (r) => ({ status: 422, messages: [r.message] }),
  RecipientSuppressed: (r) => ({ status: 422, messages: [r.message] }),
  MessageTooLarge: (r) => ({ status: 422, messages: [r.message] }),
  InvalidRequest: (r) => ({ status: 422, messages: [r.message] }),
  SendingPaused: (r) => ({ status: 503, messages: [r.message] }),
  // Throttled, not accepted: 429, and one second when the provider did not say how long.
  RateLimited: (r) => withRetryAfter(429, r.message, r.retryAfter ?? Duration.seconds(1)),
  Unavailable: (r) => ({
    ...withRetryAfter(
      503,
      r.possiblySent
        ? "the email provider did not confirm the message; it may have been sent, so check before sending it again"
        : "the email provider is unavailable; nothing was sent",
      r.retryAfter
    ),
    mayHaveBeenSent: r.possiblySent
  }),
  // Unclassified: a 500 that says nothing internal.
  Unknown: () => undefined
}

const providerReason = (reason: ProviderError.Reason): Described | undefined =>
  (providerReasons[reason._tag] as (reason: ProviderError.Reason) => Described | undefined)(reason)

/** A webhook refused: 401 (not the provider), 400 (a body it never sends), 503 (so the provider sends it again). */
const eventSourceStatus: { readonly [T in EventSource.Reason["_tag"]]: number } = {
  Unauthenticated: 401,
  Malformed: 400,
  Unavailable: 503
}

type Rule = readonly [guard: (error: unknown) => boolean, describe: (error: never) => Described | undefined]

/** A guard and what the error it admits becomes; the guard's type is the answer's argument. */
const rule = <E>(guard: (error: unknown) => error is E, describe: (error: E) => Described | undefined): Rule => [
  guard,
  describe
]

/** Every error an operation may fail with, the first matching guard deciding. */
const rules: ReadonlyArray<Rule> = [
  rule(MailroomError.isValidationError, (e) => ({ status: 400, messages: e.errors })),
  rule(MailroomError.isUnauthorized, () => ({ status: 401, messages: ["missing, invalid or revoked credential"] })),
  rule(MailroomError.isForbidden, (e) => ({ status: 403, messages: [e.message] })),
  rule(MailroomError.isNotFound, (e) => ({ status: 404, messages: [e.message] })),
  rule(MailroomError.isConflict, (e) => ({ status: 409, messages: [e.message] })),
  rule(MailroomError.isUnavailable, (e) => withRetryAfter(503, e.message, e.retryAfter)),
  rule(ProviderError.isProviderError, (e) => providerReason(e.reason)),
  // A provider's webhook: refused (bad signature or credential, a body it never sends) or not
  // checkable now (a certificate out of reach), so the provider sends it again later.
  rule(EventSource.isEventSourceError, (e) => ({ status: eventSourceStatus[e.reason._tag], messages: [e.message] })),
  // The events could not be queued: 503, so the provider retries and nothing is lost.
  rule(MailEvents.isMailEventsError, () => ({
    status: 503,
    messages: ["the events could not be queued; send them again later"]
  }))
]

/** The status, messages and headers for an operation's typed failure; undefined for anything unexpected (a 500). */
export const describe = (error: unknown): Described | undefined => {
  for (const [guard, answer] of rules) {
    if (guard(error)) return (answer as (error: unknown) => Described | undefined)(error)
  }
  return undefined
}

/** A 500 tells the caller nothing internal; the cause goes to the log. */
export const internal = (variant: Variant) => failure(variant, 500, ["internal error"])

/** What a typed failure says for the log: its message (adapters keep secrets out of it), and which provider. */
export const causeOf = (error: Option.Option<unknown>): string => {
  if (error._tag === "None") return "unknown"
  const value = error.value
  if (ProviderError.isProviderError(value)) return `the ${value.provider} provider: ${value.message}`
  return value instanceof Error ? value.message : String(value)
}
