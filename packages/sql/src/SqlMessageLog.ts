// core's MessageLog on SQL (SQLite or PostgreSQL, one schema, through Effect's SqlClient): every state
// change a locked read-modify-write applying core's own rules, so this log and the memory one agree.
import { type MailroomError, MessageLog } from "@mailroom/core"
import * as Adapter from "@mailroom/core/adapter"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as SqlClient from "effect/sql/SqlClient"
import * as Changes from "./internal/changes.js"
import { type Database, type Options as DatabaseOptions, open } from "./internal/database.js"
import { afterOf, keyOf, pageQuery } from "./internal/list.js"
import * as Purge from "./internal/purge.js"
import { columns, eventsOf, type MessageRow, recordsOf } from "./internal/records.js"
import * as Waiting from "./internal/waiting.js"

/** What `layerConfig` reads: the deadline of each operation. The client always comes from the context. */
export interface ConfigOptions extends DatabaseOptions {}

/** What `make` and `layer` take: the same. */
export type Options = ConfigOptions

/** The record with its history, if `organizationId` has it. */
const find = ({ sql, run, execute }: Database, organizationId: string, id: string) =>
  run(
    "reading the message",
    Effect.gen(function* () {
      const rows = yield* sql<MessageRow>`SELECT ${sql.literal(columns("m"))} FROM mailroom_messages m
        WHERE m.id = ${id} AND m.organization_id = ${organizationId}`
      const [record] = yield* recordsOf(execute, rows)
      if (record === undefined) return undefined
      return { ...record, events: yield* eventsOf(sql, id) }
    })
  )

/** A page, newest first, and the cursor after it. */
const list = ({ sql, run, execute }: Database, organizationId: string, query: MessageLog.ListQuery) =>
  Effect.flatMap(Adapter.decodeCursor(query.cursor, 2), (key) =>
    run(
      "listing messages",
      Effect.gen(function* () {
        const rows = yield* pageQuery(sql, organizationId, query, afterOf(key))
        const page = rows.slice(0, query.limit)
        const last = page[page.length - 1]
        return {
          data: yield* recordsOf(execute, page),
          next_cursor: rows.length > query.limit && last !== undefined ? Adapter.encodeCursor(keyOf(last)) : null
        }
      })
    )
  )

/** The message a provider knows by its own id. */
const resolve = ({ sql, run }: Database, provider: string, providerMessageId: string) =>
  run(
    "finding the message of an event",
    Effect.map(
      sql<{ readonly id: string; readonly organization_id: string }>`SELECT id, organization_id
        FROM mailroom_messages WHERE provider_message_id = ${providerMessageId} AND provider = ${provider}
        LIMIT 1`,
      (rows) => (rows[0] === undefined ? undefined : { id: rows[0].id, organizationId: rows[0].organization_id })
    )
  )

const build = (db: Database): MessageLog.MessageLog =>
  MessageLog.MessageLog.of({
    accept: (message) => Changes.accept(db, message),
    settle: (id, outcome) => Changes.settle(db, id, outcome),
    abandon: (id, reason) => Changes.abandon(db, id, reason),
    apply: (event) => Effect.map(Changes.applyAll(db, [event]), (applied) => applied[0] as MessageLog.Applied),
    applyAll: (events) => Changes.applyAll(db, events),
    find: (organizationId, id) => find(db, organizationId, id),
    list: (organizationId, query) => list(db, organizationId, query),
    resolve: (provider, providerMessageId) => resolve(db, provider, providerMessageId),
    claim: (id, at) => Changes.claim(db, id, at),
    cancel: (organizationId, id) => Changes.cancel(db, organizationId, id),
    reschedule: (organizationId, id, scheduledAt) => Changes.reschedule(db, organizationId, id, scheduledAt),
    release: (id) => Changes.release(db, id),
    due: (before, limit) => Waiting.due(db, before, limit),
    stalled: (before, limit) => Waiting.stalled(db, before, limit),
    backlog: (now) => Waiting.backlog(db, now),
    purge: (before) => Purge.purge(db, before),
    // The SQLite client's group commit: a send's events and outcome, begun together, share a commit.
    sharesCommits: db.sharesCommits
  })

/**
 * The log on the `SqlClient` in context (`@effect/sql-pg`'s `PgClient`, `@mailroom/sqlite`'s
 * `SqliteClient`), its tables created or brought up to date first (`SqlMigrations`). Fails with a
 * `ConfigError` naming `timeout` when it is not a duration above zero (checked before the database is
 * touched), or `Unavailable` when the schema cannot be brought up to date.
 */
export const make = (
  options: Options = {}
): Effect.Effect<MessageLog.MessageLog, Config.ConfigError | MailroomError.Unavailable, SqlClient.SqlClient> =>
  Effect.map(open(options), build)

/** Provides core's `MessageLog` on the `SqlClient` your application provides. */
export const layer = (
  options: Options = {}
): Layer.Layer<MessageLog.MessageLog, Config.ConfigError | MailroomError.Unavailable, SqlClient.SqlClient> =>
  Layer.effect(MessageLog.MessageLog, make(options))

/** As `layer`, with the options read from `Config`, e.g. `layerConfig({ timeout: Config.Duration("DB_TIMEOUT") })`. */
export const layerConfig = (
  config: Config.Wrap<ConfigOptions>
): Layer.Layer<MessageLog.MessageLog, Config.ConfigError | MailroomError.Unavailable, SqlClient.SqlClient> =>
  Layer.effect(MessageLog.MessageLog, Effect.flatMap(Config.unwrap(config), make))
