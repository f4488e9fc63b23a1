// The connections the server opens, once each however many parts of the config name them: one per
// Redis URL and one per SQL database, shared by the stores on it and checked by readiness.
import type { MailroomError } from "@mailroom/core"
import type * as EffectConfig from "effect/Config"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Redis from "effect/persistence/Redis"
import * as Redacted from "effect/Redacted"
import * as SqlClient from "effect/sql/SqlClient"
import type * as SqlError from "effect/sql/SqlError"
import type { Config } from "../ServerConfig.js"
import { lazy } from "./lazy.js"
import * as Startup from "./startup.js"

/**
 * One connection layer per Redis URL: a layer is built once per value within one runtime, so the
 * idempotency store and the events queue on the same Redis share one connection.
 */
export const redisConnections = (config: Config) => {
  const connections = new Map<string, Layer.Layer<Redis.Redis, EffectConfig.ConfigError | MailroomError.Unavailable>>()
  const fields = Startup.redisFields(config)
  return (url: string) => {
    let connection = connections.get(url)
    if (connection === undefined) {
      // One that cannot be reached at start-up stops it, naming the config's field (the start-up rule).
      connection = Startup.asDependency(
        fields.get(url) ?? "redis",
        config,
        lazy(async () => (await import("@mailroom/redis")).RedisConnection.layer({ url: Redacted.make(url) }))
      )
      connections.set(url, connection)
    }
    return connection
  }
}

/** Every Redis the config names, once each: readiness pings each of them. */
export const redisUrls = (config: Config): ReadonlyArray<string> => [
  ...new Set([
    ...(config.idempotency.kind === "redis" ? [config.idempotency.url] : []),
    ...(config.events?.queue.kind === "redis" ? [config.events.queue.url] : []),
    ...(config.sending.rateLimit?.store.kind === "redis" ? [config.sending.rateLimit.store.url] : [])
  ])
]

/** A SQL database the config names: a SQLite file or a PostgreSQL URL. */
export type SqlDatabase =
  | { readonly kind: "sqlite"; readonly path: string }
  | { readonly kind: "postgres"; readonly url: string }

/** The connection to a SQL database: the same layer for the same database, so the server opens it once. */
export type SqlConnections = (database: SqlDatabase) => Layer.Layer<SqlClient.SqlClient, SqlError.SqlError>

/** The database of the messages section, if it is one. */
export const messagesDatabase = (messages: Config["messages"]): SqlDatabase | undefined =>
  messages.kind === "memory" ? undefined : messages

/**
 * SQLite in WAL mode with `synchronous = NORMAL`: a commit is durable once the OS has it, so a crash of
 * the process loses nothing, and only a power loss may undo the last commits; `FULL` would fsync every
 * commit, several per send (see the server README's message records section).
 */
const sqlite = (path: string) =>
  lazy(async () => {
    const { SqliteClient } = await import("@mailroom/sqlite")
    const tuned = Layer.effectDiscard(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe("PRAGMA synchronous = NORMAL"))
    )
    return tuned.pipe(Layer.provideMerge(SqliteClient.layer({ filename: path })))
  })

/**
 * One pool per PostgreSQL URL, shared by the organisations, the message log and the suppressions on
 * it; its size is the organisations section's `maxConnections` when that names the same database.
 */
const postgres = (url: string, maxConnections: number | undefined) =>
  lazy(async () =>
    (await import("@effect/sql-pg")).PgClient.layer({
      url: Redacted.make(url),
      applicationName: "mailroom",
      ...(maxConnections === undefined ? {} : { maxConnections })
    })
  )

/**
 * One connection layer per SQL database (a layer is built once per value within one runtime): ask it
 * for `messagesDatabase(config.messages)` to put more tables (a queue) on the message database.
 */
export const sqlConnections = (config: Config): SqlConnections => {
  const connections = new Map<string, Layer.Layer<SqlClient.SqlClient, SqlError.SqlError>>()
  const organizations = config.organizationsSource
  return (database) => {
    const key = database.kind === "sqlite" ? `sqlite:${database.path}` : `postgres:${database.url}`
    let connection = connections.get(key)
    if (connection === undefined) {
      connection =
        database.kind === "sqlite"
          ? sqlite(database.path)
          : postgres(
              database.url,
              organizations.kind === "postgres" && organizations.url === database.url
                ? organizations.maxConnections
                : undefined
            )
      connections.set(key, connection)
    }
    return connection
  }
}
