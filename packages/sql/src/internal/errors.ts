// What a database failure becomes in core's vocabulary, in one place: `Unavailable` (a 503 with
// `Retry-After`), the driver's error kept as `cause`, a message that never holds a URL or password.
import { MailroomError } from "@mailroom/core"
import { Duration } from "effect"

// What `Retry-After` says: a database restarting or failing over is usually back within seconds.
const retryAfter = Duration.seconds(5)

/** "PgConnection: Failed to connect: connect ECONNREFUSED 127.0.0.1:5432": each distinct message down the causes, for the log. */
export const describe = (cause: unknown): string => {
  const messages: Array<string> = []
  for (let at = cause, depth = 0; at instanceof Error && depth < 4; at = at.cause, depth++) {
    if (at.message !== "" && !messages.some((m) => m.includes(at.message))) messages.push(at.message)
  }
  return messages.length === 0 ? String(cause) : messages.join(": ")
}

// A full disk (SQLite's SQLITE_FULL, PostgreSQL's 53100 disk_full, ENOSPC) is not an outage that
// heals in seconds: it is said as it is, with the Retry-After a full store answers.
const diskFull = /SQLITE_FULL|database or disk is full|\b53100\b|could not extend file|No space left on device|ENOSPC/i
const diskFullRetryAfter = Duration.seconds(60)

/** `operation` ("recording the message") failed for want of its database (by default: try again later). */
export const toUnavailable = (
  operation: string,
  cause: unknown,
  problem = "the database cannot be reached right now; try again later"
): MailroomError.Unavailable =>
  diskFull.test(describe(cause))
    ? new MailroomError.Unavailable({
        message: `${operation}: the database's disk is full; nothing was written, try again later`,
        cause,
        retryAfter: diskFullRetryAfter
      })
    : new MailroomError.Unavailable({ message: `${operation}: ${problem}`, cause, retryAfter })
