// What a failed lookup becomes in core's vocabulary, in one place: `Unavailable` (503), never
// `Unauthorized`, with the database's error kept as `cause` and described for the log.
import { MailroomError } from "@mailroom/core"

/** "PgConnection: Failed to connect: connect ECONNREFUSED 127.0.0.1:5432": each distinct message down the causes. */
export const describe = (cause: unknown): string => {
  const messages: Array<string> = []
  for (let at = cause, depth = 0; at instanceof Error && depth < 4; at = at.cause, depth++) {
    if (at.message !== "" && !messages.some((m) => m.includes(at.message))) messages.push(at.message)
  }
  return messages.length === 0 ? String(cause) : messages.join(": ")
}

/** A lookup of `what` (credentials, sender domains) that the database did not answer. */
export const toUnavailable = (what: string, cause: unknown): MailroomError.Unavailable =>
  new MailroomError.Unavailable({
    message: `${what} cannot be checked right now; nothing was done, so the request may be tried again`,
    cause
  })
