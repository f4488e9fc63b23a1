// The config's `storage` and `provider` sections: each kind's schema (re-exported by ServerConfig, a
// public contract), decoded by kind so a mistake names the kind's own fields, secrets read from the env.
import { Wire } from "@mailroom/core"
import * as Schema from "effect/Schema"
import { type Decoded, decodeKind, nonEmpty, positive, SecretOrEnv, Time, Url } from "./decode.js"
import * as Failover from "./failoverProvider.js"
import * as Smtp from "./smtpProvider.js"

type Env = Readonly<Record<string, string | undefined>>

const Secret = nonEmpty("a secret")

/** Files in a local directory, served with signed URLs (`@mailroom/local`). */
export const LocalStorage = Schema.Struct({
  kind: Schema.Literal("local"),
  dir: nonEmpty("a directory"),
  signingSecret: Secret,
  transferIdleTimeout: Schema.optionalKey(Time),
  maxOpenFiles: Schema.optionalKey(positive("a whole number above 0", true))
})
/** An S3 bucket, or an S3-compatible one at `endpoint` (`@mailroom/s3`). */
export const S3Storage = Schema.Struct({
  kind: Schema.Literal("s3"),
  bucket: nonEmpty("a bucket"),
  region: nonEmpty("a region"),
  endpoint: Schema.optionalKey(Url),
  forcePathStyle: Schema.optionalKey(Schema.Boolean),
  accessKeyId: Schema.optionalKey(Secret),
  secretAccessKey: Schema.optionalKey(Secret)
})
/** A Google Cloud Storage bucket (`@mailroom/gcs`). */
export const GcsStorage = Schema.Struct({
  kind: Schema.Literal("gcs"),
  bucket: nonEmpty("a bucket"),
  projectId: Schema.optionalKey(Schema.String),
  keyFilename: Schema.optionalKey(Schema.String),
  apiEndpoint: Schema.optionalKey(Url)
})

export type StorageConfig = typeof LocalStorage.Type | typeof S3Storage.Type | typeof GcsStorage.Type

/** `.eml` files in a directory, acting out a provider (`@mailroom/local`). */
export const OutboxProvider = Schema.Struct({
  kind: Schema.Literal("outbox"),
  dir: nonEmpty("a directory"),
  sandbox: Schema.optionalKey(
    Schema.Struct({ enabled: Schema.Boolean, verifiedRecipients: Schema.Array(Wire.EmailAddress) })
  ),
  suppressedRecipients: Schema.optionalKey(Schema.Array(Wire.EmailAddress)),
  paused: Schema.optionalKey(Schema.Boolean),
  simulatedDelay: Schema.optionalKey(Time)
})
/** Amazon SES v2 (`@mailroom/ses`). */
export const SesProvider = Schema.Struct({
  kind: Schema.Literal("ses"),
  region: nonEmpty("a region"),
  endpoint: Schema.optionalKey(Url),
  configurationSetName: Schema.optionalKey(nonEmpty("a configuration set name")),
  simulator: Schema.optionalKey(Schema.Boolean),
  accessKeyId: Schema.optionalKey(Secret),
  secretAccessKey: Schema.optionalKey(Secret),
  timeout: Schema.optionalKey(Time)
})
/** Postmark (`@mailroom/postmark`). */
export const PostmarkProvider = Schema.Struct({
  kind: Schema.Literal("postmark"),
  serverToken: Secret,
  requestHost: Schema.optionalKey(Schema.String),
  useHttps: Schema.optionalKey(Schema.Boolean),
  simulator: Schema.optionalKey(Schema.Boolean),
  timeout: Schema.optionalKey(Time)
})

/** Resend, its key in the file or `{"env": NAME}` (`@mailroom/resend`). */
export const ResendProvider = Schema.Struct({
  kind: Schema.Literal("resend"),
  apiKey: SecretOrEnv,
  baseUrl: Schema.optionalKey(Url),
  timeout: Schema.optionalKey(Time)
})

/** The `resend` provider section with its `{"env"}` key read. */
export type ResendProviderConfig = Omit<typeof ResendProvider.Type, "apiKey"> & { readonly apiKey: string }

export type ProviderConfig =
  | typeof OutboxProvider.Type
  | typeof SesProvider.Type
  | typeof PostmarkProvider.Type
  | ResendProviderConfig
  | Smtp.SmtpConfig
  | Failover.FailoverConfig

const storages = { local: LocalStorage, s3: S3Storage, gcs: GcsStorage } as const

const providers = {
  outbox: OutboxProvider,
  ses: SesProvider,
  postmark: PostmarkProvider,
  resend: ResendProvider,
  smtp: Smtp.SmtpProvider
} as const

type SmtpInput = typeof Smtp.SmtpProvider.Type
type ResendInput = typeof ResendProvider.Type

/** The `resend` section with its `{"env": NAME}` key read from the environment. */
const resendSecrets = (
  provider: ResendInput,
  env: Env
): { readonly value: ProviderConfig } | { readonly problems: ReadonlyArray<string> } => {
  if (typeof provider.apiKey === "string") return { value: { ...provider, apiKey: provider.apiKey } }
  const apiKey = env[provider.apiKey.env]
  return apiKey === undefined || apiKey.trim() === ""
    ? { problems: [`provider.apiKey: the environment variable ${provider.apiKey.env} is not set`] }
    : { value: { ...provider, apiKey } }
}

/** The provider section with its `{"env": NAME}` secrets read from the environment. */
const providerSecrets = (
  provider: ProviderConfig | SmtpInput | ResendInput,
  env: Env
): { readonly value: ProviderConfig } | { readonly problems: ReadonlyArray<string> } =>
  provider.kind === "smtp"
    ? Smtp.resolve(provider as SmtpInput, env)
    : provider.kind === "resend"
      ? resendSecrets(provider as ResendInput, env)
      : { value: provider as ProviderConfig }

/** The storage section by kind; undefined with problems when it does not check. */
export const storageSection = (value: unknown) => {
  const storage = decodeKind("storage", value, storages)
  return { value: storage.value as StorageConfig, problems: storage.problems }
}

/** One provider of any kind but failover, at `path` (`provider`, or an entry of a failover), its secrets read. */
const singleProvider = (value: unknown, path: string, env: Env): Decoded<Failover.SingleProvider> => {
  const decoded = decodeKind(path, value, providers)
  if (decoded.value === undefined) return { problems: decoded.problems }
  const read = providerSecrets(decoded.value as ProviderConfig | SmtpInput | ResendInput, env)
  // The secrets' problems name their field under `provider.`; a failover's entry is further in.
  return "value" in read
    ? { value: read.value as Failover.SingleProvider, problems: [] }
    : { problems: read.problems.map((p) => p.replace(/^provider\./, `${path}.`)) }
}

/** The provider section by kind (a failover of others too), its secrets read; undefined with problems when it does not check. */
export const providerSection = (value: unknown, env: Env): Decoded<ProviderConfig> => {
  const kind = typeof value === "object" && value !== null ? (value as { kind?: unknown }).kind : undefined
  if (value !== undefined && (typeof kind !== "string" || !(kind === "failover" || Object.hasOwn(providers, kind)))) {
    return { problems: [`provider.kind: must be one of ${[...Object.keys(providers), "failover"].join(", ")}`] }
  }
  return kind === "failover"
    ? Failover.decode(value, (entry, path) => singleProvider(entry, path, env))
    : singleProvider(value, "provider", env)
}
