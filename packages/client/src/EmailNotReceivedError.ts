// What `testing.awaitEmail` rejects with when no matching message reaches the server's outbox in time:
// detected with `isInstance` (a marker symbol), which holds across two copies of this package.

const marker = Symbol.for("@mailroom/client/EmailNotReceivedError")

/** No message matching `to` (and `subject`) arrived within `timeout` milliseconds. */
export class EmailNotReceivedError extends Error {
  readonly [marker] = true
  readonly to: string
  readonly subject: string | undefined
  readonly timeout: number

  constructor(details: { readonly to: string; readonly subject?: string | undefined; readonly timeout: number }) {
    const about = details.subject === undefined ? "" : ` with "${details.subject}" in its subject`
    super(`no email to ${details.to}${about} reached the outbox within ${details.timeout} ms`)
    this.name = "EmailNotReceivedError"
    this.to = details.to
    this.subject = details.subject
    this.timeout = details.timeout
  }

  static isInstance(value: unknown): value is EmailNotReceivedError {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[marker] === true
  }
}
