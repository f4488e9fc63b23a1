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
  /** The marker its instances carry, one per class: `isInstance` reads it. */
  static readonly marker: symbol = apiMarker
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

  /** True for an error of this class (or a subclass) from any copy of this package, where `instanceof` fails. */
  static isInstance<C extends abstract new (...args: never) => MailroomApiError>(
    this: C & { readonly marker: symbol },
    value: unknown
  ): value is InstanceType<C> {
    // biome-ignore lint/complexity/noThisInStatic: the class it is called on decides which marker.
    return hasMarker(value, this.marker)
  }
}
mark(MailroomApiError, apiMarker)

/** Marks the instances of `error` (on its prototype, where any copy of the package looks). */
function mark(error: abstract new (...args: never) => unknown, marker: symbol): void {
  Object.defineProperty(error.prototype, marker, { value: true })
}

// The path only: a query string may carry a storage key, which need not end up in logs.
const pathOf = (url: string) => {
  try {
    return new URL(url).pathname
  } catch {
    return url
  }
}

/**
 * The base of the class for one status: the status it answers, its `name`, its marker
 * (`@mailroom/client/{name}`) and whether trying again can help.
 */
const StatusError = (status: number, name: string, retryable = false) => {
  const marker = Symbol.for(`@mailroom/client/${name}`)
  class Status extends MailroomApiError {
    static readonly status: number = status
    static override readonly marker: symbol = marker
    override readonly name: string = name
    override get isRetryable(): boolean {
      return retryable
    }
  }
  mark(Status, marker)
  return Status
}

/** 400: the request is invalid; `errors` has one message per problem (`"to[1]: must be a valid email address"`). */
export class ValidationError extends StatusError(400, "ValidationError") {
  /** The server's messages, one per problem. */
  get errors(): ReadonlyArray<string> {
    return this.messages
  }
}

/** 401: the API key or access token is missing, invalid or revoked. A key that worked can stop working. */
export class AuthenticationError extends StatusError(401, "AuthenticationError") {}

/** 403: the credential is valid but may not do this, e.g. an `orgId` that is not the caller's own. */
export class ForbiddenError extends StatusError(403, "ForbiddenError") {}

/** 404: nothing is stored under the key or attachment id (or it is another organisation's). */
export class NotFoundError extends StatusError(404, "NotFoundError") {}

/**
 * 409: the Idempotency-Key was used with another request, the first request with it is still
 * running, or it failed in a way that may have sent the message.
 */
export class ConflictError extends StatusError(409, "ConflictError") {}

/** 413: the request body is over the server's limit (1 MiB of JSON by default). */
export class PayloadTooLargeError extends StatusError(413, "PayloadTooLargeError") {}

/**
 * 422: the email provider refused the message; usually the `from` domain is not verified, or, in a
 * provider sandbox, a recipient is not.
 */
export class UnprocessableError extends StatusError(422, "UnprocessableError") {}

/** 429: the provider is throttling; wait `retryAfter` seconds. Nothing was sent. */
export class RateLimitError extends StatusError(429, "RateLimitError", true) {}

/** 500: an unexpected failure on the server. Not retried: a send may have gone out before it. */
export class InternalServerError extends StatusError(500, "InternalServerError") {}

/**
 * 503: sending is paused, the provider or the server's organisations are unavailable, or the server
 * is starting. Retryable unless the server says the message may have been sent.
 */
export class ServiceUnavailableError extends StatusError(503, "ServiceUnavailableError") {
  /** True when the server says (`may_have_been_sent`) the provider may have accepted the message before failing. */
  get mayHaveBeenSent(): boolean {
    return (this.body as { may_have_been_sent?: unknown } | null)?.may_have_been_sent === true
  }
  override get isRetryable(): boolean {
    return !this.mayHaveBeenSent
  }
}

const byStatus = new Map<number, new (details: ApiErrorDetails) => MailroomApiError>(
  [
    ValidationError,
    AuthenticationError,
    ForbiddenError,
    NotFoundError,
    ConflictError,
    PayloadTooLargeError,
    UnprocessableError,
    RateLimitError,
    InternalServerError,
    ServiceUnavailableError
  ].map((error) => [error.status, error])
)

/** The error for an answer: its status's class, or a plain MailroomApiError (405, 415, a proxy's 502). */
export const fromDetails = (details: ApiErrorDetails): MailroomApiError =>
  new (byStatus.get(details.status) ?? MailroomApiError)(details)
