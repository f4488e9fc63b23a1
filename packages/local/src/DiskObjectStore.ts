// The embedded ObjectStore: objects as files under one directory, with HMAC-signed URLs that the
// store serves itself through `routes` (mounted by @mailroom/http under `{basePath}{pathPrefix}`).
import { unlink } from "node:fs/promises"
import * as path from "node:path"
import { ObjectStore, StoreRoutes } from "@mailroom/core"
import * as Adapter from "@mailroom/core/adapter"
import * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Errors from "./internal/errors.js"
import * as Keys from "./internal/keys.js"
import * as Check from "./internal/options.js"
import * as Routes from "./internal/routes.js"
import * as Signing from "./internal/signing.js"
import * as Storage from "./internal/storage.js"

/** What `layerConfig` reads: the directory and how its URLs are signed. */
export interface ConfigOptions {
  /** Directory that holds the objects (`{dir}/objects/<key>`) and unfinished uploads (`{dir}/.tmp/`). Created when needed. */
  readonly dir: string
  /**
   * Where clients reach the service, such as `http://127.0.0.1:3000`. An origin alone is followed by
   * the path the request reached @mailroom/http's handler at (`/mail` under `app.use("/mail", ...)`):
   * signed URLs are `{publicUrl}{mount}{pathPrefix}{key}?...`. A path in it is used as it is, for a
   * reverse proxy in front that strips or adds a prefix: `https://example.com/api/mail`.
   */
  readonly publicUrl: string
  /** Secret the URLs are signed with (HMAC-SHA256). Anyone who knows it can forge URLs. */
  readonly signingSecret: Adapter.Secret
  /** Largest upload accepted through a signed URL, in bytes. Default `Adapter.defaultMaxUploadBytes` (25 MiB, core's attachment limit). */
  readonly maxUploadBytes?: number
  /** Path of the signed URLs below `publicUrl`. Starts and ends with "/". Default `/_mailroom/storage/`. */
  readonly pathPrefix?: string
  /**
   * How long an upload or a download through a signed URL may go without its client sending or
   * reading a byte before it is cut off and its file closed: a reader that stops reading does not
   * hold a file (and its memory) for ever. `"30 seconds"` or milliseconds. Default 30 seconds.
   */
  readonly transferIdleTimeout?: Duration.Input
  /**
   * The most files uploads and downloads through signed URLs hold open at once. Past it they are
   * answered 503 `{"message"}` with `Retry-After: 1`, so that stalled transfers cannot take every file
   * handle the process has (sends read attachments too). Default 256.
   */
  readonly maxOpenFiles?: number
}

/** What `make` and `layer` take: the same, as the store has no client to bring. */
export type Options = ConfigOptions

/** Core's ObjectStore, with the routes that serve its signed URLs. */
export interface DiskObjectStore extends ObjectStore.ObjectStore {
  readonly routes: StoreRoutes.StoreRoutes
}

/** Where the signed URLs are served below `publicUrl` by default. */
export const defaultPathPrefix = "/_mailroom/storage/"

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

/** The options made usable. */
interface Settings {
  readonly secret: Adapter.KeyedSha256
  /** `publicUrl` without a trailing "/". */
  readonly origin: string
  /** Whether `publicUrl` is an origin alone, followed by the path each request reached the handler at. */
  readonly followsMount: boolean
  readonly pathPrefix: string
  readonly maxUploadBytes: number
  readonly objectsRoot: string
  readonly tmpDir: string
  readonly idleMillis: number
  readonly maxOpenFiles: number
}

