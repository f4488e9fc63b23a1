// An inbound webhook a provider calls with its delivery records: it checks that the caller is the
// provider, and translates each record into MailEvents. @mailroom/http serves each at POST /webhooks/{name}.
import { Data, type Effect, Redacted } from "effect"
import { digestOf, isHashed, matches } from "./internal/secret.js"
import type * as MailEvent from "./MailEvent.js"

/** What a transport hands a source: the request's headers and its raw body. */
export interface InboundRequest {
  /** A header by lower-case name. */
  readonly header: (name: string) => string | undefined
  readonly body: Uint8Array
}

const TypeId = Symbol.for("@mailroom/core/EventSourceError")

/**
 * Why a request was refused. `Unauthenticated` (401): a bad signature or credential. `Malformed` (400):
 * a body that is not what the provider sends. `Unavailable` (503): something needed to check it (the
 * signing certificate) could not be fetched, so the provider should try again.
 */
export class EventSourceError extends Data.TaggedError("EventSourceError")<{
  readonly reason: "Unauthenticated" | "Malformed" | "Unavailable"
  readonly message: string
  readonly cause?: unknown
}> {
  readonly [TypeId] = TypeId
}

/** True for an EventSourceError from any copy of this package. */
export const isEventSourceError = (u: unknown): u is EventSourceError =>
  typeof u === "object" && u !== null && TypeId in u

export interface EventSource {
  /** The path segment it is served under: `ses` -> `POST /webhooks/ses`. Letters, digits and `-`. */
  readonly name: string
  /** The events in a verified request (none for a subscription confirmation), or why it was refused. */
  readonly receive: (request: InboundRequest) => Effect.Effect<ReadonlyArray<MailEvent.Unrouted>, EventSourceError>
}

/** A shared secret as configured: the value, a `Redacted` value, or `sha256:<hex>` of the value. */
export type Secret = string | Redacted.Redacted<string>

/**
 * A check of presented values against a configured secret, in constant time, keeping only the
 * secret's SHA-256 digest. Throws on an empty secret, which would let an empty header in.
 */
export const secretMatcher = (secret: Secret, what: string): ((presented: string | undefined) => boolean) => {
  const value = typeof secret === "string" ? secret : Redacted.value(secret)
  if (value.trim() === "") throw new Error(`${what} must not be empty`)
  const digest = digestOf(value)
  return (presented) => presented !== undefined && presented !== "" && matches(digest, presented)
}

/** True for a secret given as `sha256:<hex>` (which can be checked, but not sent or signed with). */
export const isHashedSecret = (secret: Secret): boolean =>
  isHashed(typeof secret === "string" ? secret : Redacted.value(secret))
