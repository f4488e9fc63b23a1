// The embedded ObjectStore: objects as files under one directory, with HMAC-signed URLs that the
// store serves itself through `routes` (mounted by @mailroom/http under `{basePath}{pathPrefix}`).
import { unlink } from "node:fs/promises"
import * as path from "node:path"
import { Readable } from "node:stream"
import { ObjectStore } from "@mailroom/core"
import * as Adapter from "@mailroom/core/adapter"
import * as StoreRoutes from "@mailroom/http/StoreRoutes"
import { Config, Context, Effect, Layer, Redacted } from "effect"
import * as Errors from "./internal/errors.js"
import * as Keys from "./internal/keys.js"
import * as Signing from "./internal/signing.js"
import * as Storage from "./internal/storage.js"

export interface Options {
  /** Directory that holds the objects (`{dir}/objects/<key>`) and unfinished uploads (`{dir}/.tmp/`). Created when needed. */
  readonly dir: string
  /**
   * Origin (and path, if the service is mounted below one) that clients reach the service at, such
   * as `http://127.0.0.1:3000`. Signed URLs are `{publicUrl}{pathPrefix}{key}?...`.
   */
  readonly publicUrl: string
  /** Secret the URLs are signed with (HMAC-SHA256). Anyone who knows it can forge URLs. */
  readonly signingSecret: Redacted.Redacted<string> | string
  /** Largest upload accepted through a signed URL, in bytes. Default 25 MiB (core's attachment limit). */
  readonly maxUploadBytes?: number
  /** Path of the signed URLs below `publicUrl`. Starts and ends with "/". Default `/_mailroom/storage/`. */
  readonly pathPrefix?: string
}

/** Core's ObjectStore, with the routes that serve its signed URLs. */
export interface DiskObjectStore extends ObjectStore.ObjectStore {
  readonly routes: StoreRoutes.StoreRoutes
}

export const defaultMaxUploadBytes = 25 * 1024 * 1024
export const defaultPathPrefix = "/_mailroom/storage/"

const json = (status: number, message: string, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify({ message }), {
    status,
    headers: { "content-type": "application/json; charset=utf-8", ...headers }
  })

// Content types and file names end up in response headers: printable ASCII (types) or no control
// characters (names), and bounded.
const contentTypeProblem = (contentType: string) =>
  typeof contentType !== "string" || !/^[\x21-\x7e][\x20-\x7e]{0,254}$/.test(contentType)
    ? `the content type ${JSON.stringify(contentType)} is not a printable ASCII header value of at most 255 characters`
    : undefined
const filenameProblem = (filename: string) =>
  typeof filename !== "string" || filename === "" || /[\p{Cc}\p{Cs}]/u.test(filename) || filename.length > 1024
    ? "the download file name must be 1 to 1024 characters without control characters"
    : undefined

const validOptions = (options: Options) => {
  const secret = Redacted.isRedacted(options.signingSecret)
    ? Redacted.value(options.signingSecret)
    : options.signingSecret
  if (typeof secret !== "string" || secret === "") throw new Error("DiskObjectStore: signingSecret must not be empty")
  let publicUrl: URL
  try {
    publicUrl = new URL(options.publicUrl)
  } catch {
    throw new Error(`DiskObjectStore: publicUrl ${JSON.stringify(options.publicUrl)} is not a URL`)
  }
  if (publicUrl.protocol !== "http:" && publicUrl.protocol !== "https:") {
    throw new Error("DiskObjectStore: publicUrl must be an http: or https: URL")
  }
  if (publicUrl.search !== "" || publicUrl.hash !== "") {
    throw new Error("DiskObjectStore: publicUrl must not have a query or a fragment")
  }
  const pathPrefix = options.pathPrefix ?? defaultPathPrefix
  if (!/^\/([A-Za-z0-9._~-]+\/)+$/.test(pathPrefix)) {
    throw new Error('DiskObjectStore: pathPrefix must start and end with "/", e.g. "/_mailroom/storage/"')
  }
  const maxUploadBytes = options.maxUploadBytes ?? defaultMaxUploadBytes
  if (!Number.isSafeInteger(maxUploadBytes) || maxUploadBytes <= 0) {
    throw new Error("DiskObjectStore: maxUploadBytes must be a positive integer")
  }
  const dir = path.resolve(options.dir)
  return {
    secret,
    origin: `${publicUrl.origin}${publicUrl.pathname.replace(/\/+$/, "")}`,
    pathPrefix,
    maxUploadBytes,
    objectsRoot: path.join(dir, "objects"),
    tmpDir: path.join(dir, ".tmp")
  }
}

