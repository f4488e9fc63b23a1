// The storage interface mailroom keeps attachments in: presigned URLs for direct uploads and
// downloads, plus head/get/read/delete. Adapters (S3, GCS, local disk) implement it; this module also holds the memory store.
import { createHmac, createSecretKey } from "node:crypto"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { contentDisposition } from "./internal/headers.js"
import {
  type ObjectInfo,
  ObjectNotFound,
  type ObjectStoreError,
  type ObjectTooLarge
} from "./internal/objectStoreError.js"
import { admit } from "./internal/read.js"
import { constantTimeEqual } from "./internal/secret.js"

export {
  AccessDenied,
  failure,
  isObjectStoreError,
  type ObjectInfo,
  ObjectNotFound,
  ObjectStoreError,
  ObjectTooLarge,
  type Reason,
  Unavailable,
  Unknown
} from "./internal/objectStoreError.js"

/** An upload URL's key, content type, lifetime and, optionally, exact length. */
export interface PresignPutOptions {
  readonly key: string
  /** The upload must carry exactly this `Content-Type`; the store refuses any other. */
  readonly contentType: string
  /** Lifetime of the URL in seconds. */
  readonly expiresIn: number
  /** When given, the upload must be exactly this many bytes. */
  readonly contentLength?: number
}

/** A download URL's key, lifetime and, optionally, the file name it saves as. */
export interface PresignGetOptions {
  readonly key: string
  /** Lifetime of the URL in seconds. */
  readonly expiresIn: number
  /** When given, the download is offered under this file name (`Content-Disposition: attachment`). */
  readonly filename?: string
}

/** An object with the facts about it that arrive before its bytes (a GET's headers). */
export interface StoredObject {
  readonly info: ObjectInfo
  readonly content: Uint8Array
}

/** A read's limit, and what to check once the size is known, before the bytes. */
export interface ReadOptions<E = never> {
  /** A larger object fails with `ObjectTooLarge` as soon as its size is known, its bytes unread. */
  readonly maxBytes?: number
  /**
   * Runs once size and type are known (after the `maxBytes` check) and before the bytes are read,
   * e.g. to reserve memory for them; when it fails, the read fails with its error, the bytes unread.
   */
  readonly beforeContent?: (info: ObjectInfo) => Effect.Effect<void, E>
}

/** Where attachments are kept: presigned URLs to upload and download, and the object operations. */
export interface ObjectStore {
  readonly presignPut: (options: PresignPutOptions) => Effect.Effect<string, ObjectStoreError>
  readonly presignGet: (options: PresignGetOptions) => Effect.Effect<string, ObjectStoreError>
  readonly head: (key: string) => Effect.Effect<ObjectInfo, ObjectNotFound | ObjectStoreError>
  readonly get: (key: string) => Effect.Effect<Uint8Array, ObjectNotFound | ObjectStoreError>
  /**
   * One round trip for what `head` and `get` answer together: the size and type come from the
   * response's headers, so `options` can refuse the object before its bytes are read.
   */
  readonly read: <E = never>(
    key: string,
    options?: ReadOptions<E>
  ) => Effect.Effect<StoredObject, ObjectNotFound | ObjectTooLarge | ObjectStoreError | E>
  readonly put: (key: string, content: Uint8Array, contentType: string) => Effect.Effect<void, ObjectStoreError>
  readonly delete: (key: string) => Effect.Effect<void, ObjectNotFound | ObjectStoreError>
}

export const ObjectStore: Context.Service<ObjectStore, ObjectStore> = Context.Service("@mailroom/core/ObjectStore")

// --- memory -------------------------------------------------------------------------------------

/** A memory store, and the `fetch` that serves its presigned URLs as a real store would. */
export interface MemoryObjectStore extends ObjectStore {
  readonly fetch: (input: string | URL | Request, init?: RequestInit) => Promise<Response>
  /** Every key stored, sorted: what a bucket listing would show. */
  readonly keys: () => ReadonlyArray<string>
}

const memoryOrigin = "http://memory.mailroom.invalid"

const refuse = (status: number, message: string) =>
  new Response(JSON.stringify({ message }), { status, headers: { "content-type": "application/json" } })

/** The memory store's clock. */
export interface MemoryOptions {
  /** What URLs expire by, both when signed and when used. Default: the system clock. `layerMemory` uses the effect's `Clock`. */
  readonly clock?: Clock.Clock
}

/**
 * An ObjectStore in memory that behaves like a private bucket: it keeps real bytes, and its URLs
 * are HMAC-signed over method, key, content type, length and expiry, so an upload with another
 * `Content-Type`, another length, a tampered signature or an expired URL is refused.
 */
