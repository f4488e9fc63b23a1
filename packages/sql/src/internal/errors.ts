// What a database failure becomes in core's vocabulary, in one place: `Unavailable` (a 503 with
// `Retry-After`), the driver's error kept as `cause`, a message that never holds a URL or password.
import { MailroomError } from "@mailroom/core"

/** `operation` ("recording the message") failed for want of its database (by default: try again later). */
export const toUnavailable = (
  operation: string,
  cause: unknown,
  problem = "the database cannot be reached right now; try again later"
): MailroomError.Unavailable => new MailroomError.Unavailable({ message: `${operation}: ${problem}`, cause })
