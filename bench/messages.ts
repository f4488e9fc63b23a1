// GET /emails at scale (issue 26): `MessageLog.list({ limit: 100 })` of @mailroom/sql over 1,000,000
// stored records against the same query over 1,000, on PostgreSQL and on SQLite, with and without
// each filter; the two databases are filled alike (messagesFill.ts), rounds interleaved.
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { PgClient } from "@effect/sql-pg"
import { MessageLog } from "@mailroom/core"
import { SqlMessageLog } from "@mailroom/sql"
import { SqliteClient } from "@mailroom/sqlite"
import { startPostgresCluster } from "@mailroom/test-support"
import { Context, Effect, Exit, Layer, Redacted, Scope } from "effect"
import type { SqlClient } from "effect/sql"
import { compare, verdict } from "./compare.ts"
import { fill, organizationId, start } from "./messagesFill.ts"

const small = 1_000
const large = 1_000_000
const target = 2

const day = (n: number) => new Date(start + n * 86_400_000).toISOString()
const queries: ReadonlyArray<readonly [string, MessageLog.ListQuery]> = [
  ["no filter", { limit: 100 }],
  ["status=bounced (1 in 8)", { limit: 100, status: "bounced" }],
  ["to= an address on every message", { limit: 100, to: "audit@acme.example" }],
  ["to= a customer's (10 messages)", { limit: 100, to: "user42@example.com" }],
  ["tag=category:reset (1 in 5)", { limit: 100, tag: { name: "category", value: "reset" } }],
  ["since/until: 5 days mid-month", { limit: 100, since: day(10), until: day(15) }]
]

/** A log on its own client, filled with `count` records; closed with `scope`. */
const filled = (scope: Scope.Scope, client: Layer.Layer<SqlClient.SqlClient, unknown>, count: number) =>
  Effect.gen(function* () {
    const context = yield* Layer.buildWithScope(SqlMessageLog.layer().pipe(Layer.provideMerge(client)), scope)
    const started = performance.now()
    yield* Effect.provide(fill(count), context)
    return { log: Context.get(context, MessageLog.MessageLog), seconds: (performance.now() - started) / 1000 }
  })

const ms = (value: number) => value.toFixed(2)

/** One row per query: both sizes' min and median, the ratio, and the verdict (on the min). */
const measure = async (engine: string, smallLog: MessageLog.MessageLog, largeLog: MessageLog.MessageLog) => {
  const rows: Array<object> = []
  for (const [name, query] of queries) {
    const list = (log: MessageLog.MessageLog) => () => Effect.runPromise(log.list(organizationId, query))
    const contenders = [
      { name: "1,000", run: list(smallLog) },
      { name: "1,000,000", run: list(largeLog) }
    ]
    const { min, median } = await compare(contenders, { rounds: 7, perRound: 30 })
    const ratio = (of: ReadonlyArray<number>) => (of[1] ?? 0) / (of[0] ?? 1)
    rows.push({
      engine,
      "list({ limit: 100 })": name,
      "1,000 ms (min / median)": `${ms(min[0] ?? 0)} / ${ms(median[0] ?? 0)}`,
      "1,000,000 ms (min / median)": `${ms(min[1] ?? 0)} / ${ms(median[1] ?? 0)}`,
      "ratio (min / median)": `${ratio(min).toFixed(2)}x / ${ratio(median).toFixed(2)}x`,
      target: `≤ ${target}x: ${verdict(ratio(min) <= target)}`
    })
  }
  return rows
}

export const run = async (): Promise<ReadonlyArray<object>> => {
  const cluster = await startPostgresCluster()
  const dir = mkdtempSync(path.join(tmpdir(), "mailroom-bench-messages-"))
  const scope = Effect.runSync(Scope.make())
  try {
    const pg = (database: string) =>
      PgClient.layer({ url: Redacted.make(cluster.url.replace(/\/postgres$/, `/${database}`)) })
    await cluster.psql("CREATE DATABASE bench_small")
    await cluster.psql("CREATE DATABASE bench_large")
    const sqlite = (name: string) => SqliteClient.layer({ filename: path.join(dir, `${name}.db`) })
    const [pgSmall, pgLarge, sqliteSmall, sqliteLarge] = await Effect.runPromise(
      Effect.all([
        filled(scope, pg("bench_small"), small),
        filled(scope, pg("bench_large"), large),
        filled(scope, sqlite("small"), small),
        filled(scope, sqlite("large"), large)
      ])
    )
    console.log(
      `filled ${large.toLocaleString("en")} records in bulk statements: PostgreSQL ${pgLarge.seconds.toFixed(1)} s, SQLite ${sqliteLarge.seconds.toFixed(1)} s`
    )
    return [
      ...(await measure("PostgreSQL", pgSmall.log, pgLarge.log)),
      ...(await measure("SQLite", sqliteSmall.log, sqliteLarge.log))
    ]
  } finally {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    rmSync(dir, { recursive: true, force: true })
    await cluster.destroy()
  }
}
