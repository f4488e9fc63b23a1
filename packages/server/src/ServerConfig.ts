// The server's config file (DESIGN section 5), a public contract: decoded with Schema, so an unknown
// field, a wrong type or a missing secret stops start-up with a message naming the field.
import { readFile } from "node:fs/promises"
import { dirname, isAbsolute, resolve } from "node:path"
import { Wire } from "@mailroom/core"
import { Duration, Schema } from "effect"
import { ServerConfigError } from "./internal/configError.js"
import {
  type Decoded,
  decodeKind,
  decodeWith,
  nonEmpty,
  positive,
  SecretOrEnv as SecretOrEnvSchema,
  Time,
  Url
} from "./internal/decode.js"
import { Events, type EventsConfig, eventsSection } from "./internal/eventsConfig.js"
import * as Failover from "./internal/failoverProvider.js"
import {
  Metrics,
  type MetricsConfig,
  metricsSection,
  RateLimit,
  type RateLimitConfig,
  rateLimitSection,
  Tracing,
  type TracingConfig,
  tracingSection
} from "./internal/operations.js"
import { hashedSecretProblems } from "./internal/secrets.js"
import * as Smtp from "./internal/smtpProvider.js"
import {
  type IdempotencyConfig,
  idempotencySection,
  LocalIdempotency,
  MemoryIdempotency,
  type QueueConfig,
  RedisIdempotency
} from "./internal/stores.js"
import { Viewer, type ViewerConfig, viewerSection } from "./internal/viewer/config.js"

export { isServerConfigError, ServerConfigError } from "./internal/configError.js"
export { Events, type EventsConfig } from "./internal/eventsConfig.js"

const configError = (source: string, problems: ReadonlyArray<string>) => new ServerConfigError({ source, problems })

export type { IdempotencyConfig, MetricsConfig, QueueConfig, RateLimitConfig, TracingConfig, ViewerConfig }
export { LocalIdempotency, MemoryIdempotency, RedisIdempotency }
export type SecretOrEnv = typeof SecretOrEnvSchema.Type
const SecretOrEnv = SecretOrEnvSchema

const Secret = nonEmpty("a secret")
const Port = Schema.Number.pipe(
  Schema.check(
    Schema.makeFilter((n: number) =>
      Number.isInteger(n) && n >= 0 && n <= 65535 ? undefined : "must be a port number (0-65535)"
    )
  )
)

export const Organization = Schema.Struct({
  id: Schema.String,
  slug: Schema.String,
  verifiedDomains: Schema.optionalKey(Schema.Array(Schema.String)),
  apiKeys: Schema.optionalKey(Schema.Array(Schema.String)),
  accessTokens: Schema.optionalKey(Schema.Array(Schema.String))
})

const PostgresUrl = Schema.String.pipe(
  Schema.check(
    // The URL holds a password: the message never repeats it.
    Schema.makeFilter((s: string) =>
      URL.canParse(s) && /^postgres(ql)?:$/.test(new URL(s).protocol)
        ? undefined
        : "must be a postgres:// or postgresql:// URL"
    )
  )
)

/** Organisations read from PostgreSQL (@mailroom/postgres) instead of this file. */
export const PostgresOrganizations = Schema.Struct({
  kind: Schema.Literal("postgres"),
  /** Default: the DATABASE_URL environment variable, so the file need not hold the password. */
  url: Schema.optionalKey(PostgresUrl),
  cacheSeconds: Schema.optionalKey(
    Schema.Number.pipe(
      Schema.check(Schema.makeFilter((n: number) => (Number.isFinite(n) && n >= 0 ? undefined : "must be 0 or more")))
    )
  ),
  cacheCapacity: Schema.optionalKey(positive("a whole number above 0", true)),
  timeoutSeconds: Schema.optionalKey(positive("a number above 0", false)),
  maxConnections: Schema.optionalKey(positive("a whole number above 0", true))
})

/** Where the organisations come from: this file (`organizations` is a list) or a database. */
export type OrganizationsSource =
  | { readonly kind: "config" }
  | (Omit<typeof PostgresOrganizations.Type, "url"> & { readonly url: string })

