// mailroom's ObjectStore on Amazon S3 and S3-compatible stores (Cloudflare R2, MinIO): object
// operations through @aws-sdk/client-s3, presigned URLs signed directly with AWS's SigV4 signer.
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client
} from "@aws-sdk/client-s3"
import { ObjectStore } from "@mailroom/core"
import * as Adapter from "@mailroom/core/adapter"
import * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import { resolveTarget, UnsignableBucket } from "./internal/endpoint.js"
import { toLookupError, toObjectStoreError } from "./internal/errors.js"
import { type Credentials, makePresigner } from "./internal/presigner.js"

/** The options a client built here and a client of your own both take. */
export interface CommonOptions {
  /** The bucket attachments are kept in. */
  readonly bucket: string
}

/** Where the bucket is and how to log in: what the store builds its `S3Client` from. */
export interface ConnectionOptions {
  /**
   * The region requests are signed for and, without `endpoint`, sent to
   * (`https://{bucket}.s3.{region}.amazonaws.com`). Cloudflare R2 uses `"auto"`.
   */
  readonly region: string
  /**
   * An S3-compatible endpoint: `https://<account>.r2.cloudflarestorage.com`, `http://localhost:9000`.
   * Default: AWS's regional endpoint for `region`.
   */
  readonly endpoint?: string
  /**
   * Put the bucket in the path (`{endpoint}/{bucket}/{key}`) instead of the host name
   * (`{bucket}.{endpoint host}/{key}`). Default `false`. MinIO needs `true`. Buckets that are not a
   * plain DNS label (dots, capitals) and IP-address endpoints use the path anyway, as in the SDK.
   */
  readonly forcePathStyle?: boolean
  /** Access key id, given together with `secretAccessKey`. Default: the SDK's credential chain. */
  readonly accessKeyId?: Adapter.Secret
  /**
   * Secret access key, given together with `accessKeyId`. Default: the SDK's credential chain
   * (environment, shared config and credentials files, SSO, container and instance roles).
   */
  readonly secretAccessKey?: Adapter.Secret
}

/** What `layerConfig` reads; the shape of the server's `"storage": { "kind": "s3" }`. */
export interface ConfigOptions extends CommonOptions, ConnectionOptions {}

/** An S3 client you built yourself (middleware, retry policy, HTTP agent, other credentials). */
export interface ClientOptions extends CommonOptions {
  /**
   * Used for every object operation; presigned URLs follow its region, endpoint, path style, FIPS,
   * dual-stack and accelerate settings and credentials, resolved by its own endpoint rules when the
   * store is made. It stays yours: the layer does not destroy it. Build it with
   * `requestChecksumCalculation: "WHEN_REQUIRED"` for R2 and MinIO.
   */
  readonly client: S3Client
}

/** What `make` and `layer` take: where the bucket is, or a client of your own. */
export type Options = ConfigOptions | ClientOptions

const invalid = (option: string, message: string) => Effect.fail(Adapter.invalidOption(option, message))

/** The fixed keys of the options, or `undefined` for the SDK's chain; both or neither, and neither empty. */
const secretsOf = (
  options: ConnectionOptions
): Effect.Effect<
  { readonly accessKeyId: string; readonly secretAccessKey: string } | undefined,
  Config.ConfigError
> => {
  const accessKeyId = options.accessKeyId === undefined ? undefined : Adapter.secretValue(options.accessKeyId)
  const secretAccessKey =
    options.secretAccessKey === undefined ? undefined : Adapter.secretValue(options.secretAccessKey)
  if (accessKeyId === undefined && secretAccessKey === undefined) return Effect.succeed(undefined)
  if (accessKeyId === undefined)
    return invalid("accessKeyId", "must be given with secretAccessKey (or neither, for the SDK's credential chain)")
  if (secretAccessKey === undefined)
    return invalid("secretAccessKey", "must be given with accessKeyId (or neither, for the SDK's credential chain)")
  if (accessKeyId.trim() === "") return invalid("accessKeyId", "must not be empty")
  if (secretAccessKey.trim() === "") return invalid("secretAccessKey", "must not be empty")
  return Effect.succeed({ accessKeyId, secretAccessKey })
}

