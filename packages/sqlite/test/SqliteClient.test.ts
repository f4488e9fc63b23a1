// SqliteClient on a real file: values of every SQLite type in and out, Effect's statement helpers,
// errors, transactions, concurrency on one client, and what the file looks like from outside.
import { existsSync } from "node:fs"
import { writeFile } from "node:fs/promises"
import { join } from "node:path"
import { DatabaseSync } from "node:sqlite"
import { assert, describe, it } from "@effect/vitest"
import { Config, ConfigProvider, Deferred, Effect, Fiber, Layer, String as Str, Stream } from "effect"
import { SqlClient, SqlError } from "effect/sql"
import { SqliteClient } from "../src/index.js"
import { child, client, failure, tempFile } from "./support.js"

const withTable = (options: Partial<SqliteClient.SqliteClientConfig> = {}) =>
  Effect.gen(function* () {
    const sql = yield* client(yield* tempFile(), options)
    yield* sql`CREATE TABLE t (id INTEGER PRIMARY KEY, v ANY, name TEXT UNIQUE, parent INTEGER REFERENCES t (id)) STRICT`
    return sql
  })

describe("values", () => {
  it.effect("text, integer, real, blob and null come back as they went in, a whole number as an integer", () =>
    Effect.gen(function* () {
      const sql = yield* withTable()
      const blob = new Uint8Array([0, 1, 2, 253, 254, 255])
      for (const v of ["héllo ✉", 42, -7, 3.25, blob, null]) yield* sql`INSERT INTO t (v) VALUES (${v})`
      const rows = yield* sql<{ v: unknown; type: string }>`SELECT v, typeof(v) AS type FROM t ORDER BY id`
      assert.deepStrictEqual(
        rows.map((r) => r.type),
        ["text", "integer", "integer", "real", "blob", "null"]
      )
      assert.deepStrictEqual(rows[0]?.v, "héllo ✉")
      assert.deepStrictEqual(rows[3]?.v, 3.25)
      assert.instanceOf(rows[4]?.v, Uint8Array)
      assert.deepStrictEqual(Array.from(rows[4]?.v as Uint8Array), Array.from(blob))
      assert.deepStrictEqual(yield* sql`SELECT json_object('n', ${42}, 'x', ${0.5}) AS j, ${7} || '' AS s`, [
        { j: '{"n":42,"x":0.5}', s: "7" }
      ])
    })
  )

  it.effect("an integer beyond 2^53 round-trips exactly as a bigint, and is refused rather than rounded without", () =>
    Effect.gen(function* () {
      const sql = yield* withTable()
      const big = 2n ** 62n + 3n
      yield* sql`INSERT INTO t (v) VALUES (${big})`
      const [row] = yield* sql<{ v: bigint }>`SELECT v FROM t`.pipe(Effect.provideService(SqlClient.SafeIntegers, true))
      assert.strictEqual(row?.v, big)
      const error = yield* failure(sql`SELECT v FROM t`)
      assert.match(error.message, /too large/)
    })
  )

  it.effect("booleans are stored as 1 and 0, undefined as null, and a Date is refused, never stored as null", () =>
    Effect.gen(function* () {
      const sql = yield* withTable()
      yield* sql`INSERT INTO t (v, name) VALUES (${true}, ${undefined})`
      yield* sql`INSERT INTO t (v) VALUES (${false})`
      assert.deepStrictEqual(yield* sql`SELECT v, name FROM t ORDER BY id`, [
        { v: 1, name: null },
        { v: 0, name: null }
      ])
      const error = yield* failure(sql`INSERT INTO t (v) VALUES (${new Date(0)})`)
      assert.strictEqual(error._tag, "SqlError")
      assert.deepStrictEqual(yield* sql`SELECT count(*) AS n FROM t`, [{ n: 2 }])
    })
  )

  it.effect("sql.insert, sql.update and sql.in, with names transformed both ways", () =>
    Effect.gen(function* () {
      const sql = yield* client(yield* tempFile(), {
        transformQueryNames: Str.camelToSnake,
        transformResultNames: Str.snakeToCamel
      })
      yield* sql`CREATE TABLE people (person_id INTEGER PRIMARY KEY, display_name TEXT NOT NULL)`
      yield* sql`INSERT INTO people ${sql.insert({ personId: 1, displayName: "Ada" })}`
      yield* sql`INSERT INTO people ${sql.insert([
        { personId: 2, displayName: "Grace" },
        { personId: 3, displayName: "Linus" }
      ])}`
      yield* sql`UPDATE people SET ${sql.update({ displayName: "Grace Hopper" })} WHERE person_id = ${2}`
      const rows = yield* sql`SELECT * FROM people WHERE ${sql.in("personId", [2, 3])} ORDER BY person_id`
      assert.deepStrictEqual(rows, [
        { personId: 2, displayName: "Grace Hopper" },
        { personId: 3, displayName: "Linus" }
      ])
    })
  )

  it.effect("raw, values, unprepared and a stream of more rows than one chunk", () =>
    Effect.gen(function* () {
      const sql = yield* withTable()
      const raw = yield* sql`INSERT INTO t (v) VALUES (1), (2)`.raw
      assert.deepStrictEqual(raw, { changes: 2, lastInsertRowid: 2 })
      assert.deepStrictEqual(yield* sql`SELECT 1 AS a, 2 AS a`.values, [[1, 2]])
      assert.deepStrictEqual(yield* sql`SELECT ${"x"} AS v`.unprepared, [{ v: "x" }])
      yield* sql`WITH RECURSIVE s(n) AS (SELECT 3 UNION ALL SELECT n + 1 FROM s WHERE n < 1000) INSERT INTO t (v) SELECT n FROM s`
      const streamed = yield* Stream.runCollect(sql<{ v: number }>`SELECT v FROM t ORDER BY v`.stream)
      assert.deepStrictEqual(
        streamed.map((r) => r.v),
        Array.from({ length: 1000 }, (_, i) => i + 1)
      )
      // A stream stopped early gives the connection back.
      assert.strictEqual((yield* Stream.runCollect(Stream.take(sql`SELECT v FROM t`.stream, 3))).length, 3)
      assert.deepStrictEqual(yield* sql`SELECT count(*) AS n FROM t`, [{ n: 1000 }])
    })
  )
})

