// The errors of mailroom's operations. Core knows nothing of HTTP: @mailroom/http maps each of these
// (and ProviderError's reasons) to a status and the body shape the spec names.
import { Data, type Duration } from "effect"

const TypeId = Symbol.for("@mailroom/core/MailroomError")

/** The request is invalid; one message per problem, each "<path>: <what is wrong>". */
export class ValidationError extends Data.TaggedError("ValidationError")<{
  readonly errors: ReadonlyArray<string>
}> {
  readonly [TypeId] = TypeId
  override get message(): string {
    return this.errors.join("; ")
  }
}

/** The credential is missing, unknown or revoked. Never carries the credential itself. */
export class Unauthorized extends Data.TaggedError("Unauthorized")<{
  readonly message: string
}> {
  readonly [TypeId] = TypeId
}

/** The caller is known but may not do this (an `org_id` that is not its own). */
export class Forbidden extends Data.TaggedError("Forbidden")<{
  readonly message: string
}> {
  readonly [TypeId] = TypeId
}

/** Nothing of the caller's is stored under this key or attachment id. */
export class NotFound extends Data.TaggedError("NotFound")<{
  readonly message: string
}> {
  readonly [TypeId] = TypeId
}

/** An Idempotency-Key reused with another request, or while its first request is still running. */
export class Conflict extends Data.TaggedError("Conflict")<{
  readonly message: string
}> {
  readonly [TypeId] = TypeId
}

/**
 * Something mailroom needs in order to answer cannot be reached: the organisations' database, say.
 * Nothing was done, and the request may be tried again later. Distinct from `Unauthorized` on
 * purpose: an outage must never look like a revoked credential. `cause` keeps the underlying failure
 * for logs; `message` is safe to show a caller.
 */
export class Unavailable extends Data.TaggedError("Unavailable")<{
  readonly message: string
  readonly cause?: unknown
  /** When trying again is worth it, if known (HTTP: `Retry-After`). */
  readonly retryAfter?: Duration.Duration
}> {
  readonly [TypeId] = TypeId
}

export type MailroomError = ValidationError | Unauthorized | Forbidden | NotFound | Conflict | Unavailable

/** True for any of the errors above, from any copy of this package. */
export const isMailroomError = (u: unknown): u is MailroomError => typeof u === "object" && u !== null && TypeId in u

const guard =
  <T extends MailroomError["_tag"]>(tag: T) =>
  (u: unknown): u is Extract<MailroomError, { readonly _tag: T }> =>
    isMailroomError(u) && u._tag === tag

export const isValidationError = guard("ValidationError")
export const isUnauthorized = guard("Unauthorized")
export const isForbidden = guard("Forbidden")
export const isNotFound = guard("NotFound")
export const isConflict = guard("Conflict")
export const isUnavailable = guard("Unavailable")
