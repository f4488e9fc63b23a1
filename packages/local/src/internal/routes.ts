// What serves the disk store's signed URLs over HTTP: a PUT streams the body into place within the
// limits the URL was signed for, a GET streams the object back; every refusal is JSON `{message}`.
import type { StoreRoutes } from "@mailroom/core"
import * as Adapter from "@mailroom/core/adapter"
import * as Duration from "effect/Duration"
import * as Errors from "./errors.js"
import * as Signing from "./signing.js"
import * as Storage from "./storage.js"
import * as Transfers from "./transfers.js"

export interface Settings {
  readonly secret: Adapter.KeyedSha256
  readonly pathPrefix: string
  readonly maxUploadBytes: number
  readonly tmpDir: string
  /** The file of a key, or undefined when the key names no object. */
  readonly fileOf: (key: string) => string | undefined
  /** Milliseconds since the epoch, from the Clock the store was built with. */
  readonly now: () => number
  /** How long a transfer's client may read (or send) nothing before it is cut off and its file closed. */
  readonly idleMillis: number
  /** The most files uploads and downloads hold open at once; past it they are answered 503. */
  readonly maxOpenFiles: number
  /** Where the causes of the store's failures go (the store's Effect logger). */
  readonly logError: (message: string) => void
}

export const json = (status: number, message: string, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify({ message }), {
    status,
    headers: { "content-type": "application/json; charset=utf-8", ...headers }
  })

const refuse = (message: string) => json(403, message)

const seconds = (duration: Duration.Duration) => String(Math.ceil(Duration.toSeconds(duration)))