export const LocalStorage = Schema.Struct({
  kind: Schema.Literal("local"),
  dir: nonEmpty("a directory"),
  signingSecret: Secret,
  transferIdleTimeout: Schema.optionalKey(Time),
  maxOpenFiles: Schema.optionalKey(positive("a whole number above 0", true))
})
export const S3Storage = Schema.Struct({
  kind: Schema.Literal("s3"),
  bucket: nonEmpty("a bucket"),
  region: nonEmpty("a region"),
  endpoint: Schema.optionalKey(Url),
  forcePathStyle: Schema.optionalKey(Schema.Boolean),
  accessKeyId: Schema.optionalKey(Secret),
  secretAccessKey: Schema.optionalKey(Secret)
})
export const GcsStorage = Schema.Struct({
  kind: Schema.Literal("gcs"),
  bucket: nonEmpty("a bucket"),
  projectId: Schema.optionalKey(Schema.String),
  keyFilename: Schema.optionalKey(Schema.String),
  apiEndpoint: Schema.optionalKey(Url)
})

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
export const PostmarkProvider = Schema.Struct({
  kind: Schema.Literal("postmark"),
  serverToken: Secret,
  requestHost: Schema.optionalKey(Schema.String),
  useHttps: Schema.optionalKey(Schema.Boolean),
  simulator: Schema.optionalKey(Schema.Boolean),
  timeout: Schema.optionalKey(Time)
})

export const ResendProvider = Schema.Struct({
  kind: Schema.Literal("resend"),
  apiKey: SecretOrEnvSchema,
  baseUrl: Schema.optionalKey(Url),
  timeout: Schema.optionalKey(Time)
})

/** The `resend` provider section with its `{"env"}` key read. */
export type ResendProviderConfig = Omit<typeof ResendProvider.Type, "apiKey"> & { readonly apiKey: string }

const storages = { local: LocalStorage, s3: S3Storage, gcs: GcsStorage } as const
export const SmtpProvider = Smtp.SmtpProvider
export type SmtpConfig = Smtp.SmtpConfig

const providers = {
  outbox: OutboxProvider,
  ses: SesProvider,
  postmark: PostmarkProvider,
  resend: ResendProvider,
  smtp: SmtpProvider
} as const

export const ServerConfig = Schema.Struct({
  port: Schema.optionalKey(Port),
  publicUrl: Schema.optionalKey(Url),
  serviceDomain: Schema.String,
  // A list of organisations, or {"kind": "postgres", ...}: decoded below.
  organizations: Schema.Unknown,
  // Decoded by kind below, so a mistake is reported against the kind's own fields.
  storage: Schema.Unknown,
  provider: Schema.Unknown,
  idempotency: Schema.optionalKey(Schema.Unknown),
  events: Schema.optionalKey(Events),
  attachments: Schema.optionalKey(
    Schema.Struct({
      idSecret: Schema.optionalKey(SecretOrEnv),
      requireContentLength: Schema.optionalKey(Schema.Boolean)
    })
  ),
  sending: Schema.optionalKey(
    Schema.Struct({
      attachmentBytesInFlight: Schema.optionalKey(positive("a whole number of bytes above 0", true)),
      attachmentBudgetWait: Schema.optionalKey(Time),
      rateLimit: Schema.optionalKey(RateLimit)
    })
  ),
  metrics: Schema.optionalKey(Metrics),
  tracing: Schema.optionalKey(Tracing),
  shutdownGracePeriod: Schema.optionalKey(Time),
  requestTimeout: Schema.optionalKey(Time),
  viewer: Schema.optionalKey(Viewer)
})

