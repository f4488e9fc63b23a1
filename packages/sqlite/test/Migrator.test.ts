// Effect's Migrator on this client: migrations from a record applied in order and once, and once only
// when three clients on one file migrate at the same moment (as three processes starting would).
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { Migrator, SqlClient } from "effect/sql"
import { client, tempFile } from "./support.js"

const run = Migrator.make({})

// Each migration also records that it ran, so a second run would show as a second row.
const loader = Migrator.fromRecord({
  "1_messages": Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE migration_runs (id INTEGER NOT NULL)`
    yield* sql`CREATE TABLE messages (id TEXT PRIMARY KEY, created_at INTEGER NOT NULL)`
    yield* sql`INSERT INTO migration_runs (id) VALUES (1)`
  }),
  "2_messages_by_time": Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE INDEX messages_by_time ON messages (created_at)`
    yield* Effect.sleep("50 millis") // a migration that takes a while, so the others arrive during it
    yield* sql`INSERT INTO migration_runs (id) VALUES (2)`
  })
})

const migrate = (sql: SqlClient.SqlClient) => run({ loader }).pipe(Effect.provideService(SqlClient.SqlClient, sql))

describe("Migrator", () => {
  it.live("applies each migration once, in order, and nothing the second time", () =>
    Effect.gen(function* () {
      const sql = yield* client(yield* tempFile())
      assert.deepStrictEqual(yield* migrate(sql), [
        [1, "messages"],
        [2, "messages_by_time"]
      ])
      assert.deepStrictEqual(yield* migrate(sql), [])
      assert.deepStrictEqual(yield* sql`SELECT id FROM migration_runs ORDER BY id`, [{ id: 1 }, { id: 2 }])
      const ids = yield* sql`SELECT migration_id, name FROM effect_sql_migrations ORDER BY migration_id`
      assert.deepStrictEqual(ids, [
        { migration_id: 1, name: "messages" },
        { migration_id: 2, name: "messages_by_time" }
      ])
    })
  )

  it.live("three clients migrating one file at once: each migration runs once and all three succeed", () =>
    Effect.gen(function* () {
      const filename = yield* tempFile()
      const sql = yield* client(filename)
      const clients = [sql, yield* client(filename), yield* client(filename)]
      const results = yield* Effect.forEach(clients, migrate, { concurrency: "unbounded" })
      assert.deepStrictEqual(results.flat(), [
        [1, "messages"],
        [2, "messages_by_time"]
      ])
      assert.deepStrictEqual(yield* sql`SELECT id FROM migration_runs ORDER BY id`, [{ id: 1 }, { id: 2 }])
      assert.deepStrictEqual(yield* sql`SELECT name FROM sqlite_master WHERE name = 'messages_by_time'`, [
        { name: "messages_by_time" }
      ])
    })
  )
})