export const make = ({
  secret,
  pathPrefix,
  maxUploadBytes,
  tmpDir,
  fileOf,
  now,
  idleMillis,
  maxOpenFiles,
  logError
}: Settings): StoreRoutes.StoreRoutes => {
  const files = Transfers.slots(maxOpenFiles)
  const busy = () =>
    json(503, `the store has ${maxOpenFiles} transfers under way, its limit; try again shortly`, {
      "retry-after": seconds(Errors.busyRetryAfter)
    })

  /** The key a request path names, or undefined when it names none. */
  const keyOfPath = (pathname: string) => {
    const at = pathname.indexOf(pathPrefix)
    if (at === -1) return undefined
    try {
      return pathname
        .slice(at + pathPrefix.length)
        .split("/")
        .map((segment) => decodeURIComponent(segment))
        .join("/")
    } catch {
      return undefined
    }
  }

  /** The grant a request's URL carries, checked against its signature and expiry. */
  const authorize = (method: "GET" | "PUT", key: string | undefined, query: URLSearchParams) => {
    const expires = query.get("expires") ?? ""
    const signature = query.get("signature") ?? ""
    const optional = (name: string) => query.get(name) ?? undefined
    const grant: Signing.Grant =
      method === "PUT"
        ? {
            method,
            key: key ?? "",
            expires,
            contentType: optional("content-type"),
            contentLength: optional("content-length")
          }
        : { method, key: key ?? "", expires, filename: optional("filename") }
    if (key === undefined || signature === "" || !Signing.verify(secret, grant, signature)) {
      return { refused: refuse("the signature does not match this URL") } as const
    }
    // Checked after the signature, so a forged expiry earns no better answer than a forged anything.
    if (!/^[0-9]{1,12}$/.test(expires) || Number(expires) * 1000 < now()) {
      return { refused: refuse("the URL has expired") } as const
    }
    const file = fileOf(key)
    if (file === undefined) return { refused: refuse("the URL names no valid key") } as const
    return { grant, file } as const
  }

  const download = async (grant: Signing.Grant, file: string): Promise<Response> => {
    const release = files.acquire()
    if (release === undefined) return busy()
    let object: Storage.OpenObject
    try {
      object = await Storage.openObject(file)
    } catch (error) {
      release()
      if (Errors.isMissing(error)) return json(404, "no object is stored under this key")
      throw error
    }
    // The file closes, and its slot is freed, when the stream ends, the client goes, or it stops reading.
    const body = Transfers.fileStream(object.handle, object.start, object.size, idleMillis, release)
    return new Response(body, {
      status: 200,
      headers: {
        "content-type": object.contentType,
        "content-length": String(object.size),
        "content-disposition": Adapter.contentDisposition(grant.filename ?? Adapter.filenameOf(grant.key)),
        // The bytes are whatever a client uploaded: never let a browser render them as a page of this origin.
        "x-content-type-options": "nosniff",
        "content-security-policy": "default-src 'none'; sandbox",
        "cache-control": "private, no-store"
      }
    })
  }

  const upload = async (request: Request, grant: Signing.Grant, file: string): Promise<Response> => {
    if (request.headers.get("content-type") !== grant.contentType) {
      return refuse("the Content-Type is not the one this URL was signed for")
    }
    const declared = grant.contentLength === undefined ? undefined : Number(grant.contentLength)
    const header = request.headers.get("content-length")
    if (declared !== undefined && header !== null && Number(header) !== declared) {
      return refuse("the Content-Length is not the one this URL was signed for")
    }
    const limit = Math.min(maxUploadBytes, declared ?? maxUploadBytes)
    const tooLarge = () =>
      declared !== undefined && declared <= maxUploadBytes
        ? refuse("the body is longer than the Content-Length this URL was signed for")
        : json(413, `the body is larger than ${maxUploadBytes} bytes`, { connection: "close" })
    if (header !== null && Number(header) > limit) return tooLarge()

    const release = files.acquire()
    if (release === undefined) return busy()
    let pending: Storage.PendingObject
    try {
      pending = await Storage.beginObject(tmpDir, grant.contentType ?? "application/octet-stream")
    } catch (error) {
      release()
      throw error
    }
    try {
      let size = 0
      const reader = request.body?.getReader()
      if (reader !== undefined) {
        for (;;) {
          let chunk: ReadableStreamReadResult<Uint8Array> | "idle"
          try {
            chunk = await Transfers.readWithin(reader, idleMillis)
          } catch {
            return json(400, "the upload was interrupted")
          }
          if (chunk === "idle") {
            return json(408, `the upload sent nothing for ${idleMillis} ms and was cut off`, { connection: "close" })
          }
          if (chunk.done) break
          size += chunk.value.byteLength
          // Counted as the bytes arrive: the rest of an oversized body is never read.
          if (size > limit) {
            reader.cancel().catch(() => undefined)
            return tooLarge()
          }
          await pending.write(chunk.value)
        }
      }
      if (declared !== undefined && size !== declared) {
        return refuse("the body is shorter than the Content-Length this URL was signed for")
      }
      await pending.commit(file)
      return new Response(null, { status: 200 })
    } finally {
      await pending.abort()
      release()
    }
  }

  /** A failure of the disk: logged with its cause; the client learns the code, never the store's paths. */
  const failed = (request: Request, error: unknown): Response => {
    const code = Errors.codeOf(error)
    const path = new URL(request.url).pathname
    logError(`[mailroom] storage: ${request.method} ${path} failed: ${String((error as Error)?.stack ?? error)}`)
    if (Errors.isOutOfHandles(error)) {
      return json(503, `the store is out of file handles (${code}); try again shortly`, {
        "retry-after": seconds(Errors.busyRetryAfter)
      })
    }
    if (Errors.isDiskFull(error)) {
      return json(503, `the store's disk is full (${code}): nothing was stored; try again later`, {
        "retry-after": seconds(Errors.diskFullRetryAfter)
      })
    }
    return json(500, code === undefined ? "the store failed" : `the store failed (${code})`)
  }

  const handle = async (request: Request): Promise<Response> => {
    try {
      const url = new URL(request.url)
      const method = request.method.toUpperCase()
      if (method !== "GET" && method !== "PUT") {
        return json(405, `use GET or PUT with a signed URL, not ${request.method}`, { allow: "GET, PUT" })
      }
      const authorized = authorize(method, keyOfPath(url.pathname), url.searchParams)
      if ("refused" in authorized) return authorized.refused
      return method === "GET"
        ? await download(authorized.grant, authorized.file)
        : await upload(request, authorized.grant, authorized.file)
    } catch (error) {
      return failed(request, error)
    }
  }

  return { pathPrefix, methods: ["GET", "PUT"], handle, idleTimeoutMillis: idleMillis }
}
