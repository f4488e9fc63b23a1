// An independent check of SigV4 presigned URLs, written from AWS's "Authenticating requests: using
// query parameters" documentation with node:crypto only, for what no local peer judges correctly.
import { createHash, createHmac } from "node:crypto"

const rfc3986 = (value: string) =>
  encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)

const hmac = (key: string | Buffer, data: string) => createHmac("sha256", key).update(data, "utf8").digest()

export interface Verification {
  readonly url: string
  readonly method: "GET" | "PUT"
  /** Headers the request would carry besides `host`, which is taken from the URL. */
  readonly headers?: Readonly<Record<string, string>>
  readonly secretAccessKey: string
  readonly now?: number
}

/** Why the URL would be refused, or `undefined` when a SigV4-checking store would accept it. */
export const refusal = ({ url, method, headers = {}, secretAccessKey, now = Date.now() }: Verification) => {
  const parsed = new URL(url)
  const param = (name: string) => parsed.searchParams.get(name) ?? ""
  const [accessKeyId, date, region, service, terminator] = param("X-Amz-Credential").split("/")
  if (param("X-Amz-Algorithm") !== "AWS4-HMAC-SHA256" || accessKeyId === undefined || terminator !== "aws4_request")
    return "malformed credential"
  const amzDate = param("X-Amz-Date")
  const issued = Date.parse(
    `${amzDate.slice(0, 4)}-${amzDate.slice(4, 6)}-${amzDate.slice(6, 8)}T${amzDate.slice(9, 11)}:${amzDate.slice(11, 13)}:${amzDate.slice(13, 15)}Z`
  )
  if (now > issued + Number(param("X-Amz-Expires")) * 1000) return "expired"

  const query = [...parsed.searchParams]
    .filter(([name]) => name !== "X-Amz-Signature")
    .map(([name, value]) => [rfc3986(name), rfc3986(value)] as const)
    .sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0))
    .map(([name, value]) => `${name}=${value}`)
    .join("&")
  const sent: Record<string, string> = { host: parsed.host }
  for (const [name, value] of Object.entries(headers)) sent[name.toLowerCase()] = value.trim()
  const signedHeaders = param("X-Amz-SignedHeaders").split(";")
  const canonicalHeaders = signedHeaders.map((name) => `${name}:${sent[name] ?? ""}\n`).join("")
  // S3 signs the path as sent: keys are URI-encoded once, never twice.
  const canonicalRequest = [
    method,
    parsed.pathname,
    query,
    canonicalHeaders,
    signedHeaders.join(";"),
    parsed.searchParams.get("X-Amz-Content-Sha256") ?? "UNSIGNED-PAYLOAD"
  ].join("\n")
  const stringToSign = [
    "AWS4-HMAC-SHA256",
    amzDate,
    `${date}/${region}/${service}/${terminator}`,
    createHash("sha256").update(canonicalRequest, "utf8").digest("hex")
  ].join("\n")
  let key: string | Buffer = `AWS4${secretAccessKey}`
  for (const part of [date ?? "", region ?? "", service ?? "", terminator]) key = hmac(key, part)
  return hmac(key, stringToSign).toString("hex") === param("X-Amz-Signature") ? undefined : "signature does not match"
}
