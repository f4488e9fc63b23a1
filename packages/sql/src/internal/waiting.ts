// The reads of the scheduled sends: what is due, what has been `sending` too long, and the backlog's
// size, each from a partial index over the few rows that wait (SqlMigrations' "2_queue").
import type { MailroomError, MessageLog } from "@mailroom/core"
import * as Effect from "effect/Effect"
import type { Database } from "./database.js"

/** Scheduled messages due at or before `before`, oldest first. */
export const due = (
  { sql, run }: Database,
  before: string,
  limit: number
): Effect.Effect<ReadonlyArray<MessageLog.Due>, MailroomError.Unavailable> =>
  run(
    "listing the messages that are due",
    Effect.map(
      sql<{ readonly id: string; readonly organization_id: string; readonly scheduled_at: string }>`SELECT id,
        organization_id, scheduled_at FROM mailroom_messages
        WHERE status = 'scheduled' AND scheduled_at <= ${before}
        ORDER BY scheduled_at, id LIMIT ${limit}`,
      (rows): ReadonlyArray<MessageLog.Due> =>
        rows.map((row) => ({ id: row.id, organizationId: row.organization_id, scheduledAt: row.scheduled_at }))
    )
  )

/** Messages with a recipient `sending` since before `before`, oldest first. */
export const stalled = (
  { sql, run }: Database,
  before: string,
  limit: number
): Effect.Effect<ReadonlyArray<string>, MailroomError.Unavailable> =>
  run(
    "listing the sends that stalled",
    Effect.map(
      sql<{ readonly message_id: string; readonly since: string }>`SELECT message_id, MIN(updated_at) AS since
        FROM mailroom_message_recipients WHERE state = 'sending' AND updated_at < ${before}
        GROUP BY message_id ORDER BY since, message_id LIMIT ${limit}`,
      (rows): ReadonlyArray<string> => rows.map((row) => row.message_id)
    )
  )

/** How many messages are scheduled, and the oldest due time among them. */
export const backlog = (
  { sql, run }: Database,
  now: string
): Effect.Effect<MessageLog.Backlog, MailroomError.Unavailable> =>
  run(
    "counting the scheduled messages",
    Effect.gen(function* () {
      const [count] = yield* sql<{ readonly scheduled: number | bigint | string }>`SELECT COUNT(*) AS scheduled
        FROM mailroom_messages WHERE status = 'scheduled'`
      const [oldest] = yield* sql<{ readonly scheduled_at: string }>`SELECT scheduled_at FROM mailroom_messages
        WHERE status = 'scheduled' AND scheduled_at <= ${now} ORDER BY scheduled_at LIMIT 1`
      return { scheduled: Number(count?.scheduled ?? 0), oldestDue: oldest?.scheduled_at ?? null }
    })
  )
