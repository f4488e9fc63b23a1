// SqlMessageLog and SqlSuppressions on SQLite files (@mailroom/sqlite on node:sqlite): core's suites
// with two clients on one file, the engine cases, three clients migrating a fresh file at once, a
// file another connection holds locked, and records that outlive the client.
import { randomUUID } from "node:crypto"
import { join } from "node:path"
import { DatabaseSync } from "node:sqlite"
import { assert, describe, it } from "@effect/vitest"
import { MailroomError, MessageLog, Suppressions } from "@mailroom/core"
import { MessageLogSuite, newMessage, SuppressionsSuite } from "@mailroom/core/testing"
import { SqliteClient } from "@mailroom/sqlite"
import { tempDir } from "@mailroom/test-support"
import { Context, Effect, Exit, Layer, String as Str } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll } from "vitest"
import { SqlMessageLog, SqlMigrations, SqlSuppressions } from "../src/index.js"
import { engineCases } from "./support/engineCases.js"

// Made while tests are collected: the suites' layers need the file's path.
const dir = await tempDir("sql")
afterAll(() => dir.remove())
const shared = join(dir.path, "mailroom.db")

/** A client of its own (one connection) on `filename`, as one more instance has. */
const client = (filename = shared, options: Partial<SqliteClient.SqliteClientConfig> = {}) =>
  SqliteClient.layer({ filename, ...options })

MessageLogSuite("sqlite", {
  layer: SqlMessageLog.layer().pipe(Layer.provide(client())),
  second: SqlMessageLog.layer().pipe(Layer.provide(client()))
})
SuppressionsSuite("sqlite", { layer: SqlSuppressions.layer().pipe(Layer.provide(client())) })
engineCases("SQLite", { client })

/** The error an effect failed with; a test failure when it succeeded. */
const failure = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.flatMap(Effect.exit(effect), (exit) =>
    Exit.isFailure(exit) && exit.cause.reasons[0]?._tag === "Fail"
      ? Effect.succeed(exit.cause.reasons[0].error as E)
      : Effect.die(new Error(`expected a failure, got ${String(exit)}`))
  )

/** One instance on `filename`: the log and the suppressions on a client of its own. */
const instance = (filename: string, options: Partial<SqliteClient.SqliteClientConfig> = {}) =>
  Effect.map(
    Layer.build(
      Layer.mergeAll(SqlMessageLog.layer(), SqlSuppressions.layer()).pipe(Layer.provideMerge(client(filename, options)))
    ),
    (context) => ({
      log: Context.get(context, MessageLog.MessageLog),
      suppressions: Context.get(context, Suppressions.Suppressions),
      sql: Context.get(context, SqlClient.SqlClient),
      context
    })
  )

