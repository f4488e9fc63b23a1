// What a database failure becomes in core's vocabulary, in one place: `Unavailable` (a 503 with
// `Retry-After`), the driver's error kept as `cause`, a message that never holds a URL or password.
import { MailroomError } from "@mailroom/core"
import { describeCause } from "@mailroom/core/adapter"
import * as Duration from "effect/Duration"

// What `Retry-After` says: a database restarting or failing over is usually back within seconds.
const retryAfter = Duration.seconds(5)

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
  diskFull.test(describeCause(cause))
    ? new MailroomError.Unavailable({
        message: `${operation}: the database's disk is full; nothing was written, try again later`,
        cause,
        retryAfter: diskFullRetryAfter
      })
    : new MailroomError.Unavailable({ message: `${operation}: ${problem}`, cause, retryAfter })