export interface Config {
  /** The file it was read from (`load`), named in start-up errors; absent for a config given as a value. */
  readonly source?: string
  readonly port: number
  readonly publicUrl: string | undefined
  readonly serviceDomain: string
  /** The organisations of the file; empty when they come from elsewhere (`organizationsSource`). */
  readonly organizations: ReadonlyArray<typeof Organization.Type>
  readonly organizationsSource: OrganizationsSource
  readonly storage: typeof LocalStorage.Type | typeof S3Storage.Type | typeof GcsStorage.Type
  readonly provider:
    | typeof OutboxProvider.Type
    | typeof SesProvider.Type
    | typeof PostmarkProvider.Type
    | ResendProviderConfig
    | SmtpConfig
    | Failover.FailoverConfig
  /**
   * Absent from the file: `local` beside local storage (`{storage dir}/../idempotency`), so a restart
   * forgets no key; `memory` when storage is not local.
   */
  readonly idempotency: IdempotencyConfig
  /** Absent when the file has no `events` section: in-process subscribers only, no webhook endpoint. */
  readonly events: EventsConfig | undefined
  /** The key of the tag in attachment ids: `attachments.idSecret`, else local storage's signing secret. */
  readonly attachmentIdSecret: string | undefined
  /** `attachments.requireContentLength`: a presign must declare the size its URL binds. Default false. */
  readonly requireContentLength: boolean
  readonly sending: {
    readonly attachmentBytesInFlight?: number
    readonly attachmentBudgetWait?: string
    /** Absent: sends are not paced (the provider's own 429s are still retried). */
    readonly rateLimit?: RateLimitConfig
  }
  /** Absent: no `GET /metrics`. */
  readonly metrics: MetricsConfig | undefined
  /** Absent: no spans are exported. */
  readonly tracing: TracingConfig | undefined
  /** How long SIGTERM (or `close()`) waits for requests in flight before closing their connections. Default 10 s. */
  readonly shutdownGracePeriod: Duration.Duration
  /** How long a client may take to send a whole request (headers and body). Default 5 minutes. */
  readonly requestTimeout: Duration.Duration
  /**
   * The outbox viewer at `/_mailroom/outbox/`: on with the outbox provider unless `"enabled": false`;
   * served to loopback listeners, or to holders of `token`.
   */
  readonly viewer: ViewerConfig
}

export interface ParseOptions {
  readonly source?: string
  readonly baseDir?: string
  readonly port?: number
  /** Where DATABASE_URL and `{"env": "NAME"}` secrets are read. Default: process.env. */
  readonly env?: Readonly<Record<string, string | undefined>>
}

/**
 * Checks a parsed config. Relative directories are resolved against `baseDir` (the config file's
 * folder); `port` from the environment wins over the file.
 */
