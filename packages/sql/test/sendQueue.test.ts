// Scheduled sends on the log's own database: core's SendQueue.layerSql beside SqlMessageLog, on SQLite
// and on PostgreSQL with three instances, each message sent once; readiness when the queue's table is gone.
import { join } from "node:path"
import { PgClient } from "@effect/sql-pg"
import { assert, describe, it } from "@effect/vitest"
import {
  EmailProvider,
  Mailer,
  Mailroom,
  MailroomError,
  MessageLog,
  ObjectStore,
  Organizations,
  SendQueue
} from "@mailroom/core"
import { SqliteClient } from "@mailroom/sqlite"
import { startPostgresCluster, tempDir } from "@mailroom/test-support"
import { Context, Effect, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll } from "vitest"
import { SqlMessageLog, SqlSuppressions } from "../src/index.js"

const cluster = await startPostgresCluster()
const dir = await tempDir("sql-queue")
afterAll(async () => {
  await cluster.destroy()
  await dir.remove()
})

const organizations = Organizations.makeStatic({
  serviceDomain: "mailroom.test",
  organizations: [{ id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"] }]
})
const acme = { orgId: "org_acme", slug: "acme" }

/** One instance: Mailroom on the database of `client`, its queue there too, a memory provider of its own. */
const instance = (client: Layer.Layer<SqlClient.SqlClient, unknown>) => {
  const provider = EmailProvider.makeMemory()
  const layer = Mailroom.layer({
    provider: Layer.succeed(EmailProvider.EmailProvider, provider),
    store: ObjectStore.layerMemory(),
    organizations: Layer.succeed(Organizations.Organizations, organizations),
    messages: Layer.merge(SqlMessageLog.layer(), SqlSuppressions.layer()).pipe(Layer.provide(client)),
    queue: SendQueue.layerSql({ pollInterval: "100 millis" }).pipe(Layer.provide(client)),
    worker: { concurrency: 4 }
  }).pipe(Layer.provideMerge(client))
  return { provider, layer }
}

const message = (n: number, scheduledAt: string) => ({
  from: "billing@acme.example",
  to: [`user${n}@example.com`],
  subject: `Later ${n}`,
  body: { text: "Hi" },
  scheduled_at: scheduledAt
})

/** Waits (polling the log, as a user reading `GET /emails` would) until no message of `ids` is scheduled or sending. */
const settled = (log: MessageLog.MessageLog, ids: ReadonlyArray<string>, timeoutMs: number) =>
  Effect.gen(function* () {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const records = yield* Effect.forEach(ids, (id) => log.find(acme.orgId, id), { concurrency: 8 })
      if (records.every((r) => r !== undefined && r.status !== "scheduled" && r.status !== "sending")) return records
      if (Date.now() > deadline) return assert.fail("the scheduled messages were not all sent in time")
      yield* Effect.sleep("200 millis")
    }
  })

describe("SendQueue.layerSql beside SqlMessageLog", () => {
  it.live(
    "SQLite: a message scheduled 2 s ahead is sent once at its time, on the log's own file",
    () =>
      Effect.gen(function* () {
        const one = instance(SqliteClient.layer({ filename: join(dir.path, "one.db") }))
        const context = yield* Layer.build(one.layer)
        const mailer = Context.get(context, Mailer.Mailer)
        const when = new Date(Date.now() + 2000).toISOString()
        const { response } = yield* mailer.send(acme, message(1, when))
        assert.strictEqual(one.provider.sent.length, 0)
        const [record] = yield* settled(Context.get(context, MessageLog.MessageLog), [response.message_id], 15_000)
        assert.oneOf(record?.status, ["sent", "delivered"])
        assert.strictEqual(one.provider.sent.length, 1)
        assert.isAtLeast(Date.parse(record?.recipients[0]?.updated_at ?? ""), Date.parse(when))
        const sql = Context.get(context, SqlClient.SqlClient)
        const looks = yield* sql<{ readonly n: number }>`SELECT COUNT(*) AS n FROM mailroom_send_queue`
        assert.strictEqual(Number(looks[0]?.n), 1, "the queue is a table on the same file")
        yield* Context.get(context, SendQueue.SendQueue).check
        yield* sql`DROP TABLE mailroom_send_queue`
        const down = yield* Effect.flip(Context.get(context, SendQueue.SendQueue).check)
        assert.isTrue(MailroomError.isUnavailable(down))
      }).pipe(Effect.scoped),
    30_000
  )

  it.live(
    "PostgreSQL: three instances drain sixty messages due at the same second, each sent exactly once",
    () =>
      Effect.gen(function* () {
        const client = () => PgClient.layer({ url: Redacted.make(cluster.url), maxConnections: 4 })
        const three = [instance(client()), instance(client()), instance(client())]
        const contexts = yield* Effect.forEach(three, (i) => Layer.build(i.layer), { concurrency: "unbounded" })
        const mailer = Context.get(contexts[0] as Context.Context<Mailer.Mailer>, Mailer.Mailer)
        const when = new Date(Math.ceil((Date.now() + 3000) / 1000) * 1000).toISOString()
        const ids = yield* Effect.forEach(
          Array.from({ length: 60 }, (_, n) => n),
          (n) => Effect.map(mailer.send(acme, message(n, when)), ({ response }) => response.message_id),
          { concurrency: 8 }
        )
        const log = Context.get(contexts[1] as Context.Context<MessageLog.MessageLog>, MessageLog.MessageLog)
        const records = yield* settled(log, ids, 30_000)
        assert.isTrue(records.every((r) => r?.status === "sent" || r?.status === "delivered"))
        const sent = three.flatMap((i) => i.provider.sent.map((s) => s.email.subject))
        assert.strictEqual(sent.length, 60, "none twice, none lost")
        assert.strictEqual(new Set(sent).size, 60)
        assert.isAbove(three.filter((i) => i.provider.sent.length > 0).length, 1, "shared by the instances")
      }).pipe(Effect.scoped),
    60_000
  )
})