/** The options `build` takes as they are: checked here, so a bad one fails `make` instead of a request. */
const checkConnection = (options: ConnectionOptions): Effect.Effect<void, Config.ConfigError> => {
  if (options.region.trim() === "") return invalid("region", 'must be a region name such as eu-west-3 ("auto" for R2)')
  const { endpoint } = options
  if (endpoint !== undefined && !(URL.canParse(endpoint) && /^https?:$/.test(new URL(endpoint).protocol))) {
    return invalid("endpoint", "must be an http(s) URL, such as http://localhost:9000")
  }
  return Effect.void
}

interface Connection {
  readonly client: S3Client
  /** Resolved once: fixed keys, or the client's provider, which caches the chain until expiry. */
  readonly credentials: Credentials
}

const build = (options: ConnectionOptions): Effect.Effect<Connection, Config.ConfigError, Scope.Scope> =>
  Effect.gen(function* () {
    yield* checkConnection(options)
    const secrets = yield* secretsOf(options)
    const client = yield* Effect.acquireRelease(
      Effect.sync(
        () =>
          new S3Client({
            region: options.region,
            ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }),
            forcePathStyle: options.forcePathStyle ?? false,
            ...(secrets === undefined ? {} : { credentials: secrets }),
            // Since client-s3 3.729 the SDK adds a CRC32 to every PutObject by default; only send
            // checksums an operation requires, which keeps S3-compatible stores happy.
            requestChecksumCalculation: "WHEN_REQUIRED"
          })
      ),
      (client) => Effect.sync(() => client.destroy())
    )
    // The SDK's own check of the region (a host name label), which each of its requests would fail on.
    yield* Effect.tryPromise({
      try: () => client.config.region(),
      catch: () => Adapter.invalidOption("region", 'must be a region name such as eu-west-3 ("auto" for R2)')
    })
    if (secrets === undefined) yield* fromChain(client)
    return { client, credentials: secrets ?? client.config.credentials }
  })

/** The SDK's chain resolved once, so that a machine without credentials fails at start-up, not on the first presign. */
const fromChain = (client: S3Client): Effect.Effect<void, Config.ConfigError> =>
  Adapter.credentialsFromChain(
    () => client.config.credentials(),
    "accessKeyId",
    "no AWS credentials were found: give accessKeyId and secretAccessKey, or make credentials available to the AWS SDK's chain (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE, an SSO session, an instance or task role)"
  )

/** An injected client: one without a region cannot sign URLs. */
const adopt = (client: S3Client): Effect.Effect<Connection, Config.ConfigError> =>
  Effect.gen(function* () {
    yield* Effect.tryPromise({
      try: () => client.config.region(),
      catch: () => Adapter.invalidOption("client", "must be an S3Client with a region")
    })
    return { client, credentials: client.config.credentials }
  })

/**
 * An ObjectStore on the bucket. Presigned PUTs bind `Content-Type` (and `Content-Length` when
 * declared) as signed headers; head, get and delete answer `ObjectNotFound` for a missing key.
 * Fails with a `ConfigError` naming the option when one cannot be used, also where the SDK cannot
 * address the bucket with the client's settings (accelerate with path style, FIPS or a custom
 * endpoint) or its URLs need more than SigV4 (S3 Express directory buckets, Multi-Region Access
 * Points). Scoped: a client built from the options is destroyed with the scope.
 */
