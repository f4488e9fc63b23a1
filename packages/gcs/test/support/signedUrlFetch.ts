// What Cloud Storage's XML endpoint does with a signed URL, for the emulator, which has none: it
// answers a signed PUT with 501 and serves a signed GET without checking the signature or honouring
// `response-content-disposition`. This `fetch` verifies the signature with verifyV4 first, as GCS
// would, then stores or reads the object through the emulator's JSON API.
import type { StorageEmulator } from "./emulator.js"
import { type Signer, verifyV4 } from "./verifyV4.js"

// GCS's XML API error document.
const xmlError = (status: number, code: string, message: string) =>
  new Response(
    `<?xml version='1.0' encoding='UTF-8'?><Error><Code>${code}</Code><Message>${message}</Message></Error>`,
    { status, headers: { "content-type": "application/xml; charset=UTF-8" } }
  )

export const makeSignedUrlFetch =
  (emulator: StorageEmulator, signer: Signer) =>
  async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init)
    const url = new URL(request.url)
    if (url.origin !== emulator.origin) throw new Error(`${url.origin} is not the emulator's origin`)
    if (!url.searchParams.has("X-Goog-Signature"))
      return xmlError(403, "AccessDenied", "Anonymous caller does not have storage.objects access.")

    const body = request.method === "PUT" ? new Uint8Array(await request.arrayBuffer()) : undefined
    const headers: Record<string, string> = Object.fromEntries(request.headers)
    // The SDK signs the host without its port (its signer.js: `extensionHeaders.host = fqdn.hostname`;
    // this package's README, "How it is tested"). GCS is reached on the default port, where the Host
    // header has none either; the emulator has a port, so the host name is compared.
    headers.host = url.hostname
    // fetch sends Content-Length for a body of known size; a Request object does not show it.
    if (body !== undefined) headers["content-length"] = String(body.byteLength)

    const verdict = verifyV4({ method: request.method, url: request.url, headers, at: Date.now() }, signer)
    if (!verdict.ok) {
      return /expired/.test(verdict.reason)
        ? xmlError(400, "ExpiredToken", "Invalid argument.")
        : xmlError(
            403,
            "SignatureDoesNotMatch",
            "The request signature we calculated does not match the signature you provided."
          )
    }

    const [, bucket = "", ...path] = url.pathname.split("/")
    const name = path.map(decodeURIComponent).join("/")
    if (body !== undefined) {
      const stored = await fetch(
        `${emulator.origin}/upload/storage/v1/b/${bucket}/o?uploadType=media&name=${encodeURIComponent(name)}`,
        { method: "POST", headers: { "content-type": headers["content-type"] ?? "application/octet-stream" }, body }
      )
      return new Response(null, { status: stored.ok ? 200 : stored.status })
    }
    if (request.method === "GET" || request.method === "HEAD") {
      const object = await fetch(
        `${emulator.origin}/download/storage/v1/b/${bucket}/o/${encodeURIComponent(name)}?alt=media`
      )
      if (object.status === 404) return xmlError(404, "NoSuchKey", "The specified key does not exist.")
      const served = new Headers({ "content-type": object.headers.get("content-type") ?? "application/octet-stream" })
      // GCS answers with the signed `response-content-disposition` instead of the stored one.
      const disposition = url.searchParams.get("response-content-disposition")
      if (disposition !== null) served.set("content-disposition", disposition)
      return new Response(request.method === "HEAD" ? null : await object.arrayBuffer(), {
        status: object.status,
        headers: served
      })
    }
    return xmlError(405, "MethodNotAllowed", `${request.method} is not allowed with a signed URL here.`)
  }
