// SqliteClient's direct path and background checkpoints on a real file: batches that commit or roll
// back whole, transactions of one turn committed together (a failing member alone undone, a failing
// COMMIT failing every member), a busy file waited for and given up on, and a WAL copied into the
// database file by the worker, read back from that file alone.
import { copyFileSync } from "node:fs"
import { DatabaseSync } from "node:sqlite"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Schedule } from "effect"
import { client, failure, tempFile } from "./support.js"

const withTables = Effect.gen(function* () {
  const filename = yield* tempFile()
  const sql = yield* client(filename)
  yield* sql`CREATE TABLE parent (id INTEGER PRIMARY KEY)`
  yield* sql`CREATE TABLE rows (n INTEGER PRIMARY KEY,
    parent INTEGER REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED)`
  return { filename, sql }
})

const count = (filename: string) => {
  const db = new DatabaseSync(filename)
  try {
    return Number((db.prepare("SELECT count(*) AS n FROM rows").get() as { n: number }).n)
  } finally {
    db.close()
  }
}

describe("direct", () => {
  it.effect("a transaction's statements commit together, or none of them when it fails", () =>
    Effect.gen(function* () {
      const { sql } = yield* withTables
      const inserted = yield* sql.directTransaction((c) =>
        Effect.gen(function* () {
          yield* c.execute("INSERT INTO rows (n) VALUES (?), (?)", [1, 2])
          return yield* c.execute<{ n: number }>("SELECT n FROM rows ORDER BY n", [])
        })
      )
      assert.deepStrictEqual(inserted, [{ n: 1 }, { n: 2 }])
      const error = yield* failure(
        sql.directTransaction((c) =>
          Effect.andThen(
            c.execute("INSERT INTO rows (n) VALUES (?)", [3]),
            c.execute("INSERT INTO rows (n) VALUES (?)", [1])
          )
        )
      )
      assert.strictEqual(error._tag, "SqlError")
      assert.deepStrictEqual(yield* sql.direct((c) => c.execute("SELECT count(*) AS n FROM rows", [])), [{ n: 2 }])
      // Statements of the client's own kind run as before, before and after.
      assert.deepStrictEqual(yield* sql`SELECT max(n) AS n FROM rows`, [{ n: 2 }])
    }).pipe(Effect.scoped)
  )

  it.effect("transactions begun in one turn commit together: a failing one is undone alone", () =>
    Effect.gen(function* () {
      const { filename, sql } = yield* withTables
      const results = yield* Effect.all(
        Array.from({ length: 20 }, (_, n) =>
          Effect.exit(
            sql.directTransaction((c) =>
              n === 7
                ? Effect.andThen(c.execute("INSERT INTO rows (n) VALUES (?)", [100]), Effect.fail("refused"))
                : c.execute("INSERT INTO rows (n) VALUES (?)", [n])
            )
          )
        ),
        { concurrency: "unbounded" }
      )
      assert.deepStrictEqual(
        results.map((exit) => Exit.isSuccess(exit)),
        Array.from({ length: 20 }, (_, n) => n !== 7)
      )
      assert.strictEqual(count(filename), 19, "every other row, read by another connection: committed")
      assert.deepStrictEqual(yield* sql`SELECT n FROM rows WHERE n = 100`, [])
    }).pipe(Effect.scoped)
  )

  it.effect("when the shared COMMIT fails, every transaction of the turn fails and nothing is written", () =>
    Effect.gen(function* () {
      const { filename, sql } = yield* withTables
      // A deferred foreign key is checked at COMMIT: the row without a parent fails the commit.
      const results = yield* Effect.all(
        [1, 2, 3].map((n) =>
          Effect.exit(
            sql.directTransaction((c) =>
              c.execute("INSERT INTO rows (n, parent) VALUES (?, ?)", [n, n === 2 ? 99 : null])
            )
          )
        ),
        { concurrency: "unbounded" }
      )
      assert.deepStrictEqual(
        results.map((exit) => Exit.isFailure(exit)),
        [true, true, true]
      )
      assert.strictEqual(count(filename), 0)
      yield* sql.directTransaction((c) => c.execute("INSERT INTO rows (n) VALUES (?)", [4]))
      assert.strictEqual(count(filename), 1, "the connection is usable again")
    }).pipe(Effect.scoped)
  )

  it.effect("while transactions keep joining, the group stays open for the next turn: one commit for all", () =>
    Effect.gen(function* () {
      const { filename, sql } = yield* withTables
      const insert = (n: number, parent: number | null = null) =>
        Effect.exit(sql.directTransaction((c) => c.execute("INSERT INTO rows (n, parent) VALUES (?, ?)", [n, parent])))
      // Each a turn after the one before, as a server's requests arrive; the first fails the shared
      // COMMIT (a deferred foreign key), so every transaction it held fails with it.
      const nextTurn = Effect.callback<void>((resume) => {
        setImmediate(() => resume(Effect.void))
      })
      const later = (turns: number, effect: ReturnType<typeof insert>) =>
        Effect.andThen(Effect.replicateEffect(nextTurn, turns, { discard: true }), effect)
      const results = yield* Effect.all([insert(1, 99), insert(2), later(1, insert(3)), later(2, insert(4))], {
        concurrency: "unbounded"
      })
      assert.deepStrictEqual(
        results.map((exit) => Exit.isFailure(exit)),
        [true, true, true, true]
      )
      assert.strictEqual(count(filename), 0)
      // Alone, a transaction commits at the end of its first turn: one begun two turns later is apart.
      const apart = yield* Effect.all([insert(5, 99), later(3, insert(6))], { concurrency: "unbounded" })
      assert.deepStrictEqual(
        apart.map((exit) => Exit.isSuccess(exit)),
        [false, true]
      )
      assert.strictEqual(count(filename), 1)
    }).pipe(Effect.scoped)
  )

  it.live("a file another connection holds locked is waited for, and giving up writes nothing", () =>
    Effect.gen(function* () {
      const { filename, sql } = yield* withTables
      const other = new DatabaseSync(filename)
      yield* Effect.addFinalizer(() => Effect.sync(() => other.isOpen && other.close()))
      other.exec("BEGIN IMMEDIATE")
      const waiting = yield* Effect.forkChild(
        sql.directTransaction((c) => c.execute("INSERT INTO rows (n) VALUES (1)", []))
      )
      const givenUp = yield* Effect.forkChild(
        sql.directTransaction((c) => c.execute("INSERT INTO rows (n) VALUES (2)", []))
      )
      yield* Effect.sleep("100 millis")
      yield* Fiber.interrupt(givenUp)
      other.exec("COMMIT")
      yield* Fiber.join(waiting)
      assert.deepStrictEqual(yield* sql`SELECT n FROM rows`, [{ n: 1 }])
    }).pipe(Effect.scoped)
  )
})

