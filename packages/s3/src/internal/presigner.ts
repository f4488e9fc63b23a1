// Fast path: replaces getSignedUrl(client, command); held equal by clientSettings.test.ts ("the same URLs as getSignedUrl, signature included"); justified by `pnpm bench presignHttp` (POST /attachments/presign about 2x faster).
// Presigned S3 URLs straight from AWS's SigV4 signer, without a client command and its middleware
// stack: the endpoint is resolved once (internal/endpoint.ts), then one SignatureV4.presign per URL.
import { HttpRequest } from "@smithy/protocol-http"
import { SignatureV4 } from "@smithy/signature-v4"
import { Sha256 } from "./sha256.js"

/** Where a bucket's objects live and how URLs to them are signed: everything before the key. */
export interface Target {
  readonly protocol: string
  readonly hostname: string
  readonly port: number | undefined
  /** Endpoint path prefix, plus `/{bucket}` in path style; never ends with `/`. */
  readonly basePath: string
  readonly signingRegion: string
  readonly signingName: string
}

// RFC 3986: what SigV4 leaves unencoded is exactly A-Z a-z 0-9 - _ . ~
const escapeUri = (value: string): string =>
  encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)

/** What SignatureV4 accepts: fixed credentials or a provider of them. */
export type Credentials = ConstructorParameters<typeof SignatureV4>[0]["credentials"]

export interface PresignerOptions {
  readonly target: Target
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

export const makePresigner = ({ target, credentials }: PresignerOptions): Presigner => {
  // One signer for the store's lifetime. SignatureV4 keeps derived signing keys in a module-level
  // cache keyed by day, region, service and a hash of the credentials, so each URL costs one SHA-256
  // of the canonical request and two HMACs, not the four-HMAC key derivation; Sha256 keys those two
  // HMACs from cached KeyObjects.
  const signer = new SignatureV4({
    service: target.signingName,
    region: target.signingRegion,
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
      signingRegion: target.signingRegion,
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
