// Two clients on one database file, in this process and in a second `node` process: a writer waits for
// the other's write lock (WAL), with the event loop running meanwhile, and gives up after busyTimeout.
import { assert, describe, it } from "@effect/vitest"
import { Clock, Deferred, Effect, Fiber, Ref } from "effect"
import type { SqliteClient } from "../src/index.js"
import { child, client, failure, tempFile } from "./support.js"

const setUp = Effect.gen(function* () {
  const filename = yield* tempFile()
  const first = yield* client(filename)
  yield* first`CREATE TABLE writes (id INTEGER PRIMARY KEY, who TEXT NOT NULL, n INTEGER NOT NULL)`
  return { filename, first, second: yield* client(filename) }
})

const count = (sql: SqliteClient.SqliteClient, who: string) =>
  Effect.map(sql<{ n: number }>`SELECT count(*) AS n FROM writes WHERE who = ${who}`, (rows) => rows[0]?.n)

// A fiber that counts timer ticks: it only advances while nothing blocks the event loop.
const ticker = Effect.gen(function* () {
  const ticks = yield* Ref.make(0)
  yield* Effect.forkChild(
    Effect.forever(
      Effect.andThen(
        Effect.sleep("10 millis"),
        Ref.update(ticks, (n) => n + 1)
      )
    )
  )
  return ticks
})

describe("two clients in one process", () => {
  it.live("the second waits for the first's transaction to commit while the event loop keeps running", () =>
    Effect.gen(function* () {
      const { first, second } = yield* setUp
      const holding = yield* Deferred.make<void>()
      const transaction = yield* Effect.forkChild(
        first.withTransaction(
          Effect.gen(function* () {
            yield* first`INSERT INTO writes (who, n) VALUES ('first', 1)`
            yield* Deferred.succeed(holding, undefined)
            yield* Effect.sleep("400 millis")
          })
        )
      )
      yield* Deferred.await(holding)
      const ticks = yield* ticker
      yield* second`INSERT INTO writes (who, n) VALUES ('second', 1)`
      assert.isDefined(transaction.pollUnsafe(), "the second wrote before the first had committed")
      yield* Fiber.join(transaction)
      assert.isAbove(yield* Ref.get(ticks), 2)
      assert.strictEqual(yield* count(second, "first"), 1)
      assert.strictEqual(yield* count(first, "second"), 1)
    })
  )

  it.live("busyTimeout bounds the wait: a typed, retryable LockTimeoutError, the holder unharmed", () =>
    Effect.gen(function* () {
      const { filename, first } = yield* setUp
      const impatient = yield* client(filename, { busyTimeout: "200 millis" })
      const holding = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const transaction = yield* Effect.forkChild(
        first.withTransaction(
          Effect.andThen(
            first`INSERT INTO writes (who, n) VALUES ('first', 1)`,
            Effect.andThen(Deferred.succeed(holding, undefined), Deferred.await(release))
          )
        )
      )
      yield* Deferred.await(holding)
      const started = yield* Clock.currentTimeMillis
      const error = yield* failure(impatient.withTransaction(impatient`INSERT INTO writes (who, n) VALUES ('x', 1)`))
      const waited = (yield* Clock.currentTimeMillis) - started
      assert.strictEqual(error.reason._tag, "LockTimeoutError")
      assert.isAtLeast(waited, 200)
      assert.isBelow(waited, 4000, "waited for the 5 second default, not busyTimeout")
      assert.isTrue(error.isRetryable)
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(transaction)
      assert.strictEqual(yield* count(impatient, "first"), 1)
    })
  )

  it.live("read-then-write transactions on both clients at once: both succeed, neither update is lost", () =>
    Effect.gen(function* () {
      const { first, second } = yield* setUp
      yield* first`INSERT INTO writes (who, n) VALUES ('counter', 0)`
      const increment = (sql: SqliteClient.SqliteClient) =>
        sql.withTransaction(
          Effect.gen(function* () {
            const [row] = yield* sql<{ n: number }>`SELECT n FROM writes WHERE who = 'counter'`
            yield* Effect.sleep("50 millis")
            yield* sql`UPDATE writes SET n = ${(row?.n ?? 0) + 1} WHERE who = 'counter'`
          })
        )
      yield* Effect.all([increment(first), increment(second)], { concurrency: 2 })
      assert.deepStrictEqual(yield* first`SELECT n FROM writes WHERE who = 'counter'`, [{ n: 2 }])
    })
  )

  it.live("50 concurrent writes on each of two clients, half in transactions: all land, none busy", () =>
    Effect.gen(function* () {
      const { first, second } = yield* setUp
      const write = (sql: SqliteClient.SqliteClient, who: string) => (n: number) =>
        n % 2 === 0
          ? sql`INSERT INTO writes (who, n) VALUES (${who}, ${n})`
          : sql.withTransaction(
              Effect.andThen(sql`INSERT INTO writes (who, n) VALUES (${who}, ${n})`, Effect.sleep("1 millis"))
            )
      const ns = Array.from({ length: 50 }, (_, n) => n)
      yield* Effect.all(
        [
          Effect.forEach(ns, write(first, "first"), { concurrency: "unbounded", discard: true }),
          Effect.forEach(ns, write(second, "second"), { concurrency: "unbounded", discard: true })
        ],
        { concurrency: 2 }
      )
      assert.strictEqual(yield* count(first, "first"), 50)
      assert.strictEqual(yield* count(first, "second"), 50)
    })
  )
})

describe("a second process", () => {
  it.live("a write waits for the other process's transaction, then both are there", () =>
    Effect.gen(function* () {
      const { filename, first } = yield* setUp
      const other = yield* child(["hold", filename, "1000"])
      yield* other.line("holding")
      const ticks = yield* ticker
      yield* first`INSERT INTO writes (who, n) VALUES ('parent', 1)`
      yield* other.line("committed")
      assert.isAbove(yield* Ref.get(ticks), 2)
      assert.strictEqual(yield* other.exited, 0)
      assert.strictEqual(yield* count(first, "child"), 1)
      assert.strictEqual(yield* count(first, "parent"), 1)
    })
  )

  it.live("both processes writing at once: every row lands, no SQLITE_BUSY", () =>
    Effect.gen(function* () {
      const { filename, first } = yield* setUp
      const other = yield* child(["write", filename, "300"])
      for (let n = 0; n < 300; n++) {
        yield* n % 10 === 0
          ? first.withTransaction(first`INSERT INTO writes (who, n) VALUES ('parent', ${n})`)
          : first`INSERT INTO writes (who, n) VALUES ('parent', ${n})`
      }
      yield* other.line("wrote")
      assert.strictEqual(yield* other.exited, 0)
      assert.strictEqual(yield* count(first, "child"), 300)
      assert.strictEqual(yield* count(first, "parent"), 300)
    })
  )
})
