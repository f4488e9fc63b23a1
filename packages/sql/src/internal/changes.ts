// The message log's writes: each one transaction that locks the message row, reads it, applies
// core's rules (advance, settled, statusOf, afterEvent) and writes the rows that moved.
import { type MailEvent, type MailroomError, MessageLog, Suppressions } from "@mailroom/core"
import * as Adapter from "@mailroom/core/adapter"
import * as Effect from "effect/Effect"
import type * as SqlError from "effect/sql/SqlError"
import { type Database, type Execute, fixed, now, placeholders } from "./database.js"
import {
  columns,
  eventRow,
  isLatest,
  type MessageRow,
  partsOf,
  recipientsOf,
  recordOf,
  tagsOf,
  writeRecipients
} from "./records.js"

/** The message's row, locked until the transaction ends (PostgreSQL; SQLite's whole database is). */
const lock = ({ sql, forUpdate }: Database, id: string) =>
  Effect.map(
    sql<MessageRow>`SELECT ${sql.literal(columns("m"))} FROM mailroom_messages m WHERE m.id = ${id}${forUpdate}`,
    (rows) => rows[0]
  )

/** Records a message about to be sent or scheduled: its row, its recipients', its tags'. */
export const accept = ({ write, run }: Database, message: MessageLog.NewMessage) =>
  run(
    "recording the message",
    write((execute) =>
      Effect.gen(function* () {
        const { id, organizationId, createdAt, recipients, tags } = message
        yield* execute(
          fixed(
            `INSERT INTO mailroom_messages (id, organization_id, created_at, status, from_address, from_name,
              subject, attachments, html_bytes, text_bytes, idempotency_key, scheduled_at, request)
              VALUES ${placeholders(1, 13)}`,
            [
              id,
              organizationId,
              createdAt,
              MessageLog.statusOf(recipients),
              message.from,
              message.fromName ?? null,
              message.subject,
              JSON.stringify(message.attachments),
              message.htmlBytes,
              message.textBytes,
              message.idempotencyKey ?? null,
              message.scheduledAt ?? null,
              message.request ?? null
            ]
          )
        )
        if (recipients.length > 0) {
          yield* execute(
            fixed(
              `INSERT INTO mailroom_message_recipients (message_id, position, organization_id, created_at, email,
                address, kind, state, updated_at) VALUES ${placeholders(recipients.length, 9)}`,
              recipients.flatMap((r, position) => [
                id,
                position,
                organizationId,
                createdAt,
                r.email,
                Suppressions.normalize(r.email),
                r.kind,
                r.state,
                createdAt
              ])
            )
          )
        }
        if (tags.length > 0) {
          yield* execute(
            fixed(
              `INSERT INTO mailroom_message_tags (message_id, position, organization_id, created_at, name, value)
                VALUES ${placeholders(tags.length, 6)}`,
              tags.flatMap((tag, position) => [id, position, organizationId, createdAt, tag.name, tag.value])
            )
          )
        }
      })
    )
  )

/**
 * See `MessageLog.abandon`. An insert of the same id waits for one still being committed (its key must
 * be unique): it goes in when there was none, and is taken out in the same transaction; otherwise the
 * record is there, and the refusal is settled on it like any answer (only a message still unanswered moves).
 */
export const abandon = (db: Database, id: string, reason: string) => {
  const { write, run } = db
  const taken = run(
    "taking back a refused message",
    Effect.flatMap(now, (at) =>
      write((execute) =>
        Effect.gen(function* () {
          const inserted = yield* execute(
            fixed(
              `INSERT INTO mailroom_messages (id, organization_id, created_at, status, from_address, subject,
                attachments, html_bytes, text_bytes) VALUES ${placeholders(1, 9)}
                ON CONFLICT (id) DO NOTHING RETURNING id`,
              [id, "", at, "failed", "", "", "[]", 0, 0]
            )
          )
          if (inserted.length > 0) yield* execute(fixed("DELETE FROM mailroom_messages WHERE id = ?", [id]))
          return inserted.length === 0
        })
      )
    )
  )
  return Effect.flatMap(taken, (there) =>
    there ? settle(db, id, { _tag: "Failed", provider: "mailroom", reason }) : Effect.void
  )
}

/** States a message is in while a recipient is still `sending` (`statusOf` puts them first). */
const whileSending: ReadonlyArray<MessageLog.State> = ["scheduled", "cancelled", "sending"]
const noneSending = `status NOT IN (${whileSending.map((state) => `'${state}'`).join(", ")})`

/**
 * The provider's answer: recipients still `sending` move, the provider's id is kept, the request dropped.
 * When the message's status says no recipient is `sending` (a delivery event came first, as the
 * outbox's does), nothing moves: one UPDATE, conditional on that status, writes the row alone, its
 * status (and its index) left alone. Otherwise the row is read, locked, and the recipients moved.
 */