export const parse = (input: unknown, options: ParseOptions = {}): Config => {
  const source = options.source ?? "config"
  const top = decodeWith(ServerConfig, input, "")
  const record = (typeof input === "object" && input !== null ? input : {}) as Record<string, unknown>
  const env = options.env ?? process.env
  if (top.problems.length > 0) {
    // The nested sections may still be checkable; report their problems too.
    const more = sections(record, env)
    throw configError(source, [...top.problems, ...more.problems])
  }
  const { storage, provider, organizations, organizationsSource, idempotency, problems } = sections(record, env)
  if (problems.length > 0) throw configError(source, problems)
  const baseDir = options.baseDir ?? process.cwd()
  const at = (dir: string) => (isAbsolute(dir) ? dir : resolve(baseDir, dir))
  // Beside local storage: the keys belong with the data of the instance (or of the instances sharing it).
  const besideStorage = storage.kind === "local" ? resolve(at(storage.dir), "..", "idempotency") : undefined
  const idempotencyConfig: IdempotencyConfig =
    idempotency === undefined
      ? besideStorage === undefined
        ? { kind: "memory" }
        : { kind: "local", dir: besideStorage }
      : idempotency.kind === "local"
        ? {
            kind: "local",
            dir: idempotency.dir === undefined ? (besideStorage ?? at(".mailroom/idempotency")) : at(idempotency.dir)
          }
        : idempotency
  const decoded = top.value as typeof ServerConfig.Type
  const events =
    decoded.events === undefined
      ? undefined
      : eventsSection(decoded.events, organizations, organizationsSource, idempotencyConfig, at, env)
  if (events !== undefined && "problems" in events) throw configError(source, events.problems)
  const { rateLimit: rateLimitInput, ...sending } = decoded.sending ?? {}
  const rateLimit = rateLimitSection(rateLimitInput, provider.kind, idempotencyConfig, env)
  const metrics = metricsSection(decoded.metrics, env)
  const tracing = tracingSection(decoded.tracing)
  const operational = [...rateLimit.problems, ...metrics.problems, ...tracing.problems]
  if (operational.length > 0) throw configError(source, operational)
  const idSecret = decoded.attachments?.idSecret
  let attachmentIdSecret = storage.kind === "local" ? storage.signingSecret : undefined
  if (typeof idSecret === "string") attachmentIdSecret = idSecret
  else if (idSecret !== undefined) {
    attachmentIdSecret = env[idSecret.env]
    if (attachmentIdSecret === undefined || attachmentIdSecret.trim() === "") {
      throw configError(source, [`attachments.idSecret: the environment variable ${idSecret.env} is not set`])
    }
  }
  const credentials = organizations.flatMap((org) => [...(org.apiKeys ?? []), ...(org.accessTokens ?? [])])
  const viewer = viewerSection(decoded.viewer, provider.kind, credentials, env)
  if (viewer.problems.length > 0) throw configError(source, viewer.problems)
  return {
    ...(options.source === undefined ? {} : { source: options.source }),
    port: options.port ?? decoded.port ?? 3000,
    publicUrl: decoded.publicUrl,
    serviceDomain: decoded.serviceDomain,
    organizations,
    organizationsSource,
    storage: storage.kind === "local" ? { ...storage, dir: at(storage.dir) } : storage,
    provider:
      provider.kind === "failover"
        ? Failover.mapProviders(provider, (p) => (p.kind === "outbox" ? { ...p, dir: at(p.dir) } : p))
        : provider.kind === "outbox"
          ? { ...provider, dir: at(provider.dir) }
          : provider,
    idempotency: idempotencyConfig,
    events,
    attachmentIdSecret,
    requireContentLength: decoded.attachments?.requireContentLength ?? false,
    sending: rateLimit.value === undefined ? sending : { ...sending, rateLimit: rateLimit.value },
    metrics: metrics.value,
    tracing: tracing.value,
    shutdownGracePeriod: Duration.fromInputUnsafe((decoded.shutdownGracePeriod ?? "10 seconds") as Duration.Input),
    requestTimeout: Duration.fromInputUnsafe((decoded.requestTimeout ?? "5 minutes") as Duration.Input),
    viewer: viewer.value
  }
}

/** The provider with the secrets it reads from the environment (`{"env": NAME}`) read. */
type SmtpInput = typeof SmtpProvider.Type
type ResendInput = typeof ResendProvider.Type
/** The provider section with its `{"env": NAME}` secrets read from the environment. */
const providerSecrets = (
  provider: Config["provider"] | SmtpInput | ResendInput,
  env: Readonly<Record<string, string | undefined>>
): { readonly value: Config["provider"] } | { readonly problems: ReadonlyArray<string> } =>
  provider.kind === "smtp"
    ? Smtp.resolve(provider as SmtpInput, env)
    : provider.kind === "resend"
      ? resendSecrets(provider as ResendInput, env)
      : { value: provider as Config["provider"] }

/** The organisations: a list in the file, or where to read them from. */
const organizationsSection = (value: unknown, env: Readonly<Record<string, string | undefined>>) => {
  const none = { organizations: [], organizationsSource: { kind: "config" } as OrganizationsSource }
  if (value === undefined) return { ...none, problems: [] }
  if (Array.isArray(value)) {
    const list = decodeWith(Schema.Array(Organization), value, "organizations")
    const malformed = (list.value ?? []).flatMap((org, i) =>
      (["apiKeys", "accessTokens"] as const).flatMap((field) =>
        (org[field] ?? []).flatMap((entry, j) => hashedSecretProblems(entry, `organizations[${i}].${field}[${j}]`))
      )
    )
    return { ...none, organizations: list.value ?? [], problems: [...list.problems, ...malformed] }
  }
  if (typeof value !== "object" || value === null || (value as { kind?: unknown }).kind !== "postgres") {
    return { ...none, problems: ['organizations: must be a list of organizations, or {"kind": "postgres", ...}'] }
  }
  const decoded = decodeWith(PostgresOrganizations, value, "organizations")
  if (decoded.value === undefined) return { ...none, problems: decoded.problems }
  const url = decoded.value.url ?? env.DATABASE_URL
  if (url === undefined || url === "") {
    return { ...none, problems: ["organizations.url: is required, or set the DATABASE_URL environment variable"] }
  }
  const checked = decodeWith(PostgresUrl, url, "")
  if (checked.problems.length > 0) {
    return { ...none, problems: ["DATABASE_URL: must be a postgres:// or postgresql:// URL"] }
  }
  return { ...none, organizationsSource: { ...decoded.value, url }, problems: [] }
}