export const make = (options: Options): Effect.Effect<ObjectStore.ObjectStore, Config.ConfigError, Scope.Scope> =>
  Effect.gen(function* () {
    if (options.bucket.trim() === "") return yield* invalid("bucket", "must not be empty")
    const { client, credentials } = "client" in options ? yield* adopt(options.client) : yield* build(options)
    const Bucket = options.bucket
    // Once per store, so a URL costs one signature: the client's own endpoint rules, which refuse
    // settings they cannot honour (accelerate with path style or a custom endpoint, ...).
    const target = yield* Effect.tryPromise({
      try: () => resolveTarget(client, Bucket),
      catch: (error) =>
        Adapter.invalidOption(
          error instanceof UnsignableBucket ? "bucket" : "client" in options ? "client" : "endpoint",
          error instanceof Error ? error.message : String(error)
        )
    })
    const presigner = makePresigner({ target, credentials })

    const head = (key: string) =>
      Effect.tryPromise({
        try: (abortSignal) => client.send(new HeadObjectCommand({ Bucket, Key: key }), { abortSignal }),
        catch: (error) => toLookupError("HeadObject", key, error)
      }).pipe(
        Effect.map(
          (output): ObjectStore.ObjectInfo => ({
            size: output.ContentLength ?? 0,
            contentType: output.ContentType ?? "application/octet-stream"
          })
        )
      )

    return ObjectStore.ObjectStore.of({
      presignPut: ({ key, contentType, expiresIn, contentLength }) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          Effect.tryPromise({
            try: () => presigner.put(key, contentType, contentLength, expiresIn, now),
            catch: (error) => toObjectStoreError("presign PUT", key, error)
          })
        ),
      presignGet: ({ key, expiresIn, filename }) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          Effect.tryPromise({
            try: () =>
              presigner.get(
                key,
                filename === undefined ? undefined : Adapter.contentDisposition(filename),
                expiresIn,
                now
              ),
            catch: (error) => toObjectStoreError("presign GET", key, error)
          })
        ),
      head,
      get: (key) =>
        Effect.tryPromise({
          try: async (abortSignal) => {
            const output = await client.send(new GetObjectCommand({ Bucket, Key: key }), { abortSignal })
            return output.Body === undefined ? new Uint8Array(0) : await output.Body.transformToByteArray()
          },
          catch: (error) => toLookupError("GetObject", key, error)
        }),
      // GetObject's headers say the size and type; its body is read only once they are admitted.
      read: (key, options) =>
        Effect.acquireUseRelease(
          Effect.tryPromise({
            try: (abortSignal) => client.send(new GetObjectCommand({ Bucket, Key: key }), { abortSignal }),
            catch: (error) => toLookupError("GetObject", key, error)
          }),
          (output) => {
            const info = {
              size: output.ContentLength ?? 0,
              contentType: output.ContentType ?? "application/octet-stream"
            }
            return Effect.andThen(
              Adapter.admit(key, info, options),
              Effect.tryPromise({
                try: async () => ({
                  info,
                  content: output.Body === undefined ? new Uint8Array(0) : await output.Body.transformToByteArray()
                }),
                catch: (error) => toLookupError("GetObject", key, error)
              })
            )
          },
          // A body left unread would hold its connection: a refused or interrupted read lets it go.
          (output, exit) =>
            Effect.sync(() => {
              if (exit._tag === "Failure") (output.Body as { destroy?: () => void } | undefined)?.destroy?.()
            })
        ),
      put: (key, content, contentType) =>
        Effect.tryPromise({
          try: (abortSignal) =>
            client.send(
              new PutObjectCommand({
                Bucket,
                Key: key,
                Body: content,
                ContentType: contentType,
                ContentLength: content.byteLength
              }),
              { abortSignal }
            ),
          catch: (error) => toObjectStoreError("PutObject", key, error)
        }).pipe(Effect.asVoid),
      // S3 answers 204 to a DELETE of a missing key, so existence is checked first.
      delete: (key) =>
        Effect.flatMap(head(key), () =>
          Effect.tryPromise({
            try: (abortSignal) => client.send(new DeleteObjectCommand({ Bucket, Key: key }), { abortSignal }),
            catch: (error) => toLookupError("DeleteObject", key, error)
          })
        ).pipe(Effect.asVoid)
    })
  })

/** Provides core's `ObjectStore` on the bucket; a client built from options is destroyed with the layer. */
export const layer = (options: Options): Layer.Layer<ObjectStore.ObjectStore, Config.ConfigError> =>
  Layer.effect(ObjectStore.ObjectStore, make(options))

/**
 * As `layer`, with the options read from `Config`:
 * `layerConfig({ bucket: Config.String("S3_BUCKET"), region: Config.String("AWS_REGION") })`.
 */
export const layerConfig = (
  config: Config.Wrap<ConfigOptions>
): Layer.Layer<ObjectStore.ObjectStore, Config.ConfigError> =>
  Layer.effect(ObjectStore.ObjectStore, Effect.flatMap(Config.unwrap(config), make))
