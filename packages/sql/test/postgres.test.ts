// SqlMessageLog and SqlSuppressions on a real PostgreSQL: core's suites with two instances on one
// database, the engine cases, three instances migrating a fresh database at once, and an outage.
import { randomUUID } from "node:crypto"
import { PgClient } from "@effect/sql-pg"
import { assert, describe, it } from "@effect/vitest"
import { MailroomError, MessageLog, Suppressions } from "@mailroom/core"
import { expectConfigError, MessageLogSuite, newMessage, SuppressionsSuite } from "@mailroom/core/testing"
import { startPostgresCluster } from "@mailroom/test-support"
import { Config, ConfigProvider, Context, Duration, Effect, Exit, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, onTestFinished } from "vitest"
import { SqlMessageLog, SqlMigrations, SqlSuppressions } from "../src/index.js"
import { engineCases } from "./support/engineCases.js"

// Started while tests are collected: the suites' layers need its URL.
const cluster = await startPostgresCluster()
afterAll(() => cluster.destroy())

/**
 * A pool of its own on `database`, as one more instance of a server has. The password is one the
 * cluster does not ask for (it trusts local connections): no error may show it.
 */
const client = (database = "postgres") =>
  PgClient.layer({
    url: Redacted.make(`postgres://postgres:hunter2@127.0.0.1:${cluster.port}/${database}`),
    maxConnections: 4
  })

MessageLogSuite("postgres", {
  layer: SqlMessageLog.layer().pipe(Layer.provide(client())),
  second: SqlMessageLog.layer().pipe(Layer.provide(client()))
})
SuppressionsSuite("postgres", { layer: SqlSuppressions.layer().pipe(Layer.provide(client())) })
engineCases("PostgreSQL", { client })

/** The error an effect failed with; a test failure when it succeeded. */
const failure = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.flatMap(Effect.exit(effect), (exit) =>
    Exit.isFailure(exit) && exit.cause.reasons[0]?._tag === "Fail"
      ? Effect.succeed(exit.cause.reasons[0].error as E)
      : Effect.die(new Error(`expected a failure, got ${String(exit)}`))
  )

describe("SqlMessageLog on PostgreSQL, as a fleet runs it", () => {
  it.live(
    "three instances starting at once on a fresh database: one migrates, every one serves",
    () =>
      Effect.gen(function* () {
        const database = `fresh_${randomUUID().replaceAll("-", "")}`
        yield* Effect.promise(() => cluster.psql(`CREATE DATABASE ${database}`))
        const instance = Layer.mergeAll(SqlMessageLog.layer(), SqlSuppressions.layer()).pipe(
          Layer.provideMerge(client(database))
        )
        const [one, two, three] = yield* Effect.all(
          [1, 2, 3].map(() => Layer.build(instance)),
          {
            concurrency: "unbounded"
          }
        )
        if (one === undefined || two === undefined || three === undefined) return assert.fail("not built")
        const message = newMessage(`org_${randomUUID()}`)
        yield* Context.get(one, MessageLog.MessageLog).accept(message)
        // Each write its own transaction on a pooled connection: a send's events, then its outcome.
        assert.isFalse(Context.get(one, MessageLog.MessageLog).sharesCommits)
        assert.strictEqual(
          (yield* Context.get(three, MessageLog.MessageLog).find(message.organizationId, message.id))?.id,
          message.id
        )
        assert.deepStrictEqual(
          yield* Context.get(two, Suppressions.Suppressions).check(message.organizationId, ["a@example.com"]),
          []
        )
        const sql = Context.get(two, SqlClient.SqlClient)
        const recorded = yield* sql<{ readonly migration_id: number; readonly name: string }>`SELECT migration_id, name
          FROM mailroom_sql_migrations`
        assert.deepStrictEqual(
          recorded.map((r) => [r.migration_id, r.name]),
          [
            [1, "messages"],
            [2, "queue"],
            [3, "clustered"]
          ]
        )
        assert.deepStrictEqual(yield* Effect.provide(SqlMigrations.run, three), [], "later runs find it current")
        const others = yield* sql`SELECT 1 FROM information_schema.tables WHERE table_name = 'mailroom_migrations'`
        assert.strictEqual(others.length, 0, "the organisations' migrations table is not this schema's")
      }).pipe(Effect.scoped),
    20_000
  )

  it.live(
    "a database that is down or stalls is Unavailable, showing neither URL nor password; back up, all is there",
    () =>
      Effect.gen(function* () {
        // Whatever happens below, the next tests find the database up.
        onTestFinished(async () => {
          cluster.resume()
          await cluster.start()
        })
        const context = yield* Layer.build(
          Layer.mergeAll(
            SqlMessageLog.layer({ timeout: "1 second" }),
            SqlSuppressions.layer({ timeout: "1 second" })
          ).pipe(Layer.provide(client()))
        )
        const log = Context.get(context, MessageLog.MessageLog)
        const suppressions = Context.get(context, Suppressions.Suppressions)
        const org = `org_${randomUUID()}`
        const kept = newMessage(org)
        yield* log.accept(kept)

        yield* Effect.promise(() => cluster.stop())
        const refused = newMessage(org)
        for (const error of [
          yield* failure(log.accept(refused)),
          yield* failure(log.find(org, kept.id)),
          yield* failure(log.list(org, { limit: 10 })),
          yield* failure(suppressions.check(org, ["a@example.com"]))
        ]) {
          assert.isTrue(MailroomError.isUnavailable(error), String(error))
          assert.match(error.message, /the database cannot be reached right now; try again later$/)
          assert.notInclude(error.message, "hunter2")
          assert.notInclude(error.message, String(cluster.port))
          // What HTTP answers as Retry-After: a client knows when to try the send again.
          assert.deepStrictEqual(MailroomError.isUnavailable(error) && error.retryAfter, Duration.seconds(5))
        }

        yield* Effect.promise(() => cluster.start())
        assert.strictEqual((yield* log.find(org, kept.id))?.status, "sending", "what was accepted is there")
        assert.isUndefined(yield* log.find(org, refused.id), "what was refused was not written")
        yield* log.accept(refused)

        // Frozen: connections stay open and nothing answers; the deadline answers instead.
        cluster.pause()
        const started = Date.now()
        const stalled = yield* failure(log.find(org, kept.id)).pipe(
          Effect.ensuring(Effect.sync(() => cluster.resume()))
        )
        assert.isTrue(MailroomError.isUnavailable(stalled))
        assert.isAtMost(Date.now() - started, 4000)
        assert.strictEqual((yield* log.list(org, { limit: 10 })).data.length, 2)
      }).pipe(Effect.scoped),
    30_000
  )

  it.live("a timeout that is no duration above zero is a ConfigError naming it, from layer and layerConfig", () =>
    Effect.gen(function* () {
      yield* expectConfigError(Layer.provide(SqlMessageLog.layer({ timeout: 0 }), client()), "timeout")
      yield* expectConfigError(Layer.provide(SqlSuppressions.layer({ timeout: "soon" as never }), client()), "timeout")
      yield* expectConfigError(
        SqlMessageLog.layerConfig({ timeout: Config.Duration("TIMEOUT") }).pipe(
          Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({ TIMEOUT: "0 seconds" }))),
          Layer.provide(client())
        ),
        "timeout"
      )
    }).pipe(Effect.scoped)
  )
})