/** The options made usable, or a `ConfigError` naming the first that is not. */
const checkOptions = (options: Options): Effect.Effect<Settings, Config.ConfigError> =>
  Effect.gen(function* () {
    const secret = Adapter.secretValue(options.signingSecret)
    if (typeof secret !== "string" || secret === "") {
      return yield* Effect.fail(Adapter.invalidOption("signingSecret", "must not be empty"))
    }
    const publicUrl = URL.parse(options.publicUrl)
    if (publicUrl === null || (publicUrl.protocol !== "http:" && publicUrl.protocol !== "https:")) {
      return yield* Effect.fail(Adapter.invalidOption("publicUrl", "must be an http: or https: URL"))
    }
    if (publicUrl.search !== "" || publicUrl.hash !== "") {
      return yield* Effect.fail(Adapter.invalidOption("publicUrl", "must not have a query or a fragment"))
    }
    const pathPrefix = options.pathPrefix ?? defaultPathPrefix
    if (typeof pathPrefix !== "string" || !/^\/([A-Za-z0-9._~-]+\/)+$/.test(pathPrefix)) {
      return yield* Effect.fail(
        Adapter.invalidOption("pathPrefix", 'must start and end with "/", e.g. "/_mailroom/storage/"')
      )
    }
    const maxUploadBytes = yield* Adapter.positiveInteger(
      "maxUploadBytes",
      options.maxUploadBytes ?? Adapter.defaultMaxUploadBytes
    )
    const dir = path.resolve(yield* Check.directory("dir", options.dir))
    const idle = yield* Adapter.duration("transferIdleTimeout", options.transferIdleTimeout ?? "30 seconds")
    const maxOpenFiles = yield* Adapter.positiveInteger("maxOpenFiles", options.maxOpenFiles ?? 256)
    return {
      idleMillis: Math.max(1, Math.round(Duration.toMillis(idle))),
      maxOpenFiles,
      secret: Signing.keyOf(secret),
      origin: `${publicUrl.origin}${publicUrl.pathname.replace(/\/+$/, "")}`,
      followsMount: publicUrl.pathname === "/",
      pathPrefix,
      maxUploadBytes,
      objectsRoot: path.join(dir, "objects"),
      tmpDir: path.join(dir, ".tmp")
    }
  })

/**
 * Builds the store, removing the unfinished uploads (`{dir}/.tmp/*.part`) that killed processes left
 * behind (another live process's uploads in progress are kept). Fails with a `ConfigError` naming
 * the option when one is unusable (an empty secret, a `publicUrl` that is not an http(s) URL, a
 * malformed `pathPrefix`, a `maxUploadBytes` or `maxOpenFiles` that is not a positive integer, a
 * `transferIdleTimeout` that is not a duration above zero). Its URLs are signed
 * and checked by the `Clock` it is built with, so a `TestClock` expires them.
 */
export const make = (options: Options): Effect.Effect<DiskObjectStore, Config.ConfigError> =>
  Effect.gen(function* () {
    const checked = yield* checkOptions(options)
    const clock = yield* Clock.Clock
    // Failures of the routes, which run outside any fiber, are logged with the store's own logger.
    const context = yield* Effect.context<never>()
    const logError = (message: string) => {
      Effect.runForkWith(context)(Effect.logError(message))
    }
    // Compared with the files' own times, which the system clock wrote.
    yield* Effect.sync(() => Storage.removeOrphans(checked.tmpDir))
    return build(checked, () => clock.currentTimeMillisUnsafe(), logError)
  })