export const makeMemory = (options: MemoryOptions = {}): MemoryObjectStore => {
  const clock = options.clock
  const now = clock === undefined ? () => Date.now() : () => clock.currentTimeMillisUnsafe()
  const objects = new Map<string, { readonly content: Uint8Array; readonly contentType: string }>()
  // A KeyObject made once: given raw bytes, createHmac makes one per call, several times the HMAC's cost.
  const secret = createSecretKey(crypto.getRandomValues(new Uint8Array(32)))
  const sign = (fields: ReadonlyArray<string>) => createHmac("sha256", secret).update(fields.join("\n")).digest("hex")
  const presign = (method: "PUT" | "GET", key: string, expiresIn: number, bound: Record<string, string>) => {
    const expires = String(Math.floor(now() / 1000) + expiresIn)
    const url = new URL(`${memoryOrigin}/${encodeURIComponent(key)}`)
    for (const [name, value] of Object.entries(bound)) url.searchParams.set(name, value)
    url.searchParams.set("expires", expires)
    url.searchParams.set("signature", sign([method, key, expires, ...Object.entries(bound).flat()]))
    return url.toString()
  }

  const fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init)
    const url = new URL(request.url)
    if (url.origin !== memoryOrigin) return refuse(404, "not a memory store URL")
    const key = decodeURIComponent(url.pathname.slice(1))
    const params = new URLSearchParams(url.search)
    const signature = params.get("signature") ?? ""
    const expires = params.get("expires") ?? ""
    params.delete("signature")
    params.delete("expires")
    const bound = Object.fromEntries(params)
    const expected = Buffer.from(sign([request.method, key, expires, ...Object.entries(bound).flat()]))
    const given = Buffer.from(signature)
    if (!constantTimeEqual(given, expected)) return refuse(403, "signature does not match")
    if (Number(expires) * 1000 < now()) return refuse(403, "URL has expired")
    if (request.method === "GET") {
      const object = objects.get(key)
      if (object === undefined) return refuse(404, "no such key")
      const headers = new Headers({ "content-type": object.contentType })
      if (bound["response-content-disposition"])
        headers.set("content-disposition", bound["response-content-disposition"])
      return new Response(object.content.slice(), { status: 200, headers })
    }
    // PUT: the signature covers the content type and length it was issued for.
    if (request.headers.get("content-type") !== bound["content-type"])
      return refuse(403, "Content-Type is not the one signed")
    const content = new Uint8Array(await request.arrayBuffer())
    if (bound["content-length"] !== undefined && String(content.byteLength) !== bound["content-length"]) {
      return refuse(403, "Content-Length is not the one signed")
    }
    objects.set(key, { content, contentType: bound["content-type"] ?? "application/octet-stream" })
    return new Response(null, { status: 200 })
  }

  const find = (key: string) =>
    Effect.suspend(() => {
      const object = objects.get(key)
      return object === undefined ? Effect.fail(new ObjectNotFound({ key })) : Effect.succeed(object)
    })

  return {
    fetch,
    presignPut: ({ key, contentType, expiresIn, contentLength }) =>
      Effect.sync(() =>
        presign("PUT", key, expiresIn, {
          "content-type": contentType,
          ...(contentLength === undefined ? {} : { "content-length": String(contentLength) })
        })
      ),
    presignGet: ({ key, expiresIn, filename }) =>
      Effect.sync(() =>
        presign(
          "GET",
          key,
          expiresIn,
          filename === undefined ? {} : { "response-content-disposition": contentDisposition(filename) }
        )
      ),
    head: (key) => Effect.map(find(key), (o) => ({ size: o.content.byteLength, contentType: o.contentType })),
    get: (key) => Effect.map(find(key), (o) => o.content.slice()),
    read: (key, options) =>
      Effect.flatMap(find(key), (o) => {
        const info = { size: o.content.byteLength, contentType: o.contentType }
        return Effect.andThen(
          admit(key, info, options),
          Effect.sync(() => ({ info, content: o.content.slice() }))
        )
      }),
    put: (key, content, contentType) =>
      Effect.sync(() => void objects.set(key, { content: content.slice(), contentType })),
    delete: (key) => Effect.flatMap(find(key), () => Effect.sync(() => void objects.delete(key))),
    keys: () => [...objects.keys()].sort()
  }
}

/** The memory store, its URLs signed and checked by the `Clock` the layer is built with (a `TestClock` in tests). */
export const layerMemory = (): Layer.Layer<ObjectStore> =>
  Layer.effect(
    ObjectStore,
    Clock.clockWith((clock) => Effect.succeed(makeMemory({ clock })))
  )
