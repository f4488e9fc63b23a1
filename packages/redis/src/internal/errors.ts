// Redis failures and stored values translated into core's vocabulary, in one place.
import { type IdempotencyStore, MailroomError } from "@mailroom/core"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"

// What `Retry-After` says, as for the message database: a Redis restarting or failing over is usually
// back within seconds (the client reconnects with a backoff of at most about 2 s).
const retryAfter = Duration.seconds(5)

/**
 * What `operation` needed of Redis ("Idempotency-Keys") failed, as core's `Unavailable` (a 503 with
 * `Retry-After`): a caller sees only that nothing was sent (`problem` says so); the cause is kept for the log.
 */
export const toUnavailable = (
  operation: string,
  cause: unknown,
  problem = "cannot be checked right now; nothing was sent, try again later"
): MailroomError.Unavailable => new MailroomError.Unavailable({ message: `${operation} ${problem}`, cause, retryAfter })

const tags = new Set(["InFlight", "Completed", "Uncertain"])

/** A value that is not an entry was written by someone else: an error, never a free key. */
export const decodeEntry = (value: string): Effect.Effect<IdempotencyStore.Entry, MailroomError.Unavailable> =>
  Effect.suspend(() => {
    try {
      const entry = JSON.parse(value) as IdempotencyStore.Entry
      if (tags.has(entry?._tag) && typeof entry.fingerprint === "string") return Effect.succeed(entry)
    } catch {
      // reported below
    }
    const error = toUnavailable(
      "Idempotency-Keys",
      new Error(`a stored Idempotency-Key entry is not one mailroom wrote: ${value.slice(0, 80)}`)
    )
    return Effect.andThen(Effect.logError(`[mailroom] ${String(error.cause)}`), Effect.fail(error))
  })

/** The URL without its credentials, for messages. */
export const describeUrl = (url: string): string => {
  if (!URL.canParse(url)) return "(an invalid URL)"
  const { protocol, host, pathname } = new URL(url)
  return `${protocol}//${host}${pathname === "/" ? "" : pathname}`
}
