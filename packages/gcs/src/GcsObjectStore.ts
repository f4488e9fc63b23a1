// mailroom's ObjectStore on Google Cloud Storage: V4 signed URLs for direct uploads and downloads,
// and head/get/put/delete through the JSON API of @google-cloud/storage.

import type { GetSignedUrlConfig, Storage } from "@google-cloud/storage"
import { ObjectStore } from "@mailroom/core"
import * as Adapter from "@mailroom/core/adapter"
import * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { type Account, defaultCredentials, inlineAccount, keyFileAccount, makeClient } from "./internal/client.js"
import { toLookupError, toObjectStoreError } from "./internal/errors.js"
import { read } from "./internal/read.js"
import { makeSigner, maxExpiresIn, type SignRequest } from "./internal/signing.js"

/** The two fields of a service-account key file that signing and authentication need. */
export interface ServiceAccountCredentials {
  readonly client_email: string
  /** The PEM private key, plain or `Redacted` (as `Config.Redacted` reads it). */
  readonly private_key: Adapter.Secret
}

/** The options a client built here and a client of your own both take. */
export interface CommonOptions {
  /** The bucket attachments are kept in. Required. */
  readonly bucket: string
  /**
   * When set, an upload URL issued without a declared length also signs
   * `x-goog-content-length-range: 0,<maxUploadBytes>`. GCS then requires the uploading client to
   * send that header itself (it answers 400 without it), so enable this only for clients that are
   * told to. A whole number above 0. Default: unset, because the API tells clients to send only `Content-Type`.
   */
  readonly maxUploadBytes?: number | undefined
}

/** The project and credentials the store builds its `Storage` client from. */
export interface ConnectionOptions {
  /** The Google Cloud project. Default: the one of the credentials or the environment. */
  readonly projectId?: string | undefined
  /**
   * Path to a service-account key file (JSON). Default: unset; with neither this nor `credentials`
   * the SDK's default chain is used (`GOOGLE_APPLICATION_CREDENTIALS`, workload identity, metadata server).
   */
  readonly keyFilename?: string | undefined
  /** An inline service-account key. Takes precedence over `keyFilename`. Default: unset. */
  readonly credentials?: ServiceAccountCredentials | undefined
  /**
   * Another endpoint than `https://storage.googleapis.com` (an emulator). Signed URLs point at it too.
   * As the SDK does for emulators, no credentials are sent to a custom endpoint; inject a `client`
   * built with `useAuthWithCustomEndpoint` when it needs them. Default: Google's endpoint.
   */
  readonly apiEndpoint?: string | undefined
}

/** What `layerConfig` reads; the shape of the server's `"storage": { "kind": "gcs" }`. */
export interface ConfigOptions extends CommonOptions, ConnectionOptions {}

/** A `Storage` client you built yourself (custom auth, retry options, interceptors); URLs are signed by the SDK with its credentials. */
export interface ClientOptions extends CommonOptions {
  readonly client: Storage
}

/** What `make` and `layer` take: the project and credentials, or a client of your own. */
export type Options = ConfigOptions | ClientOptions

/** The headers an upload URL binds besides `Content-Type` (which the SDK signs itself). */
const boundHeaders = (options: Options, contentLength: number | undefined): Record<string, string> => {
  // `Content-Length` is sent by every HTTP client for a body of known size, so binding it costs the
  // uploader nothing, unlike an `x-goog-*` header it would have to add by hand.
  if (contentLength !== undefined) return { "content-length": String(contentLength) }
  if (options.maxUploadBytes !== undefined) return { "x-goog-content-length-range": `0,${options.maxUploadBytes}` }
  return {}
}

/** What `make` checks whatever the client: the options the store itself uses. */
const checkOptions = (options: Options): Effect.Effect<void, Config.ConfigError> => {
  if (options.bucket.trim() === "") return Effect.fail(Adapter.invalidOption("bucket", "must not be empty"))
  const max = options.maxUploadBytes
  if (max !== undefined && !(Number.isSafeInteger(max) && max > 0)) {
    return Effect.fail(Adapter.invalidOption("maxUploadBytes", "must be a whole number of bytes above 0"))
  }
  return Effect.void
}

/** The client built from the options and, with `keyFilename` or `credentials`, the account that signs here. */
const connect = (
  options: ConnectionOptions
): Effect.Effect<{ readonly client: Storage; readonly account: Account | undefined }, Config.ConfigError> =>
  Effect.gen(function* () {
    const account =
      options.credentials !== undefined
        ? yield* inlineAccount(options.credentials.client_email, options.credentials.private_key)
        : options.keyFilename !== undefined
          ? yield* keyFileAccount(options.keyFilename)
          : undefined
    const client = yield* makeClient(options, account)
    if (account === undefined) yield* defaultCredentials(client)
    return { client, account }
  })

/**
 * The store on `client`. With an `account` it signs URLs in process with the key parsed once; without
 * one (an injected client, or the default chain, which may sign through IAM signBlob with no private
 * key at hand) the SDK signs.
 */
