// The errors a mailroom server answers with, one class per status, all sharing MailroomApiError.
// Detected with `isInstance` (a marker symbol), which holds across two copies of this package.

const hasMarker = (value: unknown, marker: symbol): boolean =>
  typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[marker] === true

const apiMarker = Symbol.for("@mailroom/client/MailroomApiError")

/** What the server said, from whichever of its three body shapes it used. */
export interface ApiErrorDetails {
  readonly status: number
  /** The server's messages: the `errors` list, or the one `error` or `message`. */
  readonly messages: ReadonlyArray<string>
  /** The `Retry-After` header in seconds, when the server sent one. */
  readonly retryAfter?: number | undefined
  /** The parsed JSON body, or the text when it was not JSON. */
  readonly body?: unknown
  readonly method: string
  readonly url: string
}

/** Any answer of a mailroom server that is not a success. */
export class MailroomApiError extends Error {
  readonly [apiMarker] = true
  readonly status: number
  readonly messages: ReadonlyArray<string>
  /** Seconds the server asked the caller to wait before trying again (`Retry-After`). */
  readonly retryAfter: number | undefined
  readonly body: unknown
  readonly method: string
  readonly url: string

  constructor(details: ApiErrorDetails) {
    const said = details.messages.length > 0 ? details.messages.join("; ") : "no message"
    super(`${details.method} ${pathOf(details.url)} answered ${details.status}: ${said}`)
    this.name = "MailroomApiError"
    this.status = details.status
    this.messages = details.messages
    this.retryAfter = details.retryAfter
    this.body = details.body
    this.method = details.method
    this.url = details.url
  }

  /**
   * Whether trying the same request again may succeed and cannot do harm: a rate limit, or a
   * service unavailable that did not accept the request. Sends are retried with the same
   * Idempotency-Key, so even a misjudged retry is answered by the server's record, not sent twice.
   */
  get isRetryable(): boolean {
    return false
  }

  static isInstance(value: unknown): value is MailroomApiError {
    return hasMarker(value, apiMarker)
  }
}

// The path only: a query string may carry a storage key, which need not end up in logs.
const pathOf = (url: string) => {
  try {
    return new URL(url).pathname
  } catch {
    return url
  }
}

const validationMarker = Symbol.for("@mailroom/client/ValidationError")
/** 400: the request is invalid; `errors` has one message per problem (`"to[1]: must be a valid email address"`). */
export class ValidationError extends MailroomApiError {
  readonly [validationMarker] = true
  override readonly name = "ValidationError"
  get errors(): ReadonlyArray<string> {
    return this.messages
  }
  static override isInstance(value: unknown): value is ValidationError {
    return hasMarker(value, validationMarker)
  }
}

const authenticationMarker = Symbol.for("@mailroom/client/AuthenticationError")
/** 401: the API key or access token is missing, invalid or revoked. A key that worked can stop working. */
export class AuthenticationError extends MailroomApiError {
  readonly [authenticationMarker] = true
  override readonly name = "AuthenticationError"
  static override isInstance(value: unknown): value is AuthenticationError {
    return hasMarker(value, authenticationMarker)
  }
}

const forbiddenMarker = Symbol.for("@mailroom/client/ForbiddenError")
/** 403: the credential is valid but may not do this, e.g. an `orgId` that is not the caller's own. */
export class ForbiddenError extends MailroomApiError {
  readonly [forbiddenMarker] = true
  override readonly name = "ForbiddenError"
  static override isInstance(value: unknown): value is ForbiddenError {
    return hasMarker(value, forbiddenMarker)
  }
}

const notFoundMarker = Symbol.for("@mailroom/client/NotFoundError")
/** 404: nothing is stored under the key or attachment id (or it is another organisation's). */
export class NotFoundError extends MailroomApiError {
  readonly [notFoundMarker] = true
  override readonly name = "NotFoundError"
  static override isInstance(value: unknown): value is NotFoundError {
    return hasMarker(value, notFoundMarker)
  }
}

const conflictMarker = Symbol.for("@mailroom/client/ConflictError")
/**
 * 409: the Idempotency-Key was used with another request, the first request with it is still
 * running, or it failed in a way that may have sent the message.
 */
export class ConflictError extends MailroomApiError {
  readonly [conflictMarker] = true
  override readonly name = "ConflictError"
  static override isInstance(value: unknown): value is ConflictError {
    return hasMarker(value, conflictMarker)
  }
}

const payloadTooLargeMarker = Symbol.for("@mailroom/client/PayloadTooLargeError")
/** 413: the request body is over the server's limit (1 MiB of JSON by default). */
export class PayloadTooLargeError extends MailroomApiError {
  readonly [payloadTooLargeMarker] = true
  override readonly name = "PayloadTooLargeError"
  static override isInstance(value: unknown): value is PayloadTooLargeError {
    return hasMarker(value, payloadTooLargeMarker)
  }
}

const unprocessableMarker = Symbol.for("@mailroom/client/UnprocessableError")
/**
 * 422: the email provider refused the message; usually the `from` domain is not verified, or, in a
 * provider sandbox, a recipient is not.
 */
export class UnprocessableError extends MailroomApiError {
  readonly [unprocessableMarker] = true
  override readonly name = "UnprocessableError"
  static override isInstance(value: unknown): value is UnprocessableError {
    return hasMarker(value, unprocessableMarker)
  }
}

const rateLimitMarker = Symbol.for("@mailroom/client/RateLimitError")
/** 429: the provider is throttling; wait `retryAfter` seconds. Nothing was sent. */
export class RateLimitError extends MailroomApiError {
  readonly [rateLimitMarker] = true
  override readonly name = "RateLimitError"
  override get isRetryable(): boolean {
    return true
  }
  static override isInstance(value: unknown): value is RateLimitError {
    return hasMarker(value, rateLimitMarker)
  }
}

const internalMarker = Symbol.for("@mailroom/client/InternalServerError")
/** 500: an unexpected failure on the server. Not retried: a send may have gone out before it. */
export class InternalServerError extends MailroomApiError {
  readonly [internalMarker] = true
  override readonly name = "InternalServerError"
  static override isInstance(value: unknown): value is InternalServerError {
    return hasMarker(value, internalMarker)
  }
}

// The server says this when its provider did not confirm a message it may have accepted; DESIGN
// section 3 forbids retrying that blindly. Servers before `may_have_been_sent` say it in words only.
const maybeSent = /may have been sent/i

const unavailableMarker = Symbol.for("@mailroom/client/ServiceUnavailableError")
/**
 * 503: sending is paused, the provider or the server's organisations are unavailable, or the server
 * is starting. Retryable unless the server says the message may have been sent.
 */
export class ServiceUnavailableError extends MailroomApiError {
  readonly [unavailableMarker] = true
  override readonly name = "ServiceUnavailableError"
  /** True when the server says the provider may have accepted the message before failing. */
  get mayHaveBeenSent(): boolean {
    const field = (this.body as { may_have_been_sent?: unknown } | null)?.may_have_been_sent
    return typeof field === "boolean" ? field : this.messages.some((m) => maybeSent.test(m))
  }
  override get isRetryable(): boolean {
    return !this.mayHaveBeenSent
  }
  static override isInstance(value: unknown): value is ServiceUnavailableError {
    return hasMarker(value, unavailableMarker)
  }
}
