// The signatures of the disk store's URLs: HMAC-SHA256 over everything the URL grants, compared in
// constant time.
import { constantTimeEqual, type KeyedSha256, keyedSha256, keyedSha256MessageStart } from "@mailroom/core/adapter"

/** What a URL grants; absent fields are signed as absent, so a bound field cannot be dropped. */
export interface Grant {
  readonly method: "GET" | "PUT"
  readonly key: string
  /** Unix seconds. */
  readonly expires: string
  readonly contentType?: string | undefined
  readonly contentLength?: string | undefined
  readonly filename?: string | undefined
}

// JSON keeps the fields apart whatever characters they hold; the version names this scheme.
const payloadOf = (grant: Grant) =>
  JSON.stringify([
    "mailroom-disk-v1",
    grant.method,
    grant.key,
    grant.contentType ?? null,
    grant.contentLength ?? null,
    grant.filename ?? null,
    grant.expires
  ])

/**
 * The signing secret's HMAC, its pads computed once: an Hmac object made per URL cost more than its
 * hashing (a presign on this store spent a sixth of its time setting them up).
 */
export const keyOf = (secret: string): KeyedSha256 => keyedSha256(Buffer.from(secret, "utf8"))

export const sign = (secret: KeyedSha256, grant: Grant): string => {
  const payload = payloadOf(grant)
  const message = secret.message(Buffer.byteLength(payload, "utf8"))
  message.write(payload, keyedSha256MessageStart, "utf8")
  return secret.digest(message)
}

export const verify = (secret: KeyedSha256, grant: Grant, signature: string): boolean => {
  return constantTimeEqual(Buffer.from(signature, "utf8"), Buffer.from(sign(secret, grant), "utf8"))
}