describe("errors", () => {
  it.effect("a unique violation is a UniqueViolation naming the constraint, a foreign key a ConstraintError", () =>
    Effect.gen(function* () {
      const sql = yield* withTable()
      yield* sql`INSERT INTO t (name) VALUES ('a')`
      const unique = yield* failure(sql`INSERT INTO t (name) VALUES ('a')`)
      assert.strictEqual(unique.reason._tag, "UniqueViolation")
      assert.strictEqual(unique.reason._tag === "UniqueViolation" && unique.reason.constraint, "t.name")
      assert.isFalse(unique.isRetryable)
      assert.match(unique.message, /UNIQUE constraint failed: t\.name/)
      assert.strictEqual((unique.reason.cause as { errcode: number }).errcode, 2067)
      const foreign = yield* failure(sql`INSERT INTO t (parent) VALUES (999)`)
      assert.strictEqual(foreign.reason._tag, "ConstraintError")
      assert.strictEqual((foreign.reason.cause as { errcode: number }).errcode, 787)
    })
  )

  it.effect("a failed prepare is not cached: the same query works once its table exists", () =>
    Effect.gen(function* () {
      const sql = yield* client(yield* tempFile(), { prepareCacheSize: 2 })
      const error = yield* failure(sql`SELECT * FROM later`)
      assert.match(error.message, /no such table: later/)
      yield* sql`CREATE TABLE later (x)`
      assert.deepStrictEqual(yield* sql`SELECT * FROM later`, [])
      // More distinct statements than the cache holds, each still right.
      for (let i = 0; i < 5; i++)
        assert.deepStrictEqual(yield* sql`SELECT ${i} AS i, ${String(i)} AS s`, [{ i, s: `${i}` }])
    })
  )

  it.effect("more than one statement in a query is refused, not half run", () =>
    Effect.gen(function* () {
      const sql = yield* withTable()
      const error = yield* failure(sql`INSERT INTO t (v) VALUES (1); INSERT INTO t (v) VALUES (2)`)
      assert.match(error.message, /one statement per query/)
      assert.deepStrictEqual(yield* sql`SELECT count(*) AS n FROM t`, [{ n: 0 }])
      yield* sql`INSERT INTO t (v) VALUES (3); -- a comment after the statement is fine`
    })
  )
})

