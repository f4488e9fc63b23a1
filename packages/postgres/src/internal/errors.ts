// What a failed lookup becomes in core's vocabulary, in one place: `Unavailable` (503 with `Retry-After`),
// never `Unauthorized`, the database's error kept as `cause` (`Adapter.describeCause` words it for the log).
import { MailroomError } from "@mailroom/core"
import * as Duration from "effect/Duration"

// What `Retry-After` says, as for the message database: a database restarting or failing over is
// usually back within seconds.
const retryAfter = Duration.seconds(5)

/** A lookup of `what` (credentials, sender domains) that the database did not answer. */
export const toUnavailable = (what: string, cause: unknown): MailroomError.Unavailable =>
  new MailroomError.Unavailable({
    message: `${what} cannot be checked right now; nothing was done, so the request may be tried again`,
    cause,
    retryAfter
  })
