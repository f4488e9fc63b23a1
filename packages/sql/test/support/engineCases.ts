// What the SQL log must do on either engine beyond core's suites, checked by reading the tables
// directly: concurrent events from two instances applied once and without lost updates, purge in
// batches taking every row of a message with it, and the schema's own migrations table.
import { randomUUID } from "node:crypto"
import { assert, describe, it } from "@effect/vitest"
import { MessageLog, Suppressions } from "@mailroom/core"
import { eventOf, newMessage } from "@mailroom/core/testing"
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { SqlMessageLog, SqlSuppressions } from "../../src/index.js"

export interface Engine {
  /** A client of one more instance on the shared database. */
  readonly client: () => Layer.Layer<SqlClient.SqlClient, unknown>
}

const at = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms).toISOString()

/** One instance: its own client, the log and the suppressions on it. */
const instance = (engine: Engine) =>
  Effect.map(
    Layer.build(
      Layer.mergeAll(SqlMessageLog.layer(), SqlSuppressions.layer()).pipe(Layer.provideMerge(engine.client()))
    ),
    (context) => ({
      log: Context.get(context, MessageLog.MessageLog),
      suppressions: Context.get(context, Suppressions.Suppressions),
      sql: Context.get(context, SqlClient.SqlClient)
    })
  )

/** A count of rows, whatever type the engine answers it in (PostgreSQL's bigint is a string). */
const count = (rows: Effect.Effect<ReadonlyArray<{ readonly n?: unknown }>, unknown>) =>
  Effect.map(rows, (found) => Number(found[0]?.n))