describe("transactions", () => {
  const count = (sql: SqlClient.SqlClient) =>
    Effect.map(sql<{ n: number }>`SELECT count(*) AS n FROM t`, (rows) => rows[0]?.n)

  it.effect("commit, rollback on failure, rollback on interruption", () =>
    Effect.gen(function* () {
      const sql = yield* withTable()
      yield* sql.withTransaction(sql`INSERT INTO t (v) VALUES (1)`)
      assert.strictEqual(yield* count(sql), 1)
      const failed = sql.withTransaction(Effect.andThen(sql`INSERT INTO t (v) VALUES (2)`, Effect.fail("no")))
      assert.strictEqual(yield* failure(failed), "no")
      assert.strictEqual(yield* count(sql), 1)
      const inserted = yield* Deferred.make<void>()
      const fiber = yield* Effect.forkChild(
        sql.withTransaction(
          Effect.andThen(
            sql`INSERT INTO t (v) VALUES (3)`,
            Effect.andThen(Deferred.succeed(inserted, undefined), Effect.never)
          )
        )
      )
      yield* Deferred.await(inserted)
      yield* Fiber.interrupt(fiber)
      assert.strictEqual(yield* count(sql), 1)
      yield* sql.withTransaction(sql`INSERT INTO t (v) VALUES (4)`)
      assert.strictEqual(yield* count(sql), 2)
    })
  )

  it.effect("nested transactions are savepoints: an inner failure undoes only the inner writes", () =>
    Effect.gen(function* () {
      const sql = yield* withTable()
      yield* sql.withTransaction(
        Effect.gen(function* () {
          yield* sql`INSERT INTO t (v) VALUES ('outer')`
          yield* Effect.ignore(
            sql.withTransaction(Effect.andThen(sql`INSERT INTO t (v) VALUES ('inner')`, Effect.fail("inner")))
          )
          yield* sql.withTransaction(sql`INSERT INTO t (v) VALUES ('second inner')`)
        })
      )
      assert.deepStrictEqual(yield* sql`SELECT v FROM t ORDER BY id`, [{ v: "outer" }, { v: "second inner" }])
      const rolledBack = sql.withTransaction(
        Effect.andThen(sql.withTransaction(sql`INSERT INTO t (v) VALUES ('gone')`), Effect.fail("outer"))
      )
      assert.strictEqual(yield* failure(rolledBack), "outer")
      assert.strictEqual(yield* count(sql), 2)
    })
  )

  it.effect("50 concurrent writes on one client, some in transactions: all land, none busy", () =>
    Effect.gen(function* () {
      const sql = yield* withTable()
      yield* Effect.forEach(
        Array.from({ length: 50 }, (_, i) => i),
        (i) =>
          i % 2 === 0
            ? sql`INSERT INTO t (v) VALUES (${i})`
            : sql.withTransaction(Effect.andThen(sql`INSERT INTO t (v) VALUES (${i})`, Effect.yieldNow)),
        { concurrency: "unbounded", discard: true }
      )
      assert.strictEqual(yield* count(sql), 50)
    })
  )
})

