// The one query behind `GET /emails`: newest first (by creation time, then id), a keyset cursor, and
// each filter read from the index that holds it in list order, so a page costs the same at any size.
import { type MessageLog, Suppressions } from "@mailroom/core"
import type * as SqlClient from "effect/sql/SqlClient"
import type * as Statement from "effect/sql/Statement"
import { columns, type MessageRow } from "./records.js"

/** Where a page starts: after the row with this creation time and id. */
export interface After {
  readonly createdAt: string
  readonly id: string
}

/**
 * The rows of one page plus one (which tells whether another page follows). Without `to` or `tag`,
 * the messages' own indexes (by time, by status); with one, the recipients' index by address or the
 * tags' by name and value, which hold the message's time beside its id, the other filters checked on
 * the way. A message naming one address twice (in `to` and `cc`) is found once.
 */
export const pageQuery = (
  sql: SqlClient.SqlClient,
  organizationId: string,
  query: MessageLog.ListQuery,
  after: After | undefined
): Statement.Statement<MessageRow> => {
  const to = query.to === undefined ? undefined : Suppressions.normalize(query.to)
  const tag = query.tag
  // The table that drives the scan, its alias, and the column naming the message in it.
  const [table, alias, id] =
    to !== undefined
      ? (["mailroom_message_recipients", "k", "message_id"] as const)
      : tag !== undefined
        ? (["mailroom_message_tags", "k", "message_id"] as const)
        : (["mailroom_messages", "m", "id"] as const)
  const at = sql.literal(`${alias}.created_at`)
  const key = sql.literal(`${alias}.${id}`)
  const where: Array<Statement.Fragment> = [sql`${sql.literal(alias)}.organization_id = ${organizationId}`]
  if (to !== undefined) where.push(sql`k.address = ${to}`)
  if (tag !== undefined) {
    where.push(
      to === undefined
        ? sql`k.name = ${tag.name} AND k.value = ${tag.value}`
        : sql`EXISTS (SELECT 1 FROM mailroom_message_tags t
            WHERE t.message_id = k.message_id AND t.name = ${tag.name} AND t.value = ${tag.value})`
    )
  }
  if (query.status !== undefined) {
    where.push(
      alias === "m"
        ? sql`m.status = ${query.status}`
        : sql`EXISTS (SELECT 1 FROM mailroom_messages s WHERE s.id = k.message_id AND s.status = ${query.status})`
    )
  }
  if (query.since !== undefined) where.push(sql`${at} >= ${query.since}`)
  if (query.until !== undefined) where.push(sql`${at} < ${query.until}`)
  // `at <= t` bounds the index range on both engines; the rest only sorts out rows of that very instant.
  if (after !== undefined) {
    where.push(sql`${at} <= ${after.createdAt} AND (${at} < ${after.createdAt} OR ${key} < ${after.id})`)
  }
  const limit = query.limit + 1
  if (alias === "m") {
    return sql<MessageRow>`SELECT ${sql.literal(columns("m"))} FROM mailroom_messages m WHERE ${sql.and(where)}
      ORDER BY m.created_at DESC, m.id DESC LIMIT ${limit}`
  }
  return sql<MessageRow>`SELECT ${sql.literal(columns("m"))} FROM (
      SELECT DISTINCT k.created_at, k.message_id FROM ${sql.literal(table)} k WHERE ${sql.and(where)}
      ORDER BY k.created_at DESC, k.message_id DESC LIMIT ${limit}
    ) p JOIN mailroom_messages m ON m.id = p.message_id
    ORDER BY p.created_at DESC, p.message_id DESC`
}

/** The sort key of a row, as its cursor holds it. */
export const keyOf = (row: MessageRow): ReadonlyArray<string> => [row.created_at, row.id]

/** The key a cursor holds, back as the place after which a page starts. */
export const afterOf = (key: ReadonlyArray<string> | undefined): After | undefined =>
  key === undefined ? undefined : { createdAt: key[0] ?? "", id: key[1] ?? "" }
