// mailroom's ObjectStore on Google Cloud Storage: V4 signed URLs for direct uploads and downloads,
// and head/get/put/delete through the JSON API of @google-cloud/storage.

import { createPrivateKey, type KeyObject } from "node:crypto"
import { readFileSync } from "node:fs"
import { type GetSignedUrlConfig, Storage } from "@google-cloud/storage"
import { ObjectStore } from "@mailroom/core"
import * as Adapter from "@mailroom/core/adapter"
import { Clock, Config, Effect, Layer, Redacted } from "effect"
import { GoogleAuth, JWT } from "google-auth-library"
import { toLookupError, toObjectStoreError } from "./internal/errors.js"
import { read } from "./internal/read.js"
import { makeSigner, maxExpiresIn, type SignRequest } from "./internal/signing.js"

/** The two fields of a service-account key file that signing and authentication need. */
export interface ServiceAccountCredentials {
  readonly client_email: string
  /** A plain string is wrapped in `Redacted` at once, so it never shows in logs. */
  readonly private_key: string | Redacted.Redacted<string>
}

export interface Options {
  /** The bucket attachments are kept in. Required. */
  readonly bucket: string
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
  /**
   * When set, an upload URL issued without a declared length also signs
   * `x-goog-content-length-range: 0,<maxUploadBytes>`. GCS then requires the uploading client to
   * send that header itself (it answers 400 without it), so enable this only for clients that are
   * told to. Default: unset, because the API tells clients to send only `Content-Type`.
   */
  readonly maxUploadBytes?: number | undefined
  /** A ready `Storage` client (custom auth, retry options, interceptors). Default: built from the options above. */
  readonly client?: Storage | undefined
}

const scopes = ["https://www.googleapis.com/auth/devstorage.full_control"]

/** The service account of a key file, read once: what `keyFilename` names. */
const keyFileAccount = (path: string): ServiceAccountCredentials => {
  const parsed = JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>
  if (typeof parsed.client_email !== "string" || typeof parsed.private_key !== "string") {
    throw new Error(
      `GcsObjectStore: ${path} is not a service-account key file (no client_email and private_key); for other credentials leave keyFilename unset and use the default chain (GOOGLE_APPLICATION_CREDENTIALS), or inject a client`
    )
  }
  return { client_email: parsed.client_email, private_key: Redacted.make(parsed.private_key) }
}

/**
 * The SDK's `credentials` and `keyFilename` options print a deprecation notice on every construction;
 * an `authClient` does not. The SDK signs URLs locally with a JWT client's key, and finds the email it
 * signs for in `jsonContent`, which the deprecated option would have set: set here, it is the same.
 */
const serviceAccountAuth = (account: ServiceAccountCredentials): GoogleAuth => {
  const key = Redacted.isRedacted(account.private_key) ? Redacted.value(account.private_key) : account.private_key
  const auth = new GoogleAuth({ authClient: new JWT({ email: account.client_email, key, scopes }), scopes })
  auth.jsonContent = { client_email: account.client_email, private_key: key }
  return auth
}

const makeClient = (options: Options, account: ServiceAccountCredentials | undefined): Storage =>
  new Storage({
    ...(options.projectId === undefined ? {} : { projectId: options.projectId }),
    ...(options.apiEndpoint === undefined ? {} : { apiEndpoint: options.apiEndpoint }),
    ...(account === undefined ? {} : { authClient: serviceAccountAuth(account) })
  })

/**
 * The key parsed once, for the store's lifetime. Undefined when it cannot sign here: an injected
 * client or the default chain (which may sign through IAM signBlob, with no private key at hand),
 * or a key Node cannot parse, which the SDK then reports in its own words when asked to sign.
 */
const localKey = (account: ServiceAccountCredentials | undefined): KeyObject | undefined => {
  if (account === undefined) return undefined
  try {
    return createPrivateKey(
      Redacted.isRedacted(account.private_key) ? Redacted.value(account.private_key) : account.private_key
    )
  } catch {
    return undefined
  }
}

/** The headers an upload URL binds besides `Content-Type` (which the SDK signs itself). */
const boundHeaders = (options: Options, contentLength: number | undefined): Record<string, string> => {
  // `Content-Length` is sent by every HTTP client for a body of known size, so binding it costs the
  // uploader nothing, unlike an `x-goog-*` header it would have to add by hand.
  if (contentLength !== undefined) return { "content-length": String(contentLength) }
  if (options.maxUploadBytes !== undefined) return { "x-goog-content-length-range": `0,${options.maxUploadBytes}` }
  return {}
}

export const make = (options: Options): ObjectStore.ObjectStore => {
  const account =
    options.client !== undefined
      ? undefined
      : (options.credentials ?? (options.keyFilename === undefined ? undefined : keyFileAccount(options.keyFilename)))
  const client = options.client ?? makeClient(options, account)
  const bucket = client.bucket(options.bucket)
  const privateKey = localKey(account)
  const signLocally =
    account === undefined || privateKey === undefined
      ? undefined
      : makeSigner({
          apiEndpoint: client.apiEndpoint,
          bucket: options.bucket,
          clientEmail: account.client_email,
          privateKey
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

/** Provides core's `ObjectStore` on GCS. */
export const layer = (options: Options): Layer.Layer<ObjectStore.ObjectStore> =>
  Layer.sync(ObjectStore.ObjectStore, () => make(options))

/**
 * Provides core's `ObjectStore` on GCS with options read from `Config`, e.g.
 * `layerConfig({ bucket: Config.String("GCS_BUCKET"), projectId: Config.String("GCP_PROJECT").pipe(Config.withDefault(undefined)) })`.
 */
export const layerConfig = (
  options: Config.Wrap<Omit<Options, "client">>
): Layer.Layer<ObjectStore.ObjectStore, Config.ConfigError> =>
  Layer.effect(
    ObjectStore.ObjectStore,
    Effect.map(Config.unwrap(options), (resolved) => make(resolved))
  )
