// The migrations of SqlMessageLog's and SqlSuppressions' tables, one schema on SQLite and PostgreSQL
// (a dialect switch where they differ), each a list of statements run in order.
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"

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
  // GET /emails, newest first, with and without `since`/`until`; then by status; purge by age alone
  // (dropped by "3_clustered": purge reads the by-time index).
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

/**
 * Fewer pages written per send (each costs its commit a page of WAL): a message's events keyed by
 * (message_id, id), which UUIDv7 ids append to, instead of the event id alone, whose digests land on a
 * random page each; no index by age alone (`purge` reads the by-time index, organisation by
 * organisation); and on SQLite the child tables `WITHOUT ROWID`, the primary key being the table
 * instead of a second b-tree beside it. On SQLite a table's key cannot change in place: each child
 * table is rebuilt, its rows copied, inside the migration's transaction.
 */
const clustered = (key: string, dialect: "pg" | "sqlite"): ReadonlyArray<string> =>
  dialect === "pg"
    ? [
        "DROP INDEX mailroom_messages_by_age",
        "DROP INDEX mailroom_message_events_by_message",
        "ALTER TABLE mailroom_message_events DROP CONSTRAINT mailroom_message_events_pkey",
        "ALTER TABLE mailroom_message_events ADD PRIMARY KEY (message_id, id)"
      ]
    : [
        "DROP INDEX mailroom_messages_by_age",
        ...rebuilt(
          "mailroom_message_recipients",
          `message_id ${key} NOT NULL REFERENCES mailroom_messages (id) ON DELETE CASCADE,
          position INTEGER NOT NULL,
          organization_id ${key} NOT NULL,
          created_at ${key} NOT NULL,
          email TEXT NOT NULL,
          address ${key} NOT NULL,
          kind TEXT NOT NULL,
          state TEXT NOT NULL,
          updated_at TEXT NOT NULL,
          detail TEXT,
          PRIMARY KEY (message_id, position)`,
          "message_id, position, organization_id, created_at, email, address, kind, state, updated_at, detail"
        ),
        `CREATE INDEX mailroom_message_recipients_by_address
          ON mailroom_message_recipients (organization_id, address, created_at, message_id)`,
        `CREATE INDEX mailroom_message_recipients_sending ON mailroom_message_recipients (updated_at, message_id)
          WHERE state = 'sending'`,
        ...rebuilt(
          "mailroom_message_tags",
          `message_id ${key} NOT NULL REFERENCES mailroom_messages (id) ON DELETE CASCADE,
          position INTEGER NOT NULL,
          organization_id ${key} NOT NULL,
          created_at ${key} NOT NULL,
          name ${key} NOT NULL,
          value ${key} NOT NULL,
          PRIMARY KEY (message_id, position)`,
          "message_id, position, organization_id, created_at, name, value"
        ),
        `CREATE INDEX mailroom_message_tags_by_tag
          ON mailroom_message_tags (organization_id, name, value, created_at, message_id)`,
        // The primary key is what applies an event once, from any instance: an event id names one message.
        ...rebuilt(
          "mailroom_message_events",
          `id ${key} NOT NULL,
          message_id ${key} NOT NULL REFERENCES mailroom_messages (id) ON DELETE CASCADE,
          position INTEGER NOT NULL,
          type TEXT NOT NULL,
          recipient TEXT,
          occurred_at TEXT NOT NULL,
          provider TEXT NOT NULL,
          bounce TEXT,
          click TEXT,
          PRIMARY KEY (message_id, id)`,
          "id, message_id, position, type, recipient, occurred_at, provider, bounce, click"
        )
      ]

/**
 * SQLite's way to change a table's key: a new table `WITHOUT ROWID`, the rows copied, the old one
 * dropped (its indexes with it). Rows whose message is gone (left by a client with foreign keys off;
 * no read reaches them) are not copied: with foreign keys on, as node:sqlite opens a file, one would
 * fail the migration, and every start after it.
 */
const rebuilt = (table: string, definition: string, columns: string): ReadonlyArray<string> => [
  `CREATE TABLE ${table}_rebuilt (${definition}) WITHOUT ROWID`,
  `INSERT INTO ${table}_rebuilt (${columns}) SELECT ${columns} FROM ${table}
    WHERE message_id IN (SELECT id FROM mailroom_messages)`,
  `DROP TABLE ${table}`,
  `ALTER TABLE ${table}_rebuilt RENAME TO ${table}`
]

const schema = (statements: (key: string, dialect: "pg" | "sqlite") => ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const key = sql.onDialectOrElse({ pg: () => 'TEXT COLLATE "C"', orElse: () => "TEXT" })
    const dialect = sql.onDialectOrElse({ pg: () => "pg" as const, orElse: () => "sqlite" as const })
    for (const statement of statements(key, dialect)) yield* sql.unsafe(statement).unprepared
  })

/** Every migration by `{id}_{name}`, as `Migrator.fromRecord` reads them; a database records those it has applied. */
export const migrations = {
  "1_messages": schema(messages),
  "2_queue": schema(queue),
  "3_clustered": schema(clustered)
}
