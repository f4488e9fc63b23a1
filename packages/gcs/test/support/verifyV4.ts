// Decides, as Cloud Storage would, whether a request made with a V4 signed URL carries a valid
// GOOG4-RSA-SHA256 signature. Written from Google's description of canonical requests, not from the SDK's signer.
import { createHash, type KeyObject, verify } from "node:crypto"

/** The request a client makes with a signed URL. */
export interface SignedRequest {
  readonly method: string
  readonly url: string
  /** Headers as the client sends them (any case). `host` defaults to the URL's host. */
  readonly headers?: Readonly<Record<string, string>>
  /** When the request is made, in milliseconds since the epoch. */
  readonly at: number
}

/** Who signed: the service account's email and the public half of its key. */
export interface Signer {
  readonly clientEmail: string
  readonly publicKey: KeyObject
}

export type Verdict =
  | { readonly ok: true; readonly canonicalRequest: string; readonly signedHeaders: ReadonlyArray<string> }
  | { readonly ok: false; readonly reason: string }

const SEVEN_DAYS = 7 * 24 * 60 * 60

/** RFC 3986 percent-encoding: everything but unreserved characters. */
const encode = (text: string) =>
  encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)

const fail = (reason: string): Verdict => ({ ok: false, reason })

export const verifyV4 = (request: SignedRequest, signer: Signer): Verdict => {
  const url = new URL(request.url)
  const query = [...url.searchParams]
  const param = (name: string) => {
    const values = query.filter(([key]) => key === name).map(([, value]) => value)
    return values.length === 1 ? values[0] : undefined
  }

  const algorithm = param("X-Goog-Algorithm")
  const credential = param("X-Goog-Credential")
  const timestamp = param("X-Goog-Date")
  const expires = param("X-Goog-Expires")
  const signedHeaderList = param("X-Goog-SignedHeaders")
  const signature = param("X-Goog-Signature")
  if (
    algorithm === undefined ||
    credential === undefined ||
    timestamp === undefined ||
    expires === undefined ||
    signedHeaderList === undefined ||
    signature === undefined
  )
    return fail("a required X-Goog-* query parameter is missing or repeated")
  if (algorithm !== "GOOG4-RSA-SHA256") return fail(`unexpected algorithm ${algorithm}`)

  const dateTime = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(timestamp)
  if (dateTime === null) return fail(`malformed X-Goog-Date ${timestamp}`)
  const date = timestamp.slice(0, 8)
  const scope = `${date}/auto/storage/goog4_request`
  if (credential !== `${signer.clientEmail}/${scope}`)
    return fail(`credential ${credential} is not ${signer.clientEmail}/${scope}`)

  if (!/^\d+$/.test(expires) || Number(expires) < 1 || Number(expires) > SEVEN_DAYS)
    return fail(`X-Goog-Expires ${expires} is out of range`)
  const [year, month, day, hour, minute, second] = dateTime.slice(1).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number
  ]
  const signedAt = Date.UTC(year, month - 1, day, hour, minute, second)
  if (request.at < signedAt) return fail("the URL is not valid yet")
  if (request.at > signedAt + Number(expires) * 1000) return fail("the URL has expired")

  const signedHeaders = signedHeaderList.split(";")
  if (
    signedHeaders.some((name) => name !== name.toLowerCase()) ||
    signedHeaders.join(";") !== [...signedHeaders].sort().join(";")
  )
    return fail("X-Goog-SignedHeaders is not lowercase and sorted")
  if (!signedHeaders.includes("host")) return fail("host is not a signed header")

  const sent = new Map<string, string>([["host", url.host]])
  for (const [name, value] of Object.entries(request.headers ?? {})) sent.set(name.toLowerCase(), value)
  let canonicalHeaders = ""
  for (const name of signedHeaders) {
    const value = sent.get(name)
    if (value === undefined) return fail(`the signed header ${name} was not sent`)
    canonicalHeaders += `${name}:${value.trim().replace(/\s+/g, " ")}\n`
  }

  const canonicalPath = url.pathname
    .split("/")
    .map((segment) => encode(decodeURIComponent(segment)))
    .join("/")
  const canonicalQuery = query
    .filter(([name]) => name !== "X-Goog-Signature")
    .map(([name, value]) => [encode(name), encode(value)] as const)
    .sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0))
    .map(([name, value]) => `${name}=${value}`)
    .join("&")

  const canonicalRequest = [
    request.method,
    canonicalPath,
    canonicalQuery,
    canonicalHeaders,
    signedHeaderList,
    "UNSIGNED-PAYLOAD"
  ].join("\n")
  const stringToSign = [
    "GOOG4-RSA-SHA256",
    timestamp,
    scope,
    createHash("sha256").update(canonicalRequest).digest("hex")
  ].join("\n")

  if (!/^(?:[0-9a-f]{2})+$/.test(signature)) return fail("X-Goog-Signature is not hexadecimal")
  const valid = verify("RSA-SHA256", Buffer.from(stringToSign), signer.publicKey, Buffer.from(signature, "hex"))
  return valid ? { ok: true, canonicalRequest, signedHeaders } : fail("the signature does not match the request")
}
