// The server's config file (DESIGN section 5), a public contract: decoded with Schema, so an unknown
// field, a wrong type or a missing secret stops start-up with a message naming the field.
import { readFile } from "node:fs/promises"
import { dirname, isAbsolute, resolve } from "node:path"
import * as Duration from "effect/Duration"
import * as Schema from "effect/Schema"
import { type ProviderConfig, providerSection, type StorageConfig, storageSection } from "./internal/adapterConfig.js"
import { ServerConfigError } from "./internal/configError.js"
import {
  databaseUrl,
  decodeWith,
  PostgresUrl,
  positive,
  SecretOrEnv as SecretOrEnvSchema,
  Time,
  TimerTime,
  Url
} from "./internal/decode.js"
import { Events, type EventsConfig, eventsSection } from "./internal/eventsConfig.js"
import * as Failover from "./internal/failoverProvider.js"
import {
  MemoryMessages,
  type MessagesConfig,
  messagesSection,
  PostgresMessages,
  SqliteMessages
} from "./internal/messagesConfig.js"
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

export {
  GcsStorage,
  LocalStorage,
  OutboxProvider,
  PostmarkProvider,
  ResendProvider,
  type ResendProviderConfig,
  S3Storage,
  SesProvider
} from "./internal/adapterConfig.js"
export { isServerConfigError, ServerConfigError } from "./internal/configError.js"
export { Events, type EventsConfig } from "./internal/eventsConfig.js"

const configError = (source: string, problems: ReadonlyArray<string>) => new ServerConfigError({ source, problems })

export type {
  IdempotencyConfig,
  MessagesConfig,
  MetricsConfig,
  QueueConfig,
  RateLimitConfig,
  TracingConfig,
  ViewerConfig
}
export { LocalIdempotency, MemoryIdempotency, MemoryMessages, PostgresMessages, RedisIdempotency, SqliteMessages }
/** A secret as the file gives it: the value, or `{"env": "NAME"}`. */
export type SecretOrEnv = typeof SecretOrEnvSchema.Type
const SecretOrEnv = SecretOrEnvSchema
/** The `provider` section of `kind: "smtp"`: an SMTP relay, with DKIM if given. */
export const SmtpProvider = Smtp.SmtpProvider
/** The SMTP section with its secrets read. */
export type SmtpConfig = Smtp.SmtpConfig

const Port = Schema.Number.pipe(
  Schema.check(
    Schema.makeFilter((n: number) =>
      Number.isInteger(n) && n >= 0 && n <= 65535 ? undefined : "must be a port number (0-65535)"
    )
  )
)

/** One organisation of the file: its id, slug, verified domains, API keys and access tokens. */
export const Organization = Schema.Struct({
  id: Schema.String,
  slug: Schema.String,
  verifiedDomains: Schema.optionalKey(Schema.Array(Schema.String)),
  apiKeys: Schema.optionalKey(Schema.Array(Schema.String)),
  accessTokens: Schema.optionalKey(Schema.Array(Schema.String))
})

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

/** The file's top-level settings (port, URLs, organisations, metrics, tracing, timeouts, viewer); the other sections are decoded on their own. */
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
  messages: Schema.optionalKey(Schema.Unknown),
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
  shutdownGracePeriod: Schema.optionalKey(TimerTime),
  requestTimeout: Schema.optionalKey(TimerTime),
  viewer: Schema.optionalKey(Viewer)
})

/** The config as the server uses it: every section decoded, defaults applied, secrets read. */
export interface Config {
  /** The file it was read from (`load`), named in start-up errors; absent for a config given as a value. */
  readonly source?: string
  readonly port: number
  readonly publicUrl: string | undefined
  readonly serviceDomain: string
  /** The organisations of the file; empty when they come from elsewhere (`organizationsSource`). */
  readonly organizations: ReadonlyArray<typeof Organization.Type>
  readonly organizationsSource: OrganizationsSource
  readonly storage: StorageConfig
  readonly provider: ProviderConfig
  /**
   * Absent from the file: `local` beside local storage (`{storage dir}/../idempotency`), so a restart
   * forgets no key; `memory` when storage is not local.
   */
  readonly idempotency: IdempotencyConfig
  /**
   * Where message records and suppressions live. Absent from the file: `sqlite` at `mailroom.db` beside
   * the local store's directory, or at `.mailroom/mailroom.db` beside the config file with S3 or GCS.
   */
  readonly messages: MessagesConfig
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

/** Where a config came from (named in errors), the directory its paths are relative to, and the environment. */
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
  const messages = messagesSection(record.messages, storage.kind === "local" ? at(storage.dir) : undefined, at, env)
  if (messages.value === undefined) throw configError(source, messages.problems)
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
    messages: messages.value,
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
  const url = databaseUrl(decoded.value.url, "organizations.url", env)
  if (url.value === undefined) return { ...none, problems: url.problems }
  return { ...none, organizationsSource: { ...decoded.value, url: url.value }, problems: [] }
}

const sections = (record: Record<string, unknown>, env: Readonly<Record<string, string | undefined>>) => {
  const storage = storageSection(record.storage)
  const provider = providerSection(record.provider, env)
  const organizations = organizationsSection(record.organizations, env)
  const idempotency = idempotencySection(record.idempotency, env)
  return {
    storage: storage.value,
    provider: provider.value as ProviderConfig,
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
  // An editor's byte-order mark is not JSON, and it is invisible in the error it would cause.
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1)
  try {
    input = JSON.parse(text)
  } catch (cause) {
    const comments = /^\s*(\/\/|\/\*)/m.test(text) ? " (JSON has no comments: remove them)" : ""
    throw configError(path, [`is not valid JSON: ${(cause as Error).message}${comments}`])
  }
  return parse(input, { source: path, baseDir: dirname(resolve(path)), ...options })
}
