// The messages section as layers: the message log and the suppression lists (@mailroom/sql on the
// section's database, or memory), with the retention sweep running on the log; the queue of scheduled
// sends on the same database, and its worker's options.
import { type MailroomError, MessageLog, SendQueue, Suppressions } from "@mailroom/core"
import * as Cause from "effect/Cause"
import type * as EffectConfig from "effect/Config"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as SqlClient from "effect/sql/SqlClient"
import * as SqlError from "effect/sql/SqlError"
import { type Config, ServerConfigError } from "../ServerConfig.js"
import { messagesDatabase, type SqlConnections } from "./connections.js"
import { lazy } from "./lazy.js"

type Records = MessageLog.MessageLog | Suppressions.Suppressions

/** Why the database could not be opened, for the field that names it; the URL (and its password) never. */
const openProblem = (messages: Config["messages"], error: SqlError.SqlError): ServerConfigError =>
  new ServerConfigError({
    source: "config",
    problems: [
      messages.kind === "sqlite"
        ? `messages.path: cannot open the SQLite database at ${messages.path}: ${error.message}`
        : `messages.url: cannot connect to PostgreSQL: ${error.message}`
    ]
  })

/**
 * `MessageLog` and `Suppressions` of the messages section, and the sweep that deletes records older
 * than its `retention`. Fails with a ServerConfigError naming the field when the database cannot be
 * opened, or `Unavailable` when its tables cannot be created or updated (it cannot be reached).
 */
export const messagesLayer = (
  messages: Config["messages"],
  sql: SqlConnections
): Layer.Layer<Records, ServerConfigError | EffectConfig.ConfigError | MailroomError.Unavailable> => {
  const database = messagesDatabase(messages)
  let records: Layer.Layer<Records, ServerConfigError | EffectConfig.ConfigError | MailroomError.Unavailable>
  if (database === undefined) {
    records = Layer.merge(MessageLog.layerMemory(), Suppressions.layerMemory())
  } else {
    const connection: Layer.Layer<SqlClient.SqlClient, ServerConfigError> = sql(database).pipe(
      Layer.catchTag("SqlError", (error) =>
        Layer.unwrap(
          Effect.fail(openProblem(messages, error)) as Effect.Effect<
            Layer.Layer<SqlClient.SqlClient>,
            ServerConfigError
          >
        )
      )
    )
    const tables: Layer.Layer<Records, EffectConfig.ConfigError | MailroomError.Unavailable, SqlClient.SqlClient> =
      lazy(async () => {
        const { SqlMessageLog, SqlSuppressions } = await import("@mailroom/sql")
        return Layer.merge(SqlMessageLog.layer(), SqlSuppressions.layer())
      })
    records = tables.pipe(Layer.provide(connection))
  }
  return MessageLog.layerRetention({ retention: messages.retention as Duration.Input }).pipe(
    Layer.provideMerge(records)
  )
}

/**
 * The queue of scheduled sends on the records' database (a table beside them, one connection for
 * both), or in memory with memory records: a restart then forgets the messages and their looks alike.
 */
export const queueLayer = (
  messages: Config["messages"],
  sql: SqlConnections
): Layer.Layer<SendQueue.SendQueue, ServerConfigError> => {
  const database = messagesDatabase(messages)
  if (database === undefined) return SendQueue.layerMemory()
  const { lockExpiration, pollInterval } = messages.queue ?? {}
  return SendQueue.layerSql({
    // The config checked each is a duration Effect reads.
    ...(lockExpiration === undefined ? {} : { lockExpiration: lockExpiration as Duration.Input }),
    ...(pollInterval === undefined ? {} : { pollInterval: pollInterval as Duration.Input })
  }).pipe(
    Layer.provide(sql(database)),
    // The queue's table is created as the layer is built, and a database that cannot be reached then
    // is a defect of SendQueue.layerSql, not a failure: both are named after the field.
    Layer.catchCause((cause) => {
      const error = Cause.squash(cause)
      return Layer.unwrap(
        (SqlError.isSqlError(error)
          ? Effect.fail(openProblem(messages, error))
          : Effect.failCause(cause)) as Effect.Effect<Layer.Layer<SendQueue.SendQueue>, ServerConfigError>
      )
    })
  )
}

/** The worker of scheduled sends, run in every instance. */
export const workerOptions = (messages: Config["messages"]): SendQueue.WorkerOptions =>
  messages.queue?.concurrency === undefined ? {} : { concurrency: messages.queue.concurrency }