describe("SqlMessageLog on SQLite, as one machine runs it", () => {
  it.live(
    "three clients starting at once on a fresh file: one migrates, every one serves, records outlive them",
    () =>
      Effect.gen(function* () {
        const filename = join(dir.path, `fresh-${randomUUID()}.db`)
        const message = newMessage(`org_${randomUUID()}`)
        yield* Effect.scoped(
          Effect.gen(function* () {
            const [one, two, three] = yield* Effect.all(
              [1, 2, 3].map(() => instance(filename)),
              {
                concurrency: "unbounded"
              }
            )
            if (one === undefined || two === undefined || three === undefined) return assert.fail("not built")
            yield* one.log.accept(message)
            // The client's group commit: a send's events and outcome share a commit.
            assert.isTrue(one.log.sharesCommits)
            assert.strictEqual((yield* three.log.find(message.organizationId, message.id))?.id, message.id)
            assert.deepStrictEqual(yield* two.suppressions.check(message.organizationId, ["a@example.com"]), [])
            const recorded = yield* two.sql<{ readonly migration_id: number; readonly name: string }>`SELECT
              migration_id, name FROM mailroom_sql_migrations`
            assert.deepStrictEqual(
              recorded.map((r) => [r.migration_id, r.name]),
              [
                [1, "messages"],
                [2, "queue"],
                [3, "clustered"]
              ]
            )
            assert.deepStrictEqual(yield* Effect.provide(SqlMigrations.run, three.context), [])
          })
        )
        // Every client is closed: a new one, as after a restart, reads the record back.
        const again = yield* instance(filename)
        assert.strictEqual((yield* again.log.find(message.organizationId, message.id))?.status, "sending")
      }).pipe(Effect.scoped),
    20_000
  )

  it.live("a client renaming columns for the application's own queries (camelCase) leaves the log's alone", () =>
    Effect.gen(function* () {
      const filename = join(dir.path, `camel-${randomUUID()}.db`)
      const { log } = yield* instance(filename, {
        transformQueryNames: Str.camelToSnake,
        transformResultNames: Str.snakeToCamel
      })
      const message = newMessage(`org_${randomUUID()}`)
      yield* log.accept(message)
      const found = yield* log.find(message.organizationId, message.id)
      assert.strictEqual(found?.organization_id, message.organizationId)
      assert.strictEqual(found?.recipients[0]?.updated_at, message.createdAt)
      assert.deepStrictEqual(
        (yield* log.list(message.organizationId, { limit: 10 })).data.map((r) => r.id),
        [message.id]
      )
    }).pipe(Effect.scoped)
  )

  it.live(
    "a file another connection holds locked is Unavailable once the client stops waiting; nothing half-written",
    () =>
      Effect.gen(function* () {
        const filename = join(dir.path, `locked-${randomUUID()}.db`)
        const { log, suppressions } = yield* instance(filename, { busyTimeout: "300 millis" })
        const org = `org_${randomUUID()}`
        const kept = newMessage(org)
        yield* log.accept(kept)

        // Another process's long write transaction, as a migration or a bulk import would hold it.
        const other = new DatabaseSync(filename)
        yield* Effect.addFinalizer(() => Effect.sync(() => other.isOpen && other.close()))
        other.exec("BEGIN IMMEDIATE")
        const refused = newMessage(org)
        for (const error of [
          yield* failure(log.accept(refused)),
          yield* failure(log.apply({ ...newEvent(kept), organization_id: org })),
          yield* failure(
            suppressions.add(org, [{ email: "a@example.com", reason: "manual" }], new Date().toISOString())
          )
        ]) {
          assert.isTrue(MailroomError.isUnavailable(error), String(error))
          assert.match(error.message, /the database cannot be reached right now; try again later$/)
        }
        // Readers are not held up by another connection's write (WAL).
        assert.strictEqual((yield* log.find(org, kept.id))?.id, kept.id)
        other.exec("COMMIT")

        assert.isUndefined(yield* log.find(org, refused.id), "what was refused was not written")
        yield* log.accept(refused)
        assert.strictEqual((yield* log.list(org, { limit: 10 })).data.length, 2)
      }).pipe(Effect.scoped),
    20_000
  )

  it.live("an instance starting on a current file while another connection writes serves at once", () =>
    Effect.gen(function* () {
      const filename = join(dir.path, `current-${randomUUID()}.db`)
      const first = yield* instance(filename)
      const org = `org_${randomUUID()}`
      const kept = newMessage(org)
      yield* first.log.accept(kept)

      // A long write transaction (a bulk import): the schema is current, so a restart must not wait on it.
      const other = new DatabaseSync(filename)
      yield* Effect.addFinalizer(() => Effect.sync(() => other.isOpen && other.close()))
      other.exec("BEGIN IMMEDIATE")
      const second = yield* instance(filename, { busyTimeout: "300 millis" })
      assert.strictEqual((yield* second.log.find(org, kept.id))?.id, kept.id)
      assert.deepStrictEqual(yield* Effect.provide(SqlMigrations.run, second.context), [])
      other.exec("COMMIT")
    }).pipe(Effect.scoped)
  )

  it.live(
    "a write that misses its deadline waiting for the lock is Unavailable at once, and rolled back when the lock frees",
    () =>
      Effect.gen(function* () {
        const filename = join(dir.path, `late-${randomUUID()}.db`)
        const log = Context.get(
          yield* Layer.build(SqlMessageLog.layer({ timeout: "200 millis" }).pipe(Layer.provide(client(filename)))),
          MessageLog.MessageLog
        )
        const other = new DatabaseSync(filename)
        yield* Effect.addFinalizer(() => Effect.sync(() => other.isOpen && other.close()))
        other.exec("BEGIN IMMEDIATE")
        const late = newMessage(`org_${randomUUID()}`)
        const fiber = yield* Effect.forkChild(Effect.exit(log.accept(late)))
        // Well past the deadline, and well within the client's busy timeout (5 s): the caller has its
        // answer while the write still waits...
        yield* Effect.sleep("1 second")
        const answered = fiber.pollUnsafe()
        assert.isTrue(answered !== undefined && Exit.isSuccess(answered) && Exit.isFailure(answered.value))
        // ...and once the lock frees, the write takes it and rolls back: a read after it finds nothing.
        other.exec("COMMIT")
        assert.isUndefined(yield* log.find(late.organizationId, late.id))
      }).pipe(Effect.scoped),
    20_000
  )
})

const newEvent = (message: { readonly id: string }) => ({
  id: `evt_${randomUUID()}`,
  type: "delivered" as const,
  message_id: message.id,
  recipient: "alice@example.com",
  occurred_at: new Date().toISOString(),
  provider: "suite",
  raw: {}
})
