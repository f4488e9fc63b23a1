// Fills the message tables of @mailroom/sql with `count` records of one organisation in a few bulk
// statements (generate_series on PostgreSQL, a recursive CTE on SQLite), spread over 30 days.
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export const organizationId = "org_bench"
/** The records' first instant; they are spread evenly over the 30 days after it. */
export const start = Date.UTC(2026, 0, 1)
const span = 30 * 86_400_000

/** Each row's number, UUIDv7-shaped id and ISO creation time, in the engine's own words. */
const sequence = (dialect: "pg" | "sqlite", count: number) =>
  dialect === "pg"
    ? `CREATE TABLE bench_seq AS SELECT n, substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-7' || c || '-8000-' || r AS id,
        created_at FROM (
          SELECT n, lpad(to_hex(ms), 12, '0') AS h,
            to_char(to_timestamp(ms / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at,
            lpad(to_hex(n % 4096), 3, '0') AS c, lpad(to_hex(n), 12, '0') AS r
          FROM (SELECT n, ${start}::bigint + (n::bigint * ${span}) / ${count} AS ms
            FROM generate_series(1, ${count}) n) t
        ) u`
    : `CREATE TABLE bench_seq AS
        WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < ${count})
        SELECT n, printf('%08x-%04x-7%03x-8000-%012x', ms / 65536, ms % 65536, n % 4096, n) AS id,
          strftime('%Y-%m-%dT%H:%M:%S', ms / 1000, 'unixepoch') || printf('.%03dZ', ms % 1000) AS created_at
        FROM (SELECT n, ${start} + (n * ${span}) / ${count} AS ms FROM s)`

const status = "CASE n % 8 WHEN 0 THEN 'bounced' WHEN 1 THEN 'delivery_delayed' ELSE 'delivered' END"

/**
 * The statements, in order. Each message: to one of `count / 10` customers (so each has ten messages,
 * whatever the count), bcc one audit address, one of five `category` tags; one in eight bounced. Every
 * filter of the bench then answers pages of the same size on either database.
 */
export const statements = (dialect: "pg" | "sqlite", count: number): ReadonlyArray<string> => [
  sequence(dialect, count),
  `INSERT INTO mailroom_messages (id, organization_id, created_at, status, from_address, from_name, subject,
      attachments, html_bytes, text_bytes, provider, provider_message_id, event_count)
    SELECT id, '${organizationId}', created_at, ${status}, 'billing@acme.example', 'Acme Billing', 'Your receipt',
      '[]', 1200, 300, 'bench', 'pm-' || id, 0 FROM bench_seq`,
  ...(
    [
      [0, `'user' || (n % ${Math.max(1, Math.floor(count / 10))}) || '@example.com'`, "to"],
      [1, "'audit@acme.example'", "bcc"]
    ] as const
  ).map(
    ([position, address, kind]) => `INSERT INTO mailroom_message_recipients (message_id, position, organization_id,
        created_at, email, address, kind, state, updated_at)
      SELECT id, ${position}, '${organizationId}', created_at, ${address}, ${address}, '${kind}', ${status}, created_at
      FROM bench_seq`
  ),
  `INSERT INTO mailroom_message_tags (message_id, position, organization_id, created_at, name, value)
    SELECT id, 0, '${organizationId}', created_at, 'category',
      CASE n % 5 WHEN 0 THEN 'receipt' WHEN 1 THEN 'welcome' WHEN 2 THEN 'reset' WHEN 3 THEN 'invoice' ELSE 'alert' END
    FROM bench_seq`,
  "DROP TABLE bench_seq",
  "ANALYZE"
]

/**
 * Runs the statements on the client in context, in one transaction, the tables' secondary indexes
 * dropped before and made again after (a sort beats a million index insertions), as read from the
 * database's own catalogue. On PostgreSQL the foreign keys' checks are skipped meanwhile
 * (`session_replication_role`, the bulk loader's switch): every child row comes from a message row.
 */
export const fill = (count: number): Effect.Effect<void, unknown, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const dialect = sql.onDialectOrElse({ pg: () => "pg" as const, orElse: () => "sqlite" as const })
    const [analyze, ...rest] = [...statements(dialect, count)].reverse()
    yield* sql.withTransaction(
      Effect.gen(function* () {
        const indexes = yield* sql<{ readonly name: string; readonly definition: string }>`${sql.literal(
          dialect === "pg"
            ? `SELECT indexname AS name, indexdef AS definition FROM pg_indexes
                WHERE schemaname = current_schema() AND tablename LIKE 'mailroom_%' AND indexdef NOT LIKE 'CREATE UNIQUE%'`
            : `SELECT name, sql AS definition FROM sqlite_master
                WHERE type = 'index' AND tbl_name LIKE 'mailroom_%' AND sql IS NOT NULL AND sql NOT LIKE 'CREATE UNIQUE%'`
        )}`
        if (dialect === "pg") yield* sql.unsafe("SET LOCAL session_replication_role = replica").unprepared
        for (const { name } of indexes) yield* sql.unsafe(`DROP INDEX ${name}`).unprepared
        for (const statement of rest.reverse()) yield* sql.unsafe(statement).unprepared
        for (const { definition } of indexes) yield* sql.unsafe(definition).unprepared
      })
    )
    if (analyze !== undefined) yield* sql.unsafe(analyze).unprepared
  })
