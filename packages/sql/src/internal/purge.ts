// Retention: the messages created before a time deleted with every row of theirs, organisation by
// organisation through the by-time index, in batches short enough to hold no table for long.
import type { MailroomError } from "@mailroom/core"
import * as Effect from "effect/Effect"
import type * as SqlClient from "effect/sql/SqlClient"
import type { Database } from "./database.js"

/** Old records are deleted this many at a time, each batch its own short transaction. */
const purgeBatch = 500

/**
 * The organisations that have messages, read from the by-time index one seek each (a loose index
 * scan: neither engine skips through an index by itself without statistics).
 */
const organizations = (sql: SqlClient.SqlClient) =>
  Effect.map(
    sql<{ readonly organization_id: string }>`WITH RECURSIVE o (organization_id) AS (
        SELECT (SELECT organization_id FROM mailroom_messages ORDER BY organization_id LIMIT 1)
        UNION ALL
        SELECT (SELECT m.organization_id FROM mailroom_messages m WHERE m.organization_id > o.organization_id
          ORDER BY m.organization_id LIMIT 1)
        FROM o WHERE o.organization_id IS NOT NULL
      ) SELECT organization_id FROM o WHERE organization_id IS NOT NULL`,
    (rows) => rows.map((row) => row.organization_id)
  )

/**
 * Deletes the messages created before `before` with every row of theirs, a batch per transaction,
 * organisation by organisation through the by-time index. Not by id: ids are UUIDv7s made at accept
 * time, but a record's `created_at` is whatever its writer gave, and only that decides its age.
 */
export const purge = ({ sql, forUpdate, transaction, run }: Database, before: string) => {
  const batch = (organizationId: string) =>
    transaction(
      Effect.gen(function* () {
        const rows = yield* sql<{ readonly id: string }>`SELECT id FROM mailroom_messages
          WHERE organization_id = ${organizationId} AND created_at < ${before}
          ORDER BY created_at LIMIT ${purgeBatch}${forUpdate}`
        const ids = rows.map((row) => row.id)
        if (ids.length === 0) return 0
        // Children first: on SQLite the foreign keys' cascade only runs where the client turned it on.
        for (const table of ["mailroom_message_events", "mailroom_message_tags", "mailroom_message_recipients"]) {
          yield* sql`DELETE FROM ${sql.literal(table)} WHERE message_id IN ${sql.in(ids)}`
        }
        yield* sql`DELETE FROM mailroom_messages WHERE id IN ${sql.in(ids)}`
        return ids.length
      })
    )
  const loop = (organizationId: string, purged: number): Effect.Effect<number, MailroomError.Unavailable> =>
    Effect.flatMap(run("deleting old messages", batch(organizationId)), (deleted) =>
      deleted < purgeBatch ? Effect.succeed(purged + deleted) : loop(organizationId, purged + deleted)
    )
  return Effect.flatMap(run("listing the organisations with messages", organizations(sql)), (ids) =>
    Effect.reduce(
      ids,
      () => 0,
      (purged, organizationId) => loop(organizationId, purged)
    )
  )
}
