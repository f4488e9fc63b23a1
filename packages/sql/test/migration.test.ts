// Migration "3_clustered" on a log written before it: fixtures/v2.db, the SQLite file the v2 code wrote
// (fixtures/generate-v2.mjs), and its rows replayed into a v2 schema on a real PostgreSQL. Three
// instances start on it at once; afterwards every read answers what the v2 code answered, and writes go on.
import { copyFileSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { DatabaseSync } from "node:sqlite"
import { PgClient } from "@effect/sql-pg"
import { assert, describe, it } from "@effect/vitest"
import { MailEvent, MessageLog } from "@mailroom/core"
import { SqliteClient } from "@mailroom/sqlite"
import { startPostgresCluster, tempDir } from "@mailroom/test-support"
import { Context, Effect, Layer, Redacted } from "effect"
import { Migrator, SqlClient } from "effect/sql"
import { afterAll } from "vitest"
import { SqlMessageLog, SqlMigrations, SqlSuppressions } from "../src/index.js"
import { migrations } from "../src/internal/schema.js"
import { ids, readAll } from "./support/v2Reads.js"

const fixtures = join(import.meta.dirname, "fixtures")
const v2 = JSON.parse(readFileSync(join(fixtures, "v2.json"), "utf8")) as {
  readonly rows: Record<string, ReadonlyArray<Record<string, unknown>>>
  readonly reads: unknown
}

const dir = await tempDir("sql-migration")
const cluster = await startPostgresCluster()
afterAll(async () => {
  await cluster.destroy()
  await dir.remove()
})

/** One instance on `client`: the log and the suppressions, the schema brought up to date as they are built. */
const instance = (client: Layer.Layer<SqlClient.SqlClient, unknown>) =>
  Effect.map(
    Layer.build(Layer.mergeAll(SqlMessageLog.layer(), SqlSuppressions.layer()).pipe(Layer.provideMerge(client))),
    (context) => ({
      context,
      log: Context.get(context, MessageLog.MessageLog),
      sql: Context.get(context, SqlClient.SqlClient)
    })
  )

/** An event of the fixture's message `i` (of org_acme), as `MailEvent.make` makes it. */
const event = (i: number, type: MailEvent.Type, recipient: string, minute: number): MailEvent.MailEvent => ({
  ...MailEvent.make({
    type,
    provider: "suite",
    messageId: ids[i] as string,
    recipient,
    occurredAt: new Date(Date.UTC(2026, 2, 1, 9, minute)).toISOString(),
    organizationId: "org_acme",
    raw: { type }
  }),
  organization_id: "org_acme"
})

/**
 * Three instances at once on a v2 database: one migrates, all read back what the v2 code read; an event
 * stored before is not applied again, a new one is, and purge takes the old message with its rows.
 */
const migrated = (client: () => Layer.Layer<SqlClient.SqlClient, unknown>) =>
  Effect.gen(function* () {
    const [one, two, three] = yield* Effect.all(
      [1, 2, 3].map(() => instance(client())),
      { concurrency: "unbounded" }
    )
    if (one === undefined || two === undefined || three === undefined) return assert.fail("not built")
    const recorded = yield* one.sql<{ readonly migration_id: number | string; readonly name: string }>`SELECT
      migration_id, name FROM mailroom_sql_migrations ORDER BY migration_id`
    assert.deepStrictEqual(
      recorded.map((r) => [Number(r.migration_id), r.name]),
      [
        [1, "messages"],
        [2, "queue"],
        [3, "clustered"]
      ]
    )
    for (const { context } of [one, two, three]) {
      assert.deepStrictEqual(JSON.parse(JSON.stringify(yield* Effect.provide(readAll, context))), v2.reads)
    }
    // Delivered to alice under v2, published again now: not applied twice; carol's is new.
    const [again, fresh] = yield* two.log.applyAll([
      event(0, "delivered", "alice@example.com", 1),
      event(3, "delivered", "carol@example.net", 40)
    ])
    assert.deepStrictEqual([again?.applied, again?.found, fresh?.applied], [false, true, true])
    const record = yield* three.log.find("org_acme", ids[3] as string)
    assert.deepStrictEqual(
      record?.events.map((e) => [e.type, e.recipient]),
      [["delivered", "carol@example.net"]]
    )
    assert.strictEqual(record?.recipients.find((r) => r.email === "carol@example.net")?.state, "delivered")
    assert.strictEqual(yield* one.log.purge("2002-01-01T00:00:00.000Z"), 1)
    assert.isUndefined(yield* one.log.find("org_globex", ids[9] as string))
    const left = yield* one.sql<{ readonly n: number | string }>`SELECT
      (SELECT count(*) FROM mailroom_message_recipients WHERE message_id = ${ids[9] as string})
      + (SELECT count(*) FROM mailroom_message_tags WHERE message_id = ${ids[9] as string})
      + (SELECT count(*) FROM mailroom_message_events WHERE message_id = ${ids[9] as string}) AS n`
    assert.strictEqual(Number(left[0]?.n), 0, "the purged message's rows went with it")
    assert.isDefined(yield* one.log.find("org_globex", ids[10] as string))
  }).pipe(Effect.scoped)

describe("migration 3_clustered on a log written by the v2 schema", () => {
  it.live(
    "SQLite (the file the v2 code wrote): three clients migrate it once, and every read answers as before",
    () => {
      const filename = join(dir.path, "v2.db")
      copyFileSync(join(fixtures, "v2.db"), filename)
      return migrated(() => SqliteClient.layer({ filename }))
    },
    30_000
  )

  it.live("SQLite: rows a client with foreign keys off left without their message do not stop the migration", () =>
    Effect.gen(function* () {
      const filename = join(dir.path, "v2-orphans.db")
      copyFileSync(join(fixtures, "v2.db"), filename)
      const other = new DatabaseSync(filename, { enableForeignKeyConstraints: false })
      other.exec(`INSERT INTO mailroom_message_tags (message_id, position, organization_id, created_at, name, value)
        VALUES ('gone', 0, 'org_acme', '2026-03-01T09:00:00.000Z', 'category', 'receipt')`)
      other.close()
      const { context } = yield* instance(SqliteClient.layer({ filename }))
      assert.deepStrictEqual(JSON.parse(JSON.stringify(yield* Effect.provide(readAll, context))), v2.reads)
    }).pipe(Effect.scoped)
  )

  it.live(
    "SQLite: an instance that finds the file write-locked past its busy timeout (another migrating) waits, then serves",
    () =>
      Effect.gen(function* () {
        const filename = join(dir.path, "v2-locked.db")
        copyFileSync(join(fixtures, "v2.db"), filename)
        // Another instance's long migration, as this connection's write transaction stands for.
        const other = new DatabaseSync(filename)
        other.exec("PRAGMA journal_mode = WAL")
        other.exec("BEGIN IMMEDIATE")
        const release = setTimeout(() => other.exec("COMMIT"), 1_000)
        try {
          const { log } = yield* instance(SqliteClient.layer({ filename, busyTimeout: "100 millis" }))
          assert.strictEqual((yield* log.find("org_acme", ids[0] as string))?.status, "delivered")
        } finally {
          clearTimeout(release)
          if (other.isTransaction) other.exec("ROLLBACK")
          other.close()
        }
      }).pipe(Effect.scoped),
    30_000
  )

  it.live(
    "PostgreSQL (the same rows in a v2 schema): three instances migrate it once, and every read answers as before",
    () =>
      Effect.gen(function* () {
        yield* Effect.promise(() => cluster.psql("CREATE DATABASE v2"))
        const client = () =>
          PgClient.layer({ url: Redacted.make(`postgres://postgres@127.0.0.1:${cluster.port}/v2`), maxConnections: 4 })
        yield* Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const { "1_messages": messages, "2_queue": queue } = migrations
          yield* Migrator.make({})({
            loader: Migrator.fromRecord({ "1_messages": messages, "2_queue": queue }),
            table: SqlMigrations.table
          })
          for (const [table, rows] of Object.entries(v2.rows)) {
            const [first, ...rest] = rows
            if (first !== undefined) yield* sql`INSERT INTO ${sql(table)} ${sql.insert([first, ...rest])}`
          }
        }).pipe(Effect.provide(client()))
        yield* migrated(client)
      }),
    30_000
  )
})
