// The errors of mailroom's operations. Core knows nothing of HTTP: @mailroom/http maps each of these
// (and ProviderError's reasons) to a status and the body shape the spec names.
import * as Data from "effect/Data"
import type * as Duration from "effect/Duration"
import { guard, mark } from "./internal/reasonError.js"

/** The request is invalid; one message per problem, each "<path>: <what is wrong>". */
export class ValidationError extends Data.TaggedError("ValidationError")<{
  readonly errors: ReadonlyArray<string>
}> {
  override get message(): string {
    return this.errors.join("; ")
  }
}

/** The credential is missing, unknown or revoked. Never carries the credential itself. */
export class Unauthorized extends Data.TaggedError("Unauthorized")<{
  readonly message: string
}> {}

/** The caller is known but may not do this (an `org_id` that is not its own). */
export class Forbidden extends Data.TaggedError("Forbidden")<{
  readonly message: string
}> {}

/** Nothing of the caller's is stored under this key or attachment id. */
export class NotFound extends Data.TaggedError("NotFound")<{
  readonly message: string
}> {}

/** An Idempotency-Key reused with another request, or while its first request is still running. */
export class Conflict extends Data.TaggedError("Conflict")<{
  readonly message: string
}> {}

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
}> {}

/** Any error of an operation. */
export type MailroomError = ValidationError | Unauthorized | Forbidden | NotFound | Conflict | Unavailable

for (const error of [ValidationError, Unauthorized, Forbidden, NotFound, Conflict, Unavailable])
  mark(error, "MailroomError")

/** True for any of the errors above, from any copy of this package. */
export const isMailroomError = guard<MailroomError>("MailroomError")

const byTag =
  <T extends MailroomError["_tag"]>(tag: T) =>
  (u: unknown): u is Extract<MailroomError, { readonly _tag: T }> =>
    isMailroomError(u) && u._tag === tag

/** True for a `ValidationError` from any copy of this package. */
export const isValidationError = byTag("ValidationError")
/** True for an `Unauthorized` from any copy of this package. */
export const isUnauthorized = byTag("Unauthorized")
/** True for a `Forbidden` from any copy of this package. */
export const isForbidden = byTag("Forbidden")
/** True for a `NotFound` from any copy of this package. */
export const isNotFound = byTag("NotFound")
/** True for a `Conflict` from any copy of this package. */
export const isConflict = byTag("Conflict")
/** True for an `Unavailable` from any copy of this package. */
export const isUnavailable = byTag("Unavailable")
