// The one place where what @aws-sdk/client-s3 and the SigV4 signer throw becomes core's ObjectStore
// vocabulary. The vendor's error stays as `cause`; messages never carry credentials.
import { ObjectStore } from "@mailroom/core"

interface VendorError {
  readonly name?: unknown
  readonly code?: unknown
  readonly message?: unknown
  readonly $metadata?: { readonly httpStatusCode?: unknown }
}

const accessDeniedNames = new Set([
  "AccessDenied",
  "AllAccessDisabled",
  "CredentialsProviderError",
  "ExpiredToken",
  "InvalidAccessKeyId",
  "InvalidToken",
  "SignatureDoesNotMatch",
  "TokenRefreshRequired"
])

// Node's socket errors and the SDK's own timeouts: the request never got an answer from the store.
const unreachableCodes = new Set([
  "EAI_AGAIN",
  "ECONNABORTED",
  "ECONNREFUSED",
  "ECONNRESET",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EPIPE",
  "ETIMEDOUT"
])
const unavailableNames = new Set(["RequestTimeout", "ServiceUnavailable", "SlowDown", "TimeoutError", "InternalError"])

const notFoundNames = new Set(["NotFound", "NoSuchKey"])

const describe = (error: unknown) => {
  const vendor = (typeof error === "object" && error !== null ? error : {}) as VendorError
  const status = vendor.$metadata?.httpStatusCode
  const name = typeof vendor.name === "string" ? vendor.name : undefined
  const code = typeof vendor.code === "string" ? vendor.code : undefined
  const message = typeof vendor.message === "string" ? vendor.message : typeof error === "string" ? error : undefined
  return { status: typeof status === "number" ? status : undefined, name, code, message }
}

type ReasonTag = ObjectStore.Reason["_tag"]

const reasonOf = (error: unknown): ReasonTag => {
  const { status, name, code } = describe(error)
  if ((name !== undefined && accessDeniedNames.has(name)) || status === 401 || status === 403) return "AccessDenied"
  if (
    (code !== undefined && unreachableCodes.has(code)) ||
    (name !== undefined && unavailableNames.has(name)) ||
    status === 429 ||
    (status !== undefined && status >= 500)
  ) {
    return "Unavailable"
  }
  return "Unknown"
}

const explain: Record<ReasonTag, string> = {
  AccessDenied: "access denied (check the credentials and the bucket policy)",
  Unavailable: "the store is unreachable or failing",
  Unknown: "the store refused the request"
}

/** Any failure of an operation that has no "missing" outcome (put, presigning). */
export const toObjectStoreError = (operation: string, key: string, error: unknown): ObjectStore.ObjectStoreError => {
  const { status, name, code, message } = describe(error)
  const reason = reasonOf(error)
  const details = [name ?? code, status === undefined ? undefined : `HTTP ${status}`, message]
    .filter((part) => part !== undefined && part !== "")
    .join(", ")
  const text = `S3 ${operation} of ${key}: ${explain[reason]}${details === "" ? "" : ` (${details})`}`
  return ObjectStore.failure("s3", reason, text, error)
}

/**
 * A failure of head, get or delete. S3 answers a missing key with 404 (`NotFound` on HEAD, which has
 * no body, `NoSuchKey` otherwise); a missing bucket is a configuration problem, not a missing object.
 */
export const toLookupError = (
  operation: string,
  key: string,
  error: unknown
): ObjectStore.ObjectNotFound | ObjectStore.ObjectStoreError => {
  const { status, name } = describe(error)
  if (name === "NoSuchBucket") return toObjectStoreError(operation, key, error)
  if ((name !== undefined && notFoundNames.has(name)) || status === 404)
    return new ObjectStore.ObjectNotFound({ key, cause: error })
  return toObjectStoreError(operation, key, error)
}