const build = (
  { secret, origin, followsMount, pathPrefix, maxUploadBytes, objectsRoot, tmpDir, idleMillis, maxOpenFiles }: Settings,
  now: () => number,
  logError: (message: string) => void
): DiskObjectStore => {
  const fileOf = (key: string) => Keys.pathOf(objectsRoot, key)

  // The signature covers the key, not the path before it: a URL is good under any mount that serves it.
  const mountPath = followsMount ? Effect.service(StoreRoutes.MountPath) : Effect.succeed("")

  // The URL before the key, parsed once per mount. A valid key (no "." or ".." segment, no backslash)
  // with each segment percent-encoded, appended to it, reads as parsing the whole URL would.
  const bases = new Map<string, string | null>()
  const baseOf = (mount: string) => {
    let base = bases.get(mount)
    if (base === undefined) {
      const parsed = new URL(`${origin}${mount}${pathPrefix}`)
      // A mount holding "?" or "#" would not end in the path: such a URL is parsed whole.
      base = parsed.search === "" && parsed.hash === "" && parsed.href.endsWith("/") ? parsed.href : null
      if (bases.size >= 64) bases.clear()
      bases.set(mount, base)
    }
    return base
  }

  const urlOf = (grant: Signing.Grant, mount: string) => {
    const path = grant.key.split("/").map(encodeURIComponent).join("/")
    // One query, serialised once: each `searchParams.set` serialises the whole query again.
    const query = new URLSearchParams()
    if (grant.contentType !== undefined) query.append("content-type", grant.contentType)
    if (grant.contentLength !== undefined) query.append("content-length", grant.contentLength)
    if (grant.filename !== undefined) query.append("filename", grant.filename)
    query.append("expires", grant.expires)
    query.append("signature", Signing.sign(secret, grant))
    const base = baseOf(mount)
    if (base !== null) return `${base}${path}?${query.toString()}`
    const url = new URL(`${origin}${mount}${pathPrefix}${path}`)
    url.search = query.toString()
    return url.toString()
  }

  const expiresAt = (operation: string, expiresIn: number) =>
    Number.isFinite(expiresIn) && expiresIn > 0
      ? Effect.sync(() => String(Math.floor(now() / 1000) + Math.ceil(expiresIn)))
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
      return urlOf(
        {
          method: "PUT",
          key,
          expires,
          contentType,
          ...(contentLength === undefined ? {} : { contentLength: String(contentLength) })
        },
        yield* mountPath
      )
    })

  const presignGet = ({ key, expiresIn, filename }: ObjectStore.PresignGetOptions) =>
    Effect.gen(function* () {
      yield* writable("presignGet", key)
      const problem = filename === undefined ? undefined : filenameProblem(filename)
      if (problem !== undefined) return yield* Errors.invalid("presignGet", problem)
      const expires = yield* expiresAt("presignGet", expiresIn)
      return urlOf({ method: "GET", key, expires, ...(filename === undefined ? {} : { filename }) }, yield* mountPath)
    })

  const head = (key: string) =>
    Effect.flatMap(lookup(key), (file) =>
      Effect.tryPromise({
        try: async () => {
          const object = await Storage.openObject(file)
          await object.handle.close()
          return { size: object.size, contentType: object.contentType }
        },
        catch: (error) => Errors.toLookupError("head", key, error)
      })
    )

  const get = (key: string) =>
    Effect.flatMap(lookup(key), (file) =>
      Effect.tryPromise({
        try: async () => (await Storage.readObject(file)).content,
        catch: (error) => Errors.toLookupError("get", key, error)
      })
    )

  // Opened once: the size and type come from the file's header line, then its bytes if admitted.
  const read = <E>(key: string, options?: ObjectStore.ReadOptions<E>) =>
    Effect.flatMap(lookup(key), (file) =>
      Effect.acquireUseRelease(
        Effect.tryPromise({
          try: () => Storage.openObject(file),
          catch: (error) => Errors.toLookupError("get", key, error)
        }),
        (object) => {
          const info = { size: object.size, contentType: object.contentType }
          return Effect.andThen(
            Adapter.admit(key, info, options),
            Effect.tryPromise({
              try: async () => ({ info, content: await Storage.readContent(object) }),
              catch: (error) => Errors.toLookupError("get", key, error)
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
        catch: (error) => Errors.toObjectStoreError("put", key, error)
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
        catch: (error) => Errors.toLookupError("delete", key, error)
      })
    )

  return {
    presignPut,
    presignGet,
    head,
    get,
    read,
    put,
    delete: remove,
    routes: Routes.make({
      secret,
      pathPrefix,
      maxUploadBytes,
      tmpDir,
      fileOf,
      now,
      idleMillis,
      maxOpenFiles,
      logError
    })
  }
}

const services = (store: DiskObjectStore) =>
  Context.make(ObjectStore.ObjectStore, store).pipe(Context.add(StoreRoutes.StoreRoutes, store.routes))

/** Provides core's `ObjectStore`, and the `StoreRoutes` through which @mailroom/http serves its URLs. */
export const layer = (
  options: Options
): Layer.Layer<ObjectStore.ObjectStore | StoreRoutes.StoreRoutes, Config.ConfigError> =>
  Layer.effectContext(Effect.map(make(options), services))

/**
 * As `layer`, with the options read from `Config`, e.g.
 * `layerConfig({ dir: Config.String("STORAGE_DIR"), publicUrl: Config.String("PUBLIC_URL"), signingSecret: Config.Redacted("STORAGE_SECRET") })`.
 */
export const layerConfig = (
  config: Config.Wrap<ConfigOptions>
): Layer.Layer<ObjectStore.ObjectStore | StoreRoutes.StoreRoutes, Config.ConfigError> =>
  Layer.effectContext(Effect.map(Effect.flatMap(Config.unwrap(config), make), services))