const storeOn = (client: Storage, account: Account | undefined, options: Options): ObjectStore.ObjectStore => {
  const bucket = client.bucket(options.bucket)
  const signLocally =
    account === undefined
      ? undefined
      : makeSigner({
          apiEndpoint: client.apiEndpoint,
          bucket: options.bucket,
          clientEmail: account.clientEmail,
          privateKey: account.privateKey
        })

  // The SDK floors both instants to seconds: one `now` for both keeps X-Goog-Expires exact.
  const sign = (request: Omit<SignRequest, "now">) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => {
      const operation = `presign ${request.method}`
      if (signLocally !== undefined && request.expiresIn > 0 && request.expiresIn <= maxExpiresIn) {
        return Effect.try({
          try: () => signLocally({ ...request, now }),
          catch: (error) => toObjectStoreError(operation, request.key, error)
        })
      }
      const config: GetSignedUrlConfig = {
        version: "v4",
        action: request.method === "PUT" ? "write" : "read",
        accessibleAt: now,
        expires: now + request.expiresIn * 1000,
        ...(request.contentType === undefined ? {} : { contentType: request.contentType }),
        ...(request.extensionHeaders === undefined ? {} : { extensionHeaders: { ...request.extensionHeaders } }),
        ...(request.queryParams?.["response-content-disposition"] === undefined
          ? {}
          : { responseDisposition: request.queryParams["response-content-disposition"] })
      }
      return Effect.tryPromise({
        try: () => bucket.file(request.key).getSignedUrl(config),
        catch: (error) => toObjectStoreError(operation, request.key, error)
      }).pipe(Effect.map(([url]) => url))
    })

  return {
    presignPut: ({ key, contentType, expiresIn, contentLength }) =>
      sign({ method: "PUT", key, expiresIn, contentType, extensionHeaders: boundHeaders(options, contentLength) }),

    presignGet: ({ key, expiresIn, filename }) =>
      sign({
        method: "GET",
        key,
        expiresIn,
        ...(filename === undefined
          ? {}
          : { queryParams: { "response-content-disposition": Adapter.contentDisposition(filename) } })
      }),

    head: (key) =>
      Effect.tryPromise({
        try: () => bucket.file(key).getMetadata(),
        catch: (error) => toLookupError("head", key, error)
      }).pipe(
        Effect.map(([metadata]) => ({
          size: Number(metadata.size ?? 0),
          // GCS itself serves an object stored without a type as application/octet-stream.
          contentType: metadata.contentType ?? "application/octet-stream"
        }))
      ),

    // Through the same stream as `read`: the SDK's `download()` stacks a listener per chunk on one
    // response stream, which Node reports as a leak for any object over about 64 KiB.
    get: (key) =>
      Effect.map(
        read(bucket.file(key), key, undefined) as Effect.Effect<
          ObjectStore.StoredObject,
          ObjectStore.ObjectNotFound | ObjectStore.ObjectStoreError
        >,
        (object) => object.content
      ),

    read: (key, options) => read(bucket.file(key), key, options),

    put: (key, content, contentType) =>
      Effect.tryPromise({
        // Index objects are a few bytes: one multipart request instead of a resumable session.
        try: () => bucket.file(key).save(content, { resumable: false, contentType, metadata: { contentType } }),
        catch: (error) => toObjectStoreError("put", key, error)
      }),

    delete: (key) =>
      Effect.tryPromise({
        try: () => bucket.file(key).delete(),
        catch: (error) => toLookupError("delete", key, error)
      }).pipe(Effect.asVoid)
  }
}

/**
 * An ObjectStore on the bucket. Fails with a `ConfigError` naming the option when one cannot be used
 * (an empty bucket, a key file that is no service account's, a private key that cannot sign, an
 * endpoint that is no URL, a `maxUploadBytes` that is no size). Builds no connection: nothing to close.
 */
export const make = (options: Options): Effect.Effect<ObjectStore.ObjectStore, Config.ConfigError> =>
  Effect.gen(function* () {
    yield* checkOptions(options)
    const { client, account } =
      "client" in options ? { client: options.client, account: undefined } : yield* connect(options)
    return storeOn(client, account, options)
  })

/** Provides core's `ObjectStore` on GCS (the server's `"storage": { "kind": "gcs", ... }`). */
export const layer = (options: Options): Layer.Layer<ObjectStore.ObjectStore, Config.ConfigError> =>
  Layer.effect(ObjectStore.ObjectStore, make(options))

/**
 * As `layer`, with the options read from `Config`, e.g.
 * `layerConfig({ bucket: Config.String("GCS_BUCKET"), projectId: Config.String("GCP_PROJECT").pipe(Config.withDefault(undefined)) })`.
 */
export const layerConfig = (
  config: Config.Wrap<ConfigOptions>
): Layer.Layer<ObjectStore.ObjectStore, Config.ConfigError> =>
  Layer.effect(ObjectStore.ObjectStore, Effect.flatMap(Config.unwrap(config), make))