/** The `resend` section with its `{"env": NAME}` key read from the environment. */
const resendSecrets = (
  provider: Omit<ResendProviderConfig, "apiKey"> & { readonly apiKey: SecretOrEnv },
  env: Readonly<Record<string, string | undefined>>
): { readonly value: Config["provider"] } | { readonly problems: ReadonlyArray<string> } => {
  if (typeof provider.apiKey === "string") return { value: { ...provider, apiKey: provider.apiKey } }
  const apiKey = env[provider.apiKey.env]
  return apiKey === undefined || apiKey.trim() === ""
    ? { problems: [`provider.apiKey: the environment variable ${provider.apiKey.env} is not set`] }
    : { value: { ...provider, apiKey } }
}

/** One provider of any kind but failover, at `path` (`provider`, or an entry of a failover), its secrets read. */
const singleProvider = (
  value: unknown,
  path: string,
  env: Readonly<Record<string, string | undefined>>
): Decoded<Failover.SingleProvider> => {
  const decoded = decodeKind(path, value, providers)
  if (decoded.value === undefined) return { problems: decoded.problems }
  const read = providerSecrets(decoded.value as Config["provider"] | SmtpInput | ResendInput, env)
  // The secrets' problems name their field under `provider.`; a failover's entry is further in.
  return "value" in read
    ? { value: read.value as Failover.SingleProvider, problems: [] }
    : { problems: read.problems.map((p) => p.replace(/^provider\./, `${path}.`)) }
}

const providerSection = (value: unknown, env: Readonly<Record<string, string | undefined>>) => {
  const kind = typeof value === "object" && value !== null ? (value as { kind?: unknown }).kind : undefined
  if (value !== undefined && (typeof kind !== "string" || !(kind === "failover" || Object.hasOwn(providers, kind)))) {
    return { problems: [`provider.kind: must be one of ${[...Object.keys(providers), "failover"].join(", ")}`] }
  }
  return kind === "failover"
    ? Failover.decode(value, (entry, path) => singleProvider(entry, path, env))
    : singleProvider(value, "provider", env)
}

const sections = (record: Record<string, unknown>, env: Readonly<Record<string, string | undefined>>) => {
  const storage = decodeKind("storage", record.storage, storages)
  const provider = providerSection(record.provider, env)
  const organizations = organizationsSection(record.organizations, env)
  const idempotency = idempotencySection(record.idempotency, env)
  return {
    storage: storage.value as Config["storage"],
    provider: provider.value as Config["provider"],
    organizations: organizations.organizations as Config["organizations"],
    organizationsSource: organizations.organizationsSource,
    idempotency: idempotency.value,
    problems: [...organizations.problems, ...storage.problems, ...provider.problems, ...idempotency.problems]
  }
}

/** Reads and checks the config file at `path`. */
export const load = async (path: string, options: Omit<ParseOptions, "source" | "baseDir"> = {}): Promise<Config> => {
  let text: string
  try {
    text = await readFile(path, "utf8")
  } catch (cause) {
    throw configError(path, [`cannot be read: ${(cause as Error).message}`])
  }
  let input: unknown
  try {
    input = JSON.parse(text)
  } catch (cause) {
    throw configError(path, [`is not valid JSON: ${(cause as Error).message}`])
  }
  return parse(input, { source: path, baseDir: dirname(resolve(path)), ...options })
}
