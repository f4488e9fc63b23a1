// The one place where what `node:fs` throws becomes core's vocabulary: ObjectStore errors for the
// disk store, ProviderError for the outbox. The original error stays as `cause`.
import { ObjectStore, ProviderError } from "@mailroom/core"
import * as Duration from "effect/Duration"
import { quote } from "./keys.js"

/** The `code` of a `node:fs` error (ENOENT, ENOSPC...). */
export const codeOf = (error: unknown): string | undefined => {
  const code = (error as { readonly code?: unknown } | null)?.code
  return typeof code === "string" ? code : undefined
}

// What a lookup of a missing key runs into: no such file, a file where a directory is expected,
// or a directory where the object's file is expected.
const missingCodes = new Set(["ENOENT", "ENOTDIR", "EISDIR"])
const deniedCodes = new Set(["EACCES", "EPERM", "EROFS"])
// A full disk, too many open files, a busy or failing device: worth trying again later.
const unavailableCodes = new Set(["ENOSPC", "EMFILE", "ENFILE", "EBUSY", "EAGAIN", "EIO", "EDQUOT"])

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error))

/** A file system failure while writing or reading. */
export const toObjectStoreError = (operation: string, key: string, error: unknown): ObjectStore.ObjectStoreError => {
  const code = codeOf(error)
  const message = `${operation} ${quote(key)} failed: ${describe(error)}`
  const reason =
    code !== undefined && deniedCodes.has(code)
      ? "AccessDenied"
      : code !== undefined && unavailableCodes.has(code)
        ? "Unavailable"
        : "Unknown"
  return ObjectStore.failure("disk", reason, message, error)
}

/** As `toObjectStoreError`, where a missing file means that nothing is stored under the key. */
export const toLookupError = (
  operation: string,
  key: string,
  error: unknown
): ObjectStore.ObjectNotFound | ObjectStore.ObjectStoreError => {
  const code = codeOf(error)
  return code !== undefined && missingCodes.has(code)
    ? new ObjectStore.ObjectNotFound({ key, cause: error })
    : toObjectStoreError(operation, key, error)
}

export const isMissing = (error: unknown): boolean => {
  const code = codeOf(error)
  return code !== undefined && missingCodes.has(code)
}

/** A request the store cannot serve, such as a key that would leave the store's directory. */
export const invalid = (operation: string, message: string): ObjectStore.ObjectStoreError =>
  ObjectStore.failure("disk", "Unknown", `${operation}: ${message}`)

/** A full disk is not cleared in a second: a minute keeps clients from hammering it, and is soon enough after. */
export const diskFullRetryAfter = Duration.minutes(1)
/** Out of file handles: others' transfers and sends end within moments. */
export const busyRetryAfter = Duration.seconds(1)

const fullCodes = new Set(["ENOSPC", "EDQUOT"])
const busyCodes = new Set(["EMFILE", "ENFILE"])

/** Whether the error is a full disk or quota (ENOSPC, EDQUOT). */
export const isDiskFull = (error: unknown): boolean => fullCodes.has(codeOf(error) ?? "")
/** Whether the error is the process or the system out of file handles (EMFILE, ENFILE). */
export const isOutOfHandles = (error: unknown): boolean => busyCodes.has(codeOf(error) ?? "")

/**
 * The outbox could not render or write the message: nothing was sent. A full disk or a shortage of
 * file handles is an outage (503 with Retry-After), anything else an internal error. It takes no
 * context: the outbox has no vendor answer to read, so the file system's error is the whole story.
 */
export const toProviderError = (error: unknown): ProviderError.ProviderError => {
  const code = codeOf(error)
  const reason = isDiskFull(error)
    ? new ProviderError.Unavailable({
        message: `the outbox's disk is full (${code}): the message was not written, nothing was sent`,
        possiblySent: false,
        retryAfter: diskFullRetryAfter
      })
    : isOutOfHandles(error)
      ? new ProviderError.Unavailable({
          message: `the outbox is out of file handles (${code}): the message was not written, nothing was sent`,
          possiblySent: false,
          retryAfter: busyRetryAfter
        })
      : new ProviderError.Unknown({ message: `the outbox could not write the message: ${describe(error)}` })
  return new ProviderError.ProviderError({ provider: "outbox", reason, cause: error })
}