export const settle = (db: Database, id: string, outcome: MessageLog.Outcome) => {
  const { forUpdateText, write, run } = db
  const sent = outcome._tag === "Sent"
  const answer = [outcome.provider, sent ? outcome.providerMessageId : null, sent ? null : outcome.reason]
  const setAnswer = "provider = ?, provider_message_id = ?, reason = ?, request = NULL"
  return run(
    "recording the provider's answer",
    Effect.flatMap(now, (at) =>
      write((execute) =>
        Effect.gen(function* () {
          const quick = yield* execute(
            fixed(
              `UPDATE mailroom_messages SET ${setAnswer}
                WHERE id = ? AND provider IS NULL AND ${noneSending} RETURNING id`,
              [...answer, id]
            )
          )
          if (quick.length > 0) return
          const [row] = yield* execute(
            fixed<Pick<MessageRow, "status" | "provider">>(
              `SELECT status, provider FROM mailroom_messages WHERE id = ?${forUpdateText}`,
              [id]
            )
          )
          // Answered once: a late second answer (a send recovered meanwhile) changes nothing.
          if (row === undefined || row.provider !== null) return
          const before = yield* recipientsOf(execute, id)
          const after = before.map((r) => {
            const to = MessageLog.settled(r.state, outcome, r.email)
            return to === undefined ? r : { ...r, state: to, updated_at: at }
          })
          yield* writeRecipients(execute, id, before, after)
          const status = MessageLog.statusOf(after)
          yield* execute(
            status === row.status
              ? fixed(`UPDATE mailroom_messages SET ${setAnswer} WHERE id = ?`, [...answer, id])
              : fixed(`UPDATE mailroom_messages SET status = ?, ${setAnswer} WHERE id = ?`, [status, ...answer, id])
          )
        })
      )
    )
  )
}

/** What applying events reads of a message's row. */
type TargetRow = Pick<MessageRow, "id" | "organization_id" | "status" | "event_count" | "last_event_at">

const unknownMessage: MessageLog.Applied = { applied: false, found: false, tags: [] }

/**
 * Delivery events, each applied once per event id and only ever moving its recipient forward, in one
 * transaction: each message's row locked and read once, its events inserted in one statement (their
 * positions follow the row's `event_count`, which counts the positions taken, redeliveries included,
 * so that positions never repeat), its recipients moved as the events would move them one by one.
 */
export const applyAll = (
  db: Database,
  events: ReadonlyArray<MailEvent.MailEvent>
): Effect.Effect<ReadonlyArray<MessageLog.Applied>, MailroomError.Unavailable> => {
  const { forUpdateText, write, run } = db
  if (events.length === 0) return Effect.succeed([])
  return run(
    "recording delivery events",
    write((execute) =>
      Effect.gen(function* () {
        const ids = [...new Set(events.map((event) => event.message_id))]
        const rows = yield* execute(
          fixed<TargetRow>(
            `SELECT id, organization_id, status, event_count, last_event_at FROM mailroom_messages
              WHERE id IN ${placeholders(ids.length)} ORDER BY id${forUpdateText}`,
            ids
          )
        )
        const found = new Map(rows.map((row) => [row.id, row]))
        const ofOrganization = (event: MailEvent.MailEvent) =>
          found.get(event.message_id)?.organization_id === event.organization_id
        const kept = rows.filter((row) => events.some((event) => event.message_id === row.id && ofOrganization(event)))
        if (kept.length === 0) return events.map(() => unknownMessage)
        const parts = yield* partsOf(
          execute,
          kept.map((row) => row.id)
        )
        const applied = new Set<string>()
        for (const row of kept) {
          const mine = events.filter((event) => event.message_id === row.id && ofOrganization(event))
          for (const id of yield* applyToMessage(execute, row, mine, parts.recipients.get(row.id) ?? [])) {
            applied.add(id)
          }
        }
        // An id given twice is applied once: its first occurrence.
        const answered = new Set<string>()
        return events.map((event): MessageLog.Applied => {
          if (!ofOrganization(event)) return unknownMessage
          const first = applied.has(event.id) && !answered.has(event.id)
          answered.add(event.id)
          return { applied: first, found: true, tags: parts.tags.get(event.message_id) ?? [] }
        })
      })
    )
  )
}

