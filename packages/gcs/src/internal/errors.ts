// The one place where what @google-cloud/storage throws becomes core's vocabulary: a missing
// object is `ObjectNotFound`, anything else an `ObjectStoreError` whose `cause` is the SDK's error.
import { ObjectStore } from "@mailroom/core"

// Errors raised before or instead of an HTTP answer (Node's net errors, undici's, gaxios' FetchError).
const networkCodes = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "ETIMEDOUT",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EPIPE",
  "UND_ERR_SOCKET",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT"
])

const fieldOf = (u: unknown, name: string): unknown =>
  typeof u === "object" && u !== null ? (u as Record<string, unknown>)[name] : undefined

/** The HTTP status GCS answered with: `ApiError.code` is a number; gaxios keeps it on `status` or `response.status`. */
const statusOf = (error: unknown): number | undefined => {
  for (const candidate of [
    fieldOf(error, "code"),
    fieldOf(error, "status"),
    fieldOf(fieldOf(error, "response"), "status")
  ])
    if (typeof candidate === "number") return candidate
  return undefined
}

const isNetworkError = (error: unknown): boolean => {
  // The code may sit on a wrapped cause (undici's "fetch failed" TypeError), so walk the chain a little.
  let current = error
  for (let depth = 0; depth < 4 && current !== undefined; depth++) {
    const code = fieldOf(current, "code")
    if (typeof code === "string" && networkCodes.has(code)) return true
    current = fieldOf(current, "cause")
  }
  return false
}

/** A download's error message is the raw JSON body; prefer the `error.message` inside it. */
const messageOf = (error: unknown): string => {
  const message = error instanceof Error ? error.message : String(error)
  if (!message.startsWith("{")) return message
  try {
    const inner = fieldOf(fieldOf(JSON.parse(message), "error"), "message")
    return typeof inner === "string" ? inner : message
  } catch {
    return message
  }
}

/** Any failure of an operation that has no object to be missing (put, presign). */
export const toObjectStoreError = (operation: string, key: string, error: unknown): ObjectStore.ObjectStoreError => {
  const status = statusOf(error)
  const message = `GCS ${operation} ${key}: ${messageOf(error)}`
  // The signer throws SigningError when the credentials cannot sign (no private key, no signBlob permission).
  if (status === 401 || status === 403 || fieldOf(error, "name") === "SigningError")
    return ObjectStore.failure("gcs", "AccessDenied", message, error)
  if (status === 408 || status === 429 || (status !== undefined && status >= 500) || isNetworkError(error))
    return ObjectStore.failure("gcs", "Unavailable", message, error)
  return ObjectStore.failure("gcs", "Unknown", message, error)
}

/** A failure of head, get or delete on `key`: GCS answers 404 when nothing is stored under it. */
export const toLookupError = (
  operation: string,
  key: string,
  error: unknown
): ObjectStore.ObjectNotFound | ObjectStore.ObjectStoreError =>
  statusOf(error) === 404
    ? new ObjectStore.ObjectNotFound({ key, cause: error })
    : toObjectStoreError(operation, key, error)