describe("the file", () => {
  it.effect(
    "its directory is created, it is in WAL mode with foreign keys on, temporary data in memory, and it is closed with the scope",
    () =>
      Effect.gen(function* () {
        const filename = join(yield* tempFile("nested"), "deeper", "mail.db")
        yield* Effect.scoped(
          Effect.gen(function* () {
            const sql = yield* client(filename)
            assert.deepStrictEqual(yield* sql`PRAGMA journal_mode`, [{ journal_mode: "wal" }])
            assert.deepStrictEqual(yield* sql`PRAGMA foreign_keys`, [{ foreign_keys: 1 }])
            assert.deepStrictEqual(yield* sql`PRAGMA temp_store`, [{ temp_store: 2 }])
            yield* sql`CREATE TABLE x (y)`
            assert.isTrue(existsSync(`${filename}-wal`))
          })
        )
        // The last connection to close checkpoints and removes the WAL file.
        assert.isFalse(existsSync(`${filename}-wal`))
        const db = new DatabaseSync(filename, { readOnly: true })
        assert.deepStrictEqual(db.prepare("SELECT name FROM sqlite_master").all(), [{ name: "x" }])
        db.close()
      })
  )

  it.effect("disableWAL keeps the rollback journal; readonly reads and refuses writes", () =>
    Effect.gen(function* () {
      const filename = yield* tempFile()
      yield* Effect.scoped(
        Effect.gen(function* () {
          const sql = yield* client(filename, { disableWAL: true })
          assert.deepStrictEqual(yield* sql`PRAGMA journal_mode`, [{ journal_mode: "delete" }])
          yield* sql`CREATE TABLE x (y)`
          yield* sql`INSERT INTO x VALUES (1)`
        })
      )
      const reader = yield* client(filename, { readonly: true })
      assert.deepStrictEqual(yield* reader.withTransaction(reader`SELECT y FROM x`), [{ y: 1 }])
      assert.strictEqual((yield* failure(reader`INSERT INTO x VALUES (2)`))._tag, "SqlError")
    })
  )

  it.effect("backup copies the live database; extensions load only through loadExtension", () =>
    Effect.gen(function* () {
      const sql = yield* withTable()
      yield* sql`INSERT INTO t (v) VALUES ('kept')`
      const copy = yield* tempFile("copy.db")
      const metadata = yield* sql.backup(copy)
      assert.isAbove(metadata.totalPages, 0)
      const restored = yield* client(copy, { readonly: true })
      assert.deepStrictEqual(yield* restored`SELECT v FROM t`, [{ v: "kept" }])
      const missing = yield* failure(sql.loadExtension(join(copy, "..", "no-such-extension")))
      assert.strictEqual(missing.reason.operation, "loadExtension")
      assert.match((yield* failure(sql`SELECT load_extension('no-such-extension')`)).message, /not authorized/)
    })
  )

  it.effect("a file that cannot be opened fails make with a SqlError", () =>
    Effect.gen(function* () {
      const blocker = yield* tempFile("a-file")
      yield* Effect.promise(() => writeFile(blocker, "not a directory"))
      const error = yield* failure(client(join(blocker, "mail.db")))
      assert.isTrue(SqlError.isSqlError(error))
      assert.strictEqual(error.reason.operation, "open")
    })
  )

  it.effect("layerConfig reads the options through Config and provides SqlClient too", () =>
    Effect.gen(function* () {
      const filename = yield* tempFile()
      const layer = SqliteClient.layerConfig({ filename: Config.String("DATABASE_FILE") }).pipe(
        Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({ DATABASE_FILE: filename })))
      )
      const rows = yield* Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT 1 AS one`).pipe(Effect.provide(layer))
      assert.deepStrictEqual(rows, [{ one: 1 }])
      assert.isTrue(existsSync(filename))
    })
  )
})

describe("Node version", () => {
  it.live("an older Node.js is refused at import with the version it needs", () =>
    Effect.gen(function* () {
      const fake = `data:text/javascript,Object.defineProperty(process.versions,"node",{value:"22.12.0"})`
      const old = yield* child([], ["--import", fake])
      assert.notStrictEqual(yield* old.exited, 0)
      const line = yield* old.line("Error: @mailroom/sqlite needs")
      assert.include(line, "Node.js 22.16 or later, or 24 or later")
      assert.include(line, "this is Node.js 22.12.0")
    })
  )
})
