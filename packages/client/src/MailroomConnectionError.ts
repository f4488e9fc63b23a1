// A request that got no answer from the server: refused, cut off, or timed out. Whether it may be
// retried depends on whether the request can have reached the server at all.

const connectionMarker = Symbol.for("@mailroom/client/MailroomConnectionError")

/**
 * - `CouldNotConnect`: the name does not resolve, the connection was refused or unreachable, TLS failed, or
 *   the connection closed before a byte of the request was written; the request was certainly not sent.
 * - `Timeout`: no complete answer within the client's `timeout`; the server may have acted on it.
 * - `Network`: the connection failed or was cut after it was opened; the server may have acted on it.
 */
export type ConnectionFailure = "CouldNotConnect" | "Timeout" | "Network"

export class MailroomConnectionError extends Error {
  readonly [connectionMarker] = true
  override readonly name = "MailroomConnectionError"
  readonly reason: ConnectionFailure
  readonly method: string
  readonly url: string

  constructor(options: {
    readonly reason: ConnectionFailure
    readonly method: string
    readonly url: string
    readonly cause: unknown
  }) {
    super(`${options.method} ${pathOf(options.url)}: ${describe[options.reason]}`, { cause: options.cause })
    this.reason = options.reason
    this.method = options.method
    this.url = options.url
  }

  /** True only when the request certainly never reached the server, so a retry cannot send twice. */
  get isRetryable(): boolean {
    return this.reason === "CouldNotConnect"
  }

  static isInstance(value: unknown): value is MailroomConnectionError {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[connectionMarker] === true
  }
}

const describe: Record<ConnectionFailure, string> = {
  CouldNotConnect: "could not connect; the request was not sent",
  Timeout: "no answer in time; the server may have acted on the request",
  Network: "the connection failed; the server may have acted on the request"
}

const pathOf = (url: string) => {
  try {
    return new URL(url).pathname
  } catch {
    return url
  }
}
