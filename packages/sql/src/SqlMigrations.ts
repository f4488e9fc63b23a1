// The tables of SqlMessageLog and SqlSuppressions, one schema on SQLite and PostgreSQL, and the runner
// that brings a database up to date (both layers run it when built), recorded in its own table.
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Migrator from "effect/sql/Migrator"
import * as SqlClient from "effect/sql/SqlClient"
import type * as SqlError from "effect/sql/SqlError"

/**
 * Where applied migrations are recorded: neither Effect's default `effect_sql_migrations` nor
 * `@mailroom/postgres`'s `mailroom_migrations`, so each keeps its own history in a shared database.
 */
export const table = "mailroom_sql_migrations"

/**
 * The schema, one statement each, for a column type of sortable text: PostgreSQL's is `COLLATE "C"`,
 * so that ids, times and addresses sort by their bytes (as SQLite and JavaScript sort them) whatever
 * the database's locale, and compare as fast as bytes do.
 */
const messages = (key: string): ReadonlyArray<string> => [
  `CREATE TABLE mailroom_messages (
    id ${key} PRIMARY KEY,
    organization_id ${key} NOT NULL,
    created_at ${key} NOT NULL,
    status ${key} NOT NULL,
    from_address TEXT NOT NULL,
    from_name TEXT,
    subject TEXT NOT NULL,
    attachments TEXT NOT NULL,
    html_bytes INTEGER NOT NULL,
    text_bytes INTEGER NOT NULL,
    provider ${key},
    provider_message_id ${key},
    idempotency_key TEXT,
    scheduled_at TEXT,
    request TEXT,
    last_event_type TEXT,
    last_event_at TEXT,
    reason TEXT,
    event_count INTEGER NOT NULL DEFAULT 0
  )`,
  // GET /emails, newest first, with and without `since`/`until`; then by status; purge by age alone.
  "CREATE INDEX mailroom_messages_by_time ON mailroom_messages (organization_id, created_at, id)",
  "CREATE INDEX mailroom_messages_by_status ON mailroom_messages (organization_id, status, created_at, id)",
  "CREATE INDEX mailroom_messages_by_age ON mailroom_messages (created_at)",
  `CREATE INDEX mailroom_messages_by_provider_id ON mailroom_messages (provider_message_id, provider)
    WHERE provider_message_id IS NOT NULL`,
  ...recipients(key)
]

/** The tables of each message's recipients, tags and events, which go with it when it is purged. */
const recipients = (key: string): ReadonlyArray<string> => [
  // `organization_id` and `created_at` are the message's, copied so that the `to` and `tag` filters
  // read one index in list order.
  `CREATE TABLE mailroom_message_recipients (
    message_id ${key} NOT NULL REFERENCES mailroom_messages (id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    organization_id ${key} NOT NULL,
    created_at ${key} NOT NULL,
    email TEXT NOT NULL,
    address ${key} NOT NULL,
    kind TEXT NOT NULL,
    state TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    detail TEXT,
    PRIMARY KEY (message_id, position)
  )`,
  `CREATE INDEX mailroom_message_recipients_by_address
    ON mailroom_message_recipients (organization_id, address, created_at, message_id)`,
  `CREATE TABLE mailroom_message_tags (
    message_id ${key} NOT NULL REFERENCES mailroom_messages (id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    organization_id ${key} NOT NULL,
    created_at ${key} NOT NULL,
    name ${key} NOT NULL,
    value ${key} NOT NULL,
    PRIMARY KEY (message_id, position)
  )`,
  `CREATE INDEX mailroom_message_tags_by_tag
    ON mailroom_message_tags (organization_id, name, value, created_at, message_id)`,
  // The primary key is what applies an event once, from any instance.
  `CREATE TABLE mailroom_message_events (
    id ${key} PRIMARY KEY,
    message_id ${key} NOT NULL REFERENCES mailroom_messages (id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    type TEXT NOT NULL,
    recipient TEXT,
    occurred_at TEXT NOT NULL,
    provider TEXT NOT NULL,
    bounce TEXT,
    click TEXT
  )`,
  "CREATE UNIQUE INDEX mailroom_message_events_by_message ON mailroom_message_events (message_id, position)",
  `CREATE TABLE mailroom_suppressions (
    organization_id ${key} NOT NULL,
    email ${key} NOT NULL,
    reason ${key} NOT NULL,
    created_at ${key} NOT NULL,
    message_id TEXT,
    detail TEXT,
    PRIMARY KEY (organization_id, email)
  )`,
  "CREATE INDEX mailroom_suppressions_by_time ON mailroom_suppressions (organization_id, created_at, email)",
  `CREATE INDEX mailroom_suppressions_by_reason
    ON mailroom_suppressions (organization_id, reason, created_at, email)`
]

/**
 * What the scheduled sends read (`due`, `backlog`, `stalled`): indexes over the few rows that wait,
 * partial so that the millions of settled messages cost them nothing.
 */
const queue = (): ReadonlyArray<string> => [
  `CREATE INDEX mailroom_messages_scheduled ON mailroom_messages (scheduled_at, id)
    WHERE status = 'scheduled'`,
  `CREATE INDEX mailroom_message_recipients_sending ON mailroom_message_recipients (updated_at, message_id)
    WHERE state = 'sending'`
]

const schema = (statements: (key: string) => ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const key = sql.onDialectOrElse({ pg: () => 'TEXT COLLATE "C"', orElse: () => "TEXT" })
    for (const statement of statements(key)) yield* sql.unsafe(statement).unprepared
  })

const migrations = { "1_messages": schema(messages), "2_queue": schema(queue) }
const loader = Migrator.fromRecord(migrations)
/** The id of the last migration: the schema is current once the table records it. */
const latest = Object.keys(migrations).length

/**
 * Whether the table records the last migration: one read, so that a start on a current database (the
 * usual one) skips the Migrator's transaction, its lock and its own reads. Anything else (no table yet,
 * an older schema, an error) answers false, and the Migrator decides, under its lock, what to apply.
 */
const isCurrent = (sql: SqlClient.SqlClient) =>
  sql<{ readonly latest: number | string | null }>`SELECT MAX(migration_id) AS latest FROM ${sql(table)}`.pipe(
    Effect.map((rows) => Number(rows[0]?.latest ?? 0) >= latest),
    Effect.orElseSucceed(() => false)
  )

/**
 * Applies every migration the database has not seen, in one transaction, and answers the ones it
 * applied (`[[1, "messages"], [2, "queue"]]`, or `[]` when the schema is current). Safe to run from several
 * instances at once: PostgreSQL locks the migrations table meanwhile; on SQLite the transaction takes
 * the write lock when it begins (`BEGIN IMMEDIATE`), so another instance waits, then finds nothing to do.
 * A database that records the last migration costs one read, without the Migrator's transaction.
 */
export const run: Effect.Effect<
  ReadonlyArray<readonly [id: number, name: string]>,
  Migrator.MigrationError | SqlError.SqlError,
  SqlClient.SqlClient
> = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.flatMap(isCurrent(sql), (current) =>
    current
      ? Effect.succeed([])
      : Migrator.make({})({ loader, table }).pipe(
          sql.onDialectOrElse({
            sqlite: () => Effect.provideService(SqlClient.BeginTransaction, "BEGIN IMMEDIATE"),
            orElse: () => (effect) => effect
          })
        )
  )
)

/** Runs the migrations while the layer is built (`SqlMessageLog` and `SqlSuppressions` do it themselves). */
export const layer: Layer.Layer<never, Migrator.MigrationError | SqlError.SqlError, SqlClient.SqlClient> =
  Layer.effectDiscard(run)