export const engineCases = (name: string, engine: Engine): void => {
  describe(`SqlMessageLog on ${name}`, () => {
    it.live(
      "one event applied from two instances at once applies once; different recipients' events all land",
      () =>
        Effect.gen(function* () {
          const [one, two] = [yield* instance(engine), yield* instance(engine)]
          const message = newMessage(`org_${randomUUID()}`)
          yield* one.log.accept(message)
          yield* two.log.settle(message.id, { _tag: "Sent", provider: "suite", providerMessageId: `pm-${message.id}` })
          const event = eventOf(message, "delivered", "alice@example.com", at(1))
          const applied = yield* Effect.all(
            Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? one : two).log.apply(event)),
            { concurrency: "unbounded" }
          )
          assert.strictEqual(applied.filter((a) => a.applied).length, 1)
          // The other two recipients at once, from either instance: neither change may be lost.
          yield* Effect.all(
            [
              one.log.apply(eventOf(message, "delivered", "Bob@Example.COM", at(2))),
              two.log.apply(eventOf(message, "delivered", "carol@example.net", at(3)))
            ],
            { concurrency: "unbounded" }
          )
          const record = yield* one.log.find(message.organizationId, message.id)
          assert.deepStrictEqual(
            record?.recipients.map((r) => r.state),
            ["delivered", "delivered", "delivered"]
          )
          assert.strictEqual(record?.status, "delivered")
          assert.strictEqual(record?.events.length, 3)
          const stored = yield* count(
            one.sql`SELECT count(*) AS n FROM mailroom_messages WHERE id = ${message.id} AND status = 'delivered'`
          )
          assert.strictEqual(stored, 1, "the status column holds the recipients' status")
        }).pipe(Effect.scoped),
      30_000
    )

    it.live(
      "the provider's answer after the delivery events: their states and status stay, its id and reason are kept",
      () =>
        Effect.gen(function* () {
          const { log } = yield* instance(engine)
          const org = `org_${randomUUID()}`
          // Every recipient delivered first (the outbox publishes before it answers), then the answer.
          const all = newMessage(org)
          yield* log.accept(all)
          yield* log.applyAll(all.recipients.map((r, i) => eventOf(all, "delivered", r.email, at(i))))
          yield* log.settle(all.id, { _tag: "Sent", provider: "suite", providerMessageId: `pm-${all.id}` })
          yield* log.settle(all.id, { _tag: "Failed", provider: "suite", reason: "a late second answer" })
          const record = yield* log.find(org, all.id)
          assert.deepStrictEqual(
            record?.recipients.map((r) => r.state),
            ["delivered", "delivered", "delivered"]
          )
          assert.strictEqual(record?.status, "delivered")
          assert.strictEqual(record?.provider_message_id, `pm-${all.id}`)
          assert.isNull(record?.reason)
          assert.deepStrictEqual(yield* log.resolve("suite", `pm-${all.id}`), { id: all.id, organizationId: org })
          // One recipient delivered first: the answer moves the two still sending, and the status with them.
          const one = newMessage(org)
          yield* log.accept(one)
          yield* log.apply(eventOf(one, "delivered", "alice@example.com", at(1)))
          yield* log.settle(one.id, { _tag: "Failed", provider: "suite", reason: "refused" })
          const failed = yield* log.find(org, one.id)
          assert.deepStrictEqual(
            failed?.recipients.map((r) => r.state),
            ["delivered", "failed", "failed"]
          )
          assert.strictEqual(failed?.status, "failed")
          assert.strictEqual(failed?.reason, "refused")
          // The status filter reads the index on the status: each message is found under its own.
          const page = (status: MessageLog.State) =>
            Effect.map(log.list(org, { status, limit: 10 }), (p) => p.data.map((r) => r.id))
          assert.deepStrictEqual(yield* page("delivered"), [all.id])
          assert.deepStrictEqual(yield* page("failed"), [one.id])
          assert.deepStrictEqual(yield* page("sending"), [])
        }).pipe(Effect.scoped),
      30_000
    )

    it.live(
      "purge deletes old messages in batches, with their recipients, tags and events; suppressions stay",
      () =>
        Effect.gen(function* () {
          const { log, suppressions, sql } = yield* instance(engine)
          const org = `org_${randomUUID()}`
          const old = Array.from({ length: 1100 }, (_, i) =>
            newMessage(org, { createdAt: new Date(Date.UTC(1999, 0, 1) + i).toISOString() })
          )
          yield* Effect.forEach(old, log.accept, { concurrency: 8, discard: true })
          yield* log.settle(old[0]?.id ?? "", { _tag: "Sent", provider: "suite", providerMessageId: "pm-old" })
          yield* log.apply(eventOf(old[0] ?? newMessage(org), "delivered", "alice@example.com", at(1)))
          yield* suppressions.add(
            org,
            [{ email: "alice@example.com", reason: "manual", messageId: old[0]?.id ?? "" }],
            at(0)
          )
          const recent = newMessage(org)
          yield* log.accept(recent)

          const purged = yield* log.purge("1999-06-01T00:00:00.000Z")
          assert.isAtLeast(purged, old.length, "more than two batches")
          const left = (table: string) =>
            count(sql`SELECT count(*) AS n FROM ${sql(table)} WHERE organization_id = ${org}`)
          assert.strictEqual(yield* left("mailroom_messages"), 1, "the recent message only")
          assert.strictEqual(yield* left("mailroom_message_recipients"), recent.recipients.length)
          assert.strictEqual(yield* left("mailroom_message_tags"), recent.tags.length)
          const events = yield* count(
            sql`SELECT count(*) AS n FROM mailroom_message_events WHERE message_id IN ${sql.in(old.map((m) => m.id))}`
          )
          assert.strictEqual(events, 0)
          assert.isUndefined(yield* log.resolve("suite", "pm-old"))
          assert.strictEqual((yield* suppressions.check(org, ["alice@example.com"])).length, 1)
        }).pipe(Effect.scoped),
      30_000
    )

    it.live("the schema's migrations are recorded in mailroom_sql_migrations, and a second run applies nothing", () =>
      Effect.gen(function* () {
        const { sql } = yield* instance(engine)
        const rows = yield* sql.unsafe<{ readonly migration_id: number; readonly name: string }>(
          "SELECT migration_id, name FROM mailroom_sql_migrations ORDER BY migration_id"
        )
        assert.deepStrictEqual(
          rows.map((r) => [Number(r.migration_id), r.name]),
          [
            [1, "messages"],
            [2, "queue"],
            [3, "clustered"]
          ]
        )
      }).pipe(Effect.scoped)
    )
  })
}
