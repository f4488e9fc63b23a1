// Where Idempotency-Keys and queued events live (the idempotency section and events.queue): decoded by
// kind, with Redis URLs read from the file or the environment and never repeated in a message.
import * as Schema from "effect/Schema"
import { type Decoded, Dir, decodeKind, decodeWith, nonEmpty } from "./decode.js"

const RedisUrl = Schema.String.pipe(
  Schema.check(
    // The URL may hold a password: the message never repeats it.
    Schema.makeFilter((s: string) =>
      URL.canParse(s) && /^rediss?:$/.test(new URL(s).protocol) ? undefined : "must be a redis:// or rediss:// URL"
    )
  )
)
const RedisUrlSetting = Schema.Union([RedisUrl, Schema.Struct({ env: nonEmpty("an environment variable name") })])

/** Idempotency records in memory: one process, forgotten on restart. */
export const MemoryIdempotency = Schema.Struct({ kind: Schema.Literal("memory") })
/** Idempotency records in files under `dir`: one machine, kept across restarts. */
export const LocalIdempotency = Schema.Struct({ kind: Schema.Literal("local"), dir: Schema.optionalKey(Dir) })
/** Idempotency records in Redis: shared by a fleet. */
export const RedisIdempotency = Schema.Struct({
  kind: Schema.Literal("redis"),
  /** Default: the REDIS_URL environment variable, so the file need not hold the password. */
  url: Schema.optionalKey(RedisUrlSetting),
  prefix: Schema.optionalKey(nonEmpty("a key prefix"))
})

/** The idempotency section with its default filled, its directory resolved and its URL read. */
export type IdempotencyConfig =
  | { readonly kind: "memory" }
  | { readonly kind: "local"; readonly dir: string }
  | { readonly kind: "redis"; readonly url: string; readonly prefix?: string }

export const LocalQueue = Schema.Struct({ kind: Schema.Literal("local"), dir: Dir })
export const MemoryQueue = Schema.Struct({ kind: Schema.Literal("memory") })
export const RedisQueue = Schema.Struct({
  kind: Schema.Literal("redis"),
  /** Default: the idempotency section's Redis when it has one, else the REDIS_URL environment variable. */
  url: Schema.optionalKey(RedisUrlSetting),
  prefix: Schema.optionalKey(nonEmpty("a key prefix"))
})

/** events.queue with its directory resolved and its URL read. */
export type QueueConfig =
  | { readonly kind: "local"; readonly dir: string }
  | { readonly kind: "memory" }
  | { readonly kind: "redis"; readonly url: string; readonly prefix?: string }

type Env = Readonly<Record<string, string | undefined>>

/** A Redis URL written in the file, read from the variable it names, or else `fallback`, else REDIS_URL. */
export const redisUrl = (
  setting: typeof RedisUrlSetting.Type | undefined,
  path: string,
  env: Env,
  fallback?: string
): Decoded<string> => {
  if (setting === undefined && fallback !== undefined) return { value: fallback, problems: [] }
  const variable = typeof setting === "object" ? setting.env : "REDIS_URL"
  const url = typeof setting === "string" ? setting : env[variable]
  if (url === undefined || url.trim() === "") {
    return {
      problems: [
        typeof setting === "object"
          ? `${path}: the environment variable ${variable} is not set`
          : `${path}: is required, or set the REDIS_URL environment variable`
      ]
    }
  }
  if (decodeWith(RedisUrl, url, "").problems.length > 0) {
    return { problems: [`${typeof setting === "string" ? path : variable}: must be a redis:// or rediss:// URL`] }
  }
  return { value: url, problems: [] }
}

const withPrefix = (prefix: string | undefined) => (prefix === undefined ? {} : { prefix })

/** The idempotency section: its kind's fields, and for redis the URL. A local `dir` is resolved by the caller. */
export const idempotencySection = (
  value: unknown,
  env: Env
): Decoded<typeof LocalIdempotency.Type | IdempotencyConfig> => {
  const decoded = decodeKind("idempotency", value, {
    memory: MemoryIdempotency,
    local: LocalIdempotency,
    redis: RedisIdempotency
  })
  const section = decoded.value as
    | typeof MemoryIdempotency.Type
    | typeof LocalIdempotency.Type
    | typeof RedisIdempotency.Type
    | undefined
  if (section?.kind !== "redis") return { value: section, problems: decoded.problems }
  const url = redisUrl(section.url, "idempotency.url", env)
  if (url.value === undefined) return { problems: url.problems }
  return { value: { kind: "redis", url: url.value, ...withPrefix(section.prefix) }, problems: [] }
}

/**
 * events.queue: on disk by default; on Redis, the idempotency section's Redis unless the queue names
 * its own, so one Redis serves both (and the server opens one connection to it).
 */
export const queueSection = (
  value: unknown,
  idempotency: IdempotencyConfig | undefined,
  at: (dir: string) => string,
  env: Env
): Decoded<QueueConfig> => {
  const decoded = decodeKind("events.queue", value ?? { kind: "local", dir: ".mailroom/events" }, {
    local: LocalQueue,
    memory: MemoryQueue,
    redis: RedisQueue
  })
  const section = decoded.value as typeof LocalQueue.Type | typeof MemoryQueue.Type | typeof RedisQueue.Type | undefined
  switch (section?.kind) {
    case undefined:
    case "memory":
      return { value: section, problems: decoded.problems }
    case "local":
      return { value: { kind: "local", dir: at(section.dir) }, problems: [] }
    case "redis": {
      const shared = idempotency?.kind === "redis" ? idempotency.url : undefined
      const url = redisUrl(section.url, "events.queue.url", env, shared)
      if (url.value === undefined) return { problems: url.problems }
      return { value: { kind: "redis", url: url.value, ...withPrefix(section.prefix) }, problems: [] }
    }
  }
}