/**
 * Builds the store, removing the unfinished uploads (`{dir}/.tmp/*.part`) that killed processes left
 * behind (another live process's uploads in progress are kept). Throws when an option is unusable (empty secret, a `publicUrl` that is not an
 * http(s) URL, a malformed `pathPrefix`).
 */
export const make = (options: Options): DiskObjectStore => {
  const { secret, origin, pathPrefix, maxUploadBytes, objectsRoot, tmpDir } = validOptions(options)
  Storage.removeOrphans(tmpDir)

  const fileOf = (key: string) => Keys.pathOf(objectsRoot, key)

  const urlOf = (grant: Signing.Grant) => {
    const url = new URL(`${origin}${pathPrefix}${grant.key.split("/").map(encodeURIComponent).join("/")}`)
    if (grant.contentType !== undefined) url.searchParams.set("content-type", grant.contentType)
    if (grant.contentLength !== undefined) url.searchParams.set("content-length", grant.contentLength)
    if (grant.filename !== undefined) url.searchParams.set("filename", grant.filename)
    url.searchParams.set("expires", grant.expires)
    url.searchParams.set("signature", Signing.sign(secret, grant))
    return url.toString()
  }

  const expiresAt = (operation: string, expiresIn: number) =>
    Number.isFinite(expiresIn) && expiresIn > 0
      ? Effect.succeed(String(Math.floor(Date.now() / 1000) + Math.ceil(expiresIn)))
      : Effect.fail(Errors.invalid(operation, `expiresIn must be a positive number of seconds, not ${expiresIn}`))

  /** The file of a key to write or sign for: an invalid key is refused. */
  const writable = (operation: string, key: string) => {
    const file = fileOf(key)
    return file === undefined
      ? Effect.fail(
          Errors.invalid(operation, `${Keys.problemOf(key) ?? "the key leaves the store"}: ${Keys.quote(String(key))}`)
        )
      : Effect.succeed(file)
  }

  /** The file of a key for a lookup: an invalid key names no object. */
  const lookup = (key: string) => {
    const file = fileOf(key)
    return file === undefined ? Effect.fail(new ObjectStore.ObjectNotFound({ key })) : Effect.succeed(file)
  }

  const presignPut = ({ key, contentType, expiresIn, contentLength }: ObjectStore.PresignPutOptions) =>
    Effect.gen(function* () {
      yield* writable("presignPut", key)
      const problem = contentTypeProblem(contentType)
      if (problem !== undefined) return yield* Errors.invalid("presignPut", problem)
      if (contentLength !== undefined && !(Number.isSafeInteger(contentLength) && contentLength >= 0)) {
        return yield* Errors.invalid(
          "presignPut",
          `contentLength must be a whole number of bytes, not ${contentLength}`
        )
      }
      const expires = yield* expiresAt("presignPut", expiresIn)
      return urlOf({
        method: "PUT",
        key,
        expires,
        contentType,
        ...(contentLength === undefined ? {} : { contentLength: String(contentLength) })
      })
    })

  const presignGet = ({ key, expiresIn, filename }: ObjectStore.PresignGetOptions) =>
    Effect.gen(function* () {
      yield* writable("presignGet", key)
      const problem = filename === undefined ? undefined : filenameProblem(filename)
      if (problem !== undefined) return yield* Errors.invalid("presignGet", problem)
      const expires = yield* expiresAt("presignGet", expiresIn)
      return urlOf({ method: "GET", key, expires, ...(filename === undefined ? {} : { filename }) })
    })

  const head = (key: string) =>
    Effect.flatMap(lookup(key), (file) =>
      Effect.tryPromise({
        try: async () => {
          const object = await Storage.openObject(file)
          await object.handle.close()
          return { size: object.size, contentType: object.contentType }
        },
        catch: (error) => Errors.lookupError("head", key, error)
      })
    )

  const get = (key: string) =>
    Effect.flatMap(lookup(key), (file) =>
      Effect.tryPromise({
        try: async () => (await Storage.readObject(file)).content,
        catch: (error) => Errors.lookupError("get", key, error)
      })
    )

  // Opened once: the size and type come from the file's header line, then its bytes if admitted.
  const read = <E>(key: string, options?: ObjectStore.ReadOptions<E>) =>
    Effect.flatMap(lookup(key), (file) =>
      Effect.acquireUseRelease(
        Effect.tryPromise({
          try: () => Storage.openObject(file),
          catch: (error) => Errors.lookupError("get", key, error)
        }),
        (object) => {
          const info = { size: object.size, contentType: object.contentType }
          return Effect.andThen(
            Adapter.admit(key, info, options),
            Effect.tryPromise({
              try: async () => ({ info, content: await Storage.readContent(object) }),
              catch: (error) => Errors.lookupError("get", key, error)
            })
          )
        },
        (object) => Effect.promise(() => object.handle.close())
      )
    )

  const put = (key: string, content: Uint8Array, contentType: string) =>
    Effect.gen(function* () {
      const file = yield* writable("put", key)
      const problem = contentTypeProblem(contentType)
      if (problem !== undefined) return yield* Errors.invalid("put", problem)
      yield* Effect.tryPromise({
        try: async () => {
          const pending = await Storage.beginObject(tmpDir, contentType)
          try {
            await pending.write(content)
            await pending.commit(file)
          } finally {
            await pending.abort()
          }
        },
        catch: (error) => Errors.storeError("put", key, error)
      })
    })

  const remove = (key: string) =>
    Effect.flatMap(lookup(key), (file) =>
      Effect.tryPromise({
        try: async () => {
          // unlink refuses directories, so a key that only prefixes other keys stays missing.
          await unlink(file)
          await Storage.pruneEmptyParents(objectsRoot, file)
        },
        catch: (error) => Errors.lookupError("delete", key, error)
      })
    )

  // --- the signed URLs over HTTP ------------------------------------------------------------------

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

  const refuse = (message: string) => json(403, message)

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
    if (!/^[0-9]{1,12}$/.test(expires) || Number(expires) * 1000 < Date.now()) {
      return { refused: refuse("the URL has expired") } as const
    }
    const file = fileOf(key)
    if (file === undefined) return { refused: refuse("the URL names no valid key") } as const
    return { grant, file } as const
  }

  const download = async (grant: Signing.Grant, file: string): Promise<Response> => {
    let object: Storage.OpenObject
    try {
      object = await Storage.openObject(file)
    } catch (error) {
      if (Errors.isMissing(error)) return json(404, "no object is stored under this key")
      throw error
    }
    let body: ReadableStream<Uint8Array> | null = null
    // The stream closes the handle when it ends or the client goes away.
    if (object.size > 0) {
      const end = object.start + object.size - 1
      body = Readable.toWeb(
        object.handle.createReadStream({ start: object.start, end, autoClose: true })
      ) as unknown as ReadableStream<Uint8Array>
    } else await object.handle.close()
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

    const pending = await Storage.beginObject(tmpDir, grant.contentType ?? "application/octet-stream")
    try {
      let size = 0
      const reader = request.body?.getReader()
      if (reader !== undefined) {
        for (;;) {
          let chunk: ReadableStreamReadResult<Uint8Array>
          try {
            chunk = await reader.read()
          } catch {
            return json(400, "the upload was interrupted")
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
    }
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
      // The message could carry the store's paths; the code (ENOSPC, EMFILE...) says enough.
      const code = Errors.codeOf(error)
      return json(500, code === undefined ? "the store failed" : `the store failed (${code})`)
    }
  }

  return {
    presignPut,
    presignGet,
    head,
    get,
    read,
    put,
    delete: remove,
    routes: { pathPrefix, methods: ["GET", "PUT"], handle }
  }
}

const services = (store: DiskObjectStore) =>
  Context.make(ObjectStore.ObjectStore, store).pipe(Context.add(StoreRoutes.StoreRoutes, store.routes))

/** Provides core's `ObjectStore`, and the `StoreRoutes` through which @mailroom/http serves its URLs. */
export const layer = (options: Options): Layer.Layer<ObjectStore.ObjectStore | StoreRoutes.StoreRoutes> =>
  Layer.syncContext(() => services(make(options)))

/**
 * As `layer`, with the options read from `Config`, e.g.
 * `layerConfig({ dir: Config.String("STORAGE_DIR"), publicUrl: Config.String("PUBLIC_URL"), signingSecret: Config.Redacted("STORAGE_SECRET") })`.
 */
export const layerConfig = (
  options: Config.Wrap<Options>
): Layer.Layer<ObjectStore.ObjectStore | StoreRoutes.StoreRoutes, Config.ConfigError> =>
  Layer.effectContext(Effect.map(Config.unwrap(options), (read) => services(make(read))))
