// Presigned S3 URLs straight from AWS's SigV4 signer, without a client command and its middleware
// stack: only the host/path rules of the S3 endpoint and one SignatureV4.presign per URL.
import { HttpRequest } from "@smithy/protocol-http"
import { SignatureV4 } from "@smithy/signature-v4"
import { Sha256 } from "./sha256.js"

/** Where a bucket's objects live: everything of a URL before the encoded key. */
export interface Target {
  readonly protocol: string
  readonly hostname: string
  readonly port: number | undefined
  /** Endpoint path prefix, plus `/{bucket}` in path style; never ends with `/`. */
  readonly basePath: string
}

export interface TargetOptions {
  readonly bucket: string
  readonly region: string
  readonly endpoint: string | undefined
  readonly forcePathStyle: boolean
}

// RFC 3986: what SigV4 leaves unencoded is exactly A-Z a-z 0-9 - _ . ~
export const escapeUri = (value: string): string =>
  encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)

// The S3 endpoint rules of the SDK, for the settings this adapter offers: a bucket goes into the host
// name when it is a plain DNS label and the host is not an IP address; otherwise, or when asked, into
// the path. (Dots in a bucket would break the TLS wildcard certificate, so they mean path style too.)
const virtualHostable = /^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/
const ipHost = /^(\d{1,3}\.){3}\d{1,3}$|^\[/

export const resolveTarget = ({ bucket, region, endpoint, forcePathStyle }: TargetOptions): Target => {
  const base =
    endpoint === undefined
      ? new URL(`https://s3.${region}.${region.startsWith("cn-") ? "amazonaws.com.cn" : "amazonaws.com"}`)
      : new URL(endpoint)
  const prefix = base.pathname.replace(/\/+$/, "")
  const port = base.port === "" ? undefined : Number(base.port)
  const pathStyle = forcePathStyle || !virtualHostable.test(bucket) || ipHost.test(base.hostname)
  return pathStyle
    ? { protocol: base.protocol, hostname: base.hostname, port, basePath: `${prefix}/${escapeUri(bucket)}` }
    : { protocol: base.protocol, hostname: `${bucket}.${base.hostname}`, port, basePath: prefix }
}

/** What SignatureV4 accepts: fixed credentials or a provider of them. */
export type Credentials = ConstructorParameters<typeof SignatureV4>[0]["credentials"]

export interface PresignerOptions {
  readonly target: Target
  readonly region: string
  /**
   * Fixed credentials, or a provider that caches what it resolves (the S3 client's own provider
   * memoises the default chain and refreshes before expiry); called once per URL.
   */
  readonly credentials: Credentials
}

export interface Presigner {
  readonly put: (
    key: string,
    contentType: string,
    contentLength: number | undefined,
    expiresIn: number,
    now: number
  ) => Promise<string>
  readonly get: (key: string, contentDisposition: string | undefined, expiresIn: number, now: number) => Promise<string>
}

// SigV4 signs only the headers named here (host is always signed); content-length is present only
// when the caller declared a length. Neither starts with `x-amz-`, so the signer never hoists them
// into the query: the uploader must send them as real headers with these exact values.
const signableHeaders = new Set(["content-type", "content-length"])

export const makePresigner = ({ target, region, credentials }: PresignerOptions): Presigner => {
  // One signer for the store's lifetime. SignatureV4 keeps derived signing keys in a module-level
  // cache keyed by day, region, service and a hash of the credentials, so each URL costs one SHA-256
  // of the canonical request and two HMACs, not the four-HMAC key derivation; Sha256 keys those two
  // HMACs from cached KeyObjects.
  const signer = new SignatureV4({
    service: "s3",
    region,
    credentials,
    sha256: Sha256,
    // S3 signs the path exactly as sent (keys are encoded once, below), unlike other AWS services.
    uriEscapePath: false,
    applyChecksum: false
  })
  const host = target.port === undefined ? target.hostname : `${target.hostname}:${target.port}`
  const origin = `${target.protocol}//${host}`
  const pathOf = (key: string) => `${target.basePath}/${key.split("/").map(escapeUri).join("/")}`

  const presign = async (request: HttpRequest, expiresIn: number, now: number) => {
    const signed = await signer.presign(request, {
      expiresIn,
      signingDate: new Date(now),
      signingRegion: region,
      signableHeaders
    })
    let query = ""
    for (const [name, value] of Object.entries(signed.query ?? {})) {
      if (typeof value === "string") query += `${query === "" ? "?" : "&"}${escapeUri(name)}=${escapeUri(value)}`
    }
    return `${origin}${signed.path}${query}`
  }

  return {
    put: (key, contentType, contentLength, expiresIn, now) => {
      const headers: Record<string, string> = {
        host,
        "content-type": contentType,
        // Hoisted into the query by the signer, as the SDK's presigner does: the body is not hashed,
        // and no checksum of an empty body is bound (R2 and MinIO refuse a PUT that carries one).
        "X-Amz-Content-Sha256": "UNSIGNED-PAYLOAD"
      }
      if (contentLength !== undefined) headers["content-length"] = String(contentLength)
      const request = new HttpRequest({
        method: "PUT",
        protocol: target.protocol,
        hostname: target.hostname,
        ...(target.port === undefined ? {} : { port: target.port }),
        path: pathOf(key),
        headers,
        query: {}
      })
      return presign(request, expiresIn, now)
    },
    get: (key, contentDisposition, expiresIn, now) => {
      const request = new HttpRequest({
        method: "GET",
        protocol: target.protocol,
        hostname: target.hostname,
        ...(target.port === undefined ? {} : { port: target.port }),
        path: pathOf(key),
        headers: { host, "X-Amz-Content-Sha256": "UNSIGNED-PAYLOAD" },
        query: contentDisposition === undefined ? {} : { "response-content-disposition": contentDisposition }
      })
      return presign(request, expiresIn, now)
    }
  }
}