/** One message's events: inserted unless applied before, then its recipients and its row moved. Answers the ids inserted. */
const applyToMessage = (
  execute: Execute,
  row: TargetRow,
  events: ReadonlyArray<MailEvent.MailEvent>,
  before: ReadonlyArray<MessageLog.Recipient>
) =>
  Effect.gen(function* () {
    const unique = [...new Map(events.map((event) => [event.id, event])).values()]
    const position = Number(row.event_count)
    if (unique.length === 0) return new Set<string>()
    const values = unique.flatMap((event, i) => {
      const e = eventRow(Adapter.timelineOf(event), row.id, position + i)
      return [e.id, e.message_id, e.position, e.type, e.recipient, e.occurred_at, e.provider, e.bounce, e.click]
    })
    const inserted = new Set(
      (yield* execute(
        fixed<{ readonly id: string }>(
          `INSERT INTO mailroom_message_events (id, message_id, position, type, recipient, occurred_at, provider,
            bounce, click) VALUES ${placeholders(unique.length, 9)} ON CONFLICT (message_id, id) DO NOTHING RETURNING id`,
          values
        )
      )).map((r) => r.id)
    )
    const fresh = unique.filter((event) => inserted.has(event.id))
    let after = before
    let latest: MailEvent.MailEvent | undefined
    for (const event of fresh) {
      after = Adapter.afterEvent(after, event) ?? after
      if (isLatest(row, event) && (latest === undefined || event.occurred_at >= latest.occurred_at)) latest = event
    }
    yield* writeRecipients(execute, row.id, before, after)
    const status = MessageLog.statusOf(after)
    const next = position + unique.length
    // Each column only when it moves: the status is indexed, and an index entry rewritten costs a page.
    const moved = status !== row.status
    const set = `event_count = ?${moved ? ", status = ?" : ""}${latest === undefined ? "" : ", last_event_type = ?, last_event_at = ?"}`
    yield* execute(
      fixed(`UPDATE mailroom_messages SET ${set} WHERE id = ?`, [
        next,
        ...(moved ? [status] : []),
        ...(latest === undefined ? [] : [latest.type, latest.occurred_at]),
        row.id
      ])
    )
    return inserted
  })

/** Moves the recipients in `from` to `to` (claim, cancel), and the message's status with them. */
const moveScheduled = (
  { sql, execute }: Database,
  id: string,
  from: MessageLog.State,
  to: MessageLog.State,
  at: string,
  dropRequest: boolean
) =>
  Effect.gen(function* () {
    const before = yield* recipientsOf(execute, id)
    const after = before.map((r) => (r.state === from ? { ...r, state: to, updated_at: at } : r))
    yield* writeRecipients(execute, id, before, after)
    const status = MessageLog.statusOf(after)
    yield* dropRequest
      ? sql`UPDATE mailroom_messages SET status = ${status}, request = NULL WHERE id = ${id}`
      : sql`UPDATE mailroom_messages SET status = ${status} WHERE id = ${id}`
    return { after, status }
  })

/** A scheduled message, due at `at`, moved to `sending` and handed back with its request; of concurrent claims one wins. */
export const claim = (db: Database, id: string, at: string) => {
  const { sql, transaction, run } = db
  return run(
    "claiming a scheduled message",
    transaction(
      Effect.gen(function* () {
        const row = yield* lock(db, id)
        if (row === undefined || row.status !== "scheduled" || row.scheduled_at === null || row.scheduled_at > at) {
          return undefined
        }
        const [stored] = yield* sql<{ readonly request: string | null }>`SELECT request
          FROM mailroom_messages WHERE id = ${id}`
        const request = stored?.request ?? null
        if (request === null) return undefined
        const { after, status } = yield* moveScheduled(db, id, "scheduled", "sending", at, false)
        return { record: recordOf({ ...row, status }, after, yield* tagsOf(sql, id)), request }
      })
    )
  )
}

/** A claimed message back to `scheduled`, its request kept; false when it is not one still `sending`. */
export const release = (db: Database, id: string) => {
  const { sql, transaction, run } = db
  return run(
    "releasing a claimed message",
    Effect.flatMap(now, (at) =>
      transaction(
        Effect.gen(function* () {
          const row = yield* lock(db, id)
          if (row === undefined || row.status !== "sending") return false
          const [stored] = yield* sql<{ readonly request: string | null }>`SELECT request
            FROM mailroom_messages WHERE id = ${id}`
          if (stored?.request == null) return false
          yield* moveScheduled(db, id, "sending", "scheduled", at, false)
          return true
        })
      )
    )
  )
}

const notFound: MessageLog.ChangeRefused = { _tag: "NotFound" }

/** Changes a message of `organizationId` that is still scheduled; otherwise says why not. */
const changeScheduled = (
  db: Database,
  operation: string,
  organizationId: string,
  id: string,
  change: (row: MessageRow, at: string) => Effect.Effect<unknown, SqlError.SqlError>
) =>
  db.run(
    operation,
    Effect.flatMap(now, (at) =>
      db.transaction(
        Effect.gen(function* () {
          const row = yield* lock(db, id)
          if (row === undefined || row.organization_id !== organizationId) return notFound
          if (row.status !== "scheduled") return { _tag: "NotScheduled", status: row.status } as const
          yield* change(row, at)
          return undefined
        })
      )
    )
  )

/** Cancels a message that is still scheduled: its recipients `cancelled`, its request dropped. */
export const cancel = (db: Database, organizationId: string, id: string) =>
  changeScheduled(db, "cancelling the message", organizationId, id, (row, at) =>
    moveScheduled(db, row.id, "scheduled", "cancelled", at, true)
  )

/** Moves a message that is still scheduled to another time. */
export const reschedule = (db: Database, organizationId: string, id: string, scheduledAt: string) =>
  changeScheduled(
    db,
    "rescheduling the message",
    organizationId,
    id,
    (row) => db.sql`UPDATE mailroom_messages SET scheduled_at = ${scheduledAt} WHERE id = ${row.id}`
  )
