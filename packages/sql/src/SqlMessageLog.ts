// core's MessageLog on SQL (SQLite or PostgreSQL, one schema, through Effect's SqlClient): every state
// change a locked read-modify-write applying core's own rules, so this log and the memory one agree.
import { type MailroomError, MessageLog, Suppressions } from "@mailroom/core"
import * as Adapter from "@mailroom/core/adapter"
import { Config, Effect, Layer } from "effect"
import type { SqlClient, SqlError } from "effect/sql"
import { type Database, type Options as DatabaseOptions, now, open } from "./internal/database.js"
import { afterOf, keyOf, pageQuery } from "./internal/list.js"
import {
  columns,
  eventRow,
  eventsOf,
  isLatest,
  type MessageRow,
  recipientsOf,
  recordOf,
  recordsOf,
  tagsOf,
  writeRecipients
} from "./internal/records.js"

export interface Options extends DatabaseOptions {}

/** Old records are deleted this many at a time, each batch its own short transaction. */
const purgeBatch = 500

const build = ({ sql, forUpdate, transaction, run }: Database): MessageLog.MessageLog => {
  /** The message's row, locked until the transaction ends (PostgreSQL; SQLite's whole database is). */
  const lock = (id: string) =>
    Effect.map(
      sql<MessageRow>`SELECT ${sql.literal(columns("m"))} FROM mailroom_messages m WHERE m.id = ${id}${forUpdate}`,
      (rows) => rows[0]
    )

  const notFound: MessageLog.ChangeRefused = { _tag: "NotFound" }
  const changeScheduled = (
    operation: string,
    organizationId: string,
    id: string,
    change: (row: MessageRow, at: string) => Effect.Effect<unknown, SqlError.SqlError>
  ) =>
    run(
      operation,
      Effect.flatMap(now, (at) =>
        transaction(
          Effect.gen(function* () {
            const row = yield* lock(id)
            if (row === undefined || row.organization_id !== organizationId) return notFound
            if (row.status !== "scheduled") return { _tag: "NotScheduled", status: row.status } as const
            yield* change(row, at)
            return undefined
          })
        )
      )
    )

  /** Moves the recipients in `from` to `to` (claim, cancel), and the message's status with them. */
  const moveScheduled = (id: string, from: MessageLog.State, to: MessageLog.State, at: string, dropRequest: boolean) =>
    Effect.gen(function* () {
      const before = yield* recipientsOf(sql, id)
      const after = before.map((r) => (r.state === from ? { ...r, state: to, updated_at: at } : r))
      yield* writeRecipients(sql, id, before, after)
      const status = MessageLog.statusOf(after)
      yield* dropRequest
        ? sql`UPDATE mailroom_messages SET status = ${status}, request = NULL WHERE id = ${id}`
        : sql`UPDATE mailroom_messages SET status = ${status} WHERE id = ${id}`
      return { after, status }
    })

  return MessageLog.MessageLog.of({
    accept: (message) =>
      run(
        "recording the message",
        transaction(
          Effect.gen(function* () {
            const recipients = message.recipients.map((r) => ({ state: r.state }))
            const common = { organization_id: message.organizationId, created_at: message.createdAt }
            yield* sql`INSERT INTO mailroom_messages ${sql.insert({
              id: message.id,
              ...common,
              status: MessageLog.statusOf(recipients),
              from_address: message.from,
              from_name: message.fromName ?? null,
              subject: message.subject,
              attachments: JSON.stringify(message.attachments),
              html_bytes: message.htmlBytes,
              text_bytes: message.textBytes,
              idempotency_key: message.idempotencyKey ?? null,
              scheduled_at: message.scheduledAt ?? null,
              request: message.request ?? null
            })}`
            const [first, ...rest] = message.recipients.map((r, position) => ({
              message_id: message.id,
              position,
              ...common,
              email: r.email,
              address: Suppressions.normalize(r.email),
              kind: r.kind,
              state: r.state,
              updated_at: message.createdAt
            }))
            if (first !== undefined) yield* sql`INSERT INTO mailroom_message_recipients ${sql.insert([first, ...rest])}`
            const [firstTag, ...restTags] = message.tags.map((tag, position) => ({
              message_id: message.id,
              position,
              ...common,
              name: tag.name,
              value: tag.value
            }))
            if (firstTag !== undefined)
              yield* sql`INSERT INTO mailroom_message_tags ${sql.insert([firstTag, ...restTags])}`
          })
        )
      ),

    settle: (id, outcome) =>
      run(
        "recording the provider's answer",
        Effect.flatMap(now, (at) =>
          transaction(
            Effect.gen(function* () {
              if ((yield* lock(id)) === undefined) return
              const before = yield* recipientsOf(sql, id)
              const after = before.map((r) => {
                const to = MessageLog.settled(r.state, outcome)
                return to === undefined ? r : { ...r, state: to, updated_at: at }
              })
              yield* writeRecipients(sql, id, before, after)
              const sent = outcome._tag === "Sent"
              yield* sql`UPDATE mailroom_messages SET status = ${MessageLog.statusOf(after)},
                provider = ${outcome.provider}, provider_message_id = ${sent ? outcome.providerMessageId : null},
                reason = ${sent ? null : outcome.reason}, request = NULL WHERE id = ${id}`
            })
          )
        )
      ),

    apply: (event) =>
      run(
        "recording a delivery event",
        transaction(
          Effect.gen(function* () {
            const row = yield* lock(event.message_id)
            if (row === undefined || row.organization_id !== event.organization_id) {
              return { applied: false, tags: [] }
            }
            const tags = yield* tagsOf(sql, row.id)
            const position = Number(row.event_count)
            const inserted = yield* sql`INSERT INTO mailroom_message_events
              ${sql.insert(eventRow(Adapter.timelineOf(event), row.id, position))}
              ON CONFLICT (id) DO NOTHING RETURNING id`
            if (inserted.length === 0) return { applied: false, tags }
            const before = yield* recipientsOf(sql, row.id)
            const after = Adapter.afterEvent(before, event) ?? before
            yield* writeRecipients(sql, row.id, before, after)
            const status = MessageLog.statusOf(after)
            yield* isLatest(row, event)
              ? sql`UPDATE mailroom_messages SET status = ${status}, event_count = ${position + 1},
                  last_event_type = ${event.type}, last_event_at = ${event.occurred_at} WHERE id = ${row.id}`
              : sql`UPDATE mailroom_messages SET status = ${status}, event_count = ${position + 1} WHERE id = ${row.id}`
            return { applied: true, tags }
          })
        )
      ),

    find: (organizationId, id) =>
      run(
        "reading the message",
        Effect.gen(function* () {
          const rows = yield* sql<MessageRow>`SELECT ${sql.literal(columns("m"))} FROM mailroom_messages m
            WHERE m.id = ${id} AND m.organization_id = ${organizationId}`
          const [record] = yield* recordsOf(sql, rows)
          if (record === undefined) return undefined
          return { ...record, events: yield* eventsOf(sql, id) }
        })
      ),

    list: (organizationId, query) =>
      Effect.flatMap(Adapter.decodeCursor(query.cursor, 2), (key) =>
        run(
          "listing messages",
          Effect.gen(function* () {
            const rows = yield* pageQuery(sql, organizationId, query, afterOf(key))
            const page = rows.slice(0, query.limit)
            const last = page[page.length - 1]
            return {
              data: yield* recordsOf(sql, page),
              next_cursor: rows.length > query.limit && last !== undefined ? Adapter.encodeCursor(keyOf(last)) : null
            }
          })
        )
      ),

    resolve: (provider, providerMessageId) =>
      run(
        "finding the message of an event",
        Effect.map(
          sql<{ readonly id: string; readonly organization_id: string }>`SELECT id, organization_id
            FROM mailroom_messages WHERE provider_message_id = ${providerMessageId} AND provider = ${provider}
            LIMIT 1`,
          (rows) => (rows[0] === undefined ? undefined : { id: rows[0].id, organizationId: rows[0].organization_id })
        )
      ),

    claim: (id, at) =>
      run(
        "claiming a scheduled message",
        transaction(
          Effect.gen(function* () {
            const row = yield* lock(id)
            if (row === undefined || row.status !== "scheduled" || row.scheduled_at === null || row.scheduled_at > at) {
              return undefined
            }
            const [stored] = yield* sql<{ readonly request: string | null }>`SELECT request
              FROM mailroom_messages WHERE id = ${id}`
            const request = stored?.request ?? null
            if (request === null) return undefined
            const { after, status } = yield* moveScheduled(id, "scheduled", "sending", at, false)
            return { record: recordOf({ ...row, status }, after, yield* tagsOf(sql, id)), request }
          })
        )
      ),

    cancel: (organizationId, id) =>
      changeScheduled("cancelling the message", organizationId, id, (row, at) =>
        moveScheduled(row.id, "scheduled", "cancelled", at, true)
      ),

    reschedule: (organizationId, id, scheduledAt) =>
      changeScheduled(
        "rescheduling the message",
        organizationId,
        id,
        (row) => sql`UPDATE mailroom_messages SET scheduled_at = ${scheduledAt} WHERE id = ${row.id}`
      ),

    purge: (before) => {
      const batch = transaction(
        Effect.gen(function* () {
          const rows = yield* sql<{ readonly id: string }>`SELECT id FROM mailroom_messages
            WHERE created_at < ${before} ORDER BY created_at LIMIT ${purgeBatch}${forUpdate}`
          const ids = rows.map((row) => row.id)
          if (ids.length === 0) return 0
          // Children first: on SQLite the foreign keys' cascade only runs where the client turned it on.
          for (const table of ["mailroom_message_events", "mailroom_message_tags", "mailroom_message_recipients"]) {
            yield* sql`DELETE FROM ${sql.literal(table)} WHERE message_id IN ${sql.in(ids)}`
          }
          yield* sql`DELETE FROM mailroom_messages WHERE id IN ${sql.in(ids)}`
          return ids.length
        })
      )
      const loop = (purged: number): Effect.Effect<number, MailroomError.Unavailable> =>
        Effect.flatMap(run("deleting old messages", batch), (deleted) =>
          deleted < purgeBatch ? Effect.succeed(purged + deleted) : loop(purged + deleted)
        )
      return loop(0)
    }
  })
}

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
  config: Config.Wrap<Options>
): Layer.Layer<MessageLog.MessageLog, Config.ConfigError | MailroomError.Unavailable, SqlClient.SqlClient> =>
  Layer.effect(MessageLog.MessageLog, Effect.flatMap(Config.unwrap(config), make))