describe("checkpoints", () => {
  /** The rows a copy of the database file alone holds (none before the table is in it): the WAL is left out. */
  const inFileAlone = (filename: string) => {
    const copy = `${filename}.copy`
    copyFileSync(filename, copy)
    try {
      return count(copy)
    } catch {
      return 0
    }
  }

  it.effect("checkpoint copies the WAL into the database file, in the background or inline", () =>
    Effect.gen(function* () {
      for (const walCheckpoint of ["background", "inline"] as const) {
        const filename = yield* tempFile(`${walCheckpoint}.db`)
        const sql = yield* client(filename, { walCheckpoint })
        yield* sql`CREATE TABLE rows (n INTEGER PRIMARY KEY, parent INTEGER)`
        yield* sql.directTransaction((c) => c.execute("INSERT INTO rows (n) VALUES (1), (2), (3)", []))
        const result = yield* sql.checkpoint
        assert.isAbove(result.log, 0, walCheckpoint)
        assert.strictEqual(result.checkpointed, result.log, walCheckpoint)
        assert.strictEqual(inFileAlone(filename), 3, walCheckpoint)
      }
    }).pipe(Effect.scoped)
  )

  it.live("the worker is asked every 100 commits, without being told", () =>
    Effect.gen(function* () {
      const { filename, sql } = yield* withTables
      for (let n = 0; n < 150; n++) {
        yield* sql.directTransaction((c) => c.execute("INSERT INTO rows (n) VALUES (?)", [n]))
      }
      // Awaited by reading the file until the worker's checkpoint shows in it (at most 10 s).
      const seen = yield* Effect.sync(() => inFileAlone(filename)).pipe(
        Effect.repeat({ schedule: Schedule.spaced("50 millis"), until: (rows) => rows >= 100, times: 200 })
      )
      assert.isAtLeast(seen, 100)
    }).pipe(Effect.scoped)
  )
})
