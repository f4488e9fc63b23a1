// Rows of the message tables and the records they make: a message row with its recipients and tags,
// read for a whole page at once, and the few changes every state move writes.
import type { MailEvent, MessageLog } from "@mailroom/core"
import * as Effect from "effect/Effect"
import type * as SqlClient from "effect/sql/SqlClient"
import { type Execute, fixed, placeholders } from "./database.js"

/** A row of `mailroom_messages`, as `columns` selects it. */
export interface MessageRow {
  readonly id: string
  readonly organization_id: string
  readonly created_at: string
  readonly status: MessageLog.State
  readonly from_address: string
  readonly from_name: string | null
  readonly subject: string
  readonly attachments: string
  readonly html_bytes: number | bigint
  readonly text_bytes: number | bigint
  readonly provider: string | null
  readonly provider_message_id: string | null
  readonly idempotency_key: string | null
  readonly scheduled_at: string | null
  readonly last_event_type: string | null
  readonly last_event_at: string | null
  readonly reason: string | null
  readonly event_count: number | bigint
}

interface RecipientRow {
  readonly message_id: string
  readonly email: string
  readonly kind: MessageLog.RecipientKind
  readonly state: MessageLog.State
  readonly updated_at: string
  readonly detail: string | null
}

interface TagRow {
  readonly message_id: string
  readonly name: string
  readonly value: string
}

interface EventRow {
  readonly id: string
  readonly type: string
  readonly recipient: string | null
  readonly occurred_at: string
  readonly provider: string
  readonly bounce: string | null
  readonly click: string | null
}

/** The columns of a record (not the stored request, which only `claim` reads), each prefixed with `alias.`. */
export const columns = (alias: string): string =>
  [
    "id",
    "organization_id",
    "created_at",
    "status",
    "from_address",
    "from_name",
    "subject",
    "attachments",
    "html_bytes",
    "text_bytes",
    "provider",
    "provider_message_id",
    "idempotency_key",
    "scheduled_at",
    "last_event_type",
    "last_event_at",
    "reason",
    "event_count"
  ]
    .map((column) => `${alias}.${column}`)
    .join(", ")

const recipientOf = (row: RecipientRow): MessageLog.Recipient => ({
  email: row.email,
  kind: row.kind,
  state: row.state,
  updated_at: row.updated_at,
  ...(row.detail === null ? {} : { detail: row.detail })
})

/** The record a row makes with its recipients and tags, in the order they were accepted. */
export const recordOf = (
  row: MessageRow,
  recipients: ReadonlyArray<MessageLog.Recipient>,
  tags: ReadonlyArray<MessageLog.Tag>
): MessageLog.EmailRecord => ({
  id: row.id,
  organization_id: row.organization_id,
  created_at: row.created_at,
  status: row.status,
  from: row.from_address,
  from_name: row.from_name,
  subject: row.subject,
  recipients,
  tags,
  attachments: JSON.parse(row.attachments) as ReadonlyArray<MessageLog.AttachmentRecord>,
  html_bytes: Number(row.html_bytes),
  text_bytes: Number(row.text_bytes),
  provider: row.provider,
  provider_message_id: row.provider_message_id,
  idempotency_key: row.idempotency_key,
  scheduled_at: row.scheduled_at,
  last_event:
    row.last_event_type === null || row.last_event_at === null
      ? null
      : { type: row.last_event_type, occurred_at: row.last_event_at },
  reason: row.reason
})

const grouped = <A extends { readonly message_id: string }, B>(rows: ReadonlyArray<A>, f: (row: A) => B) => {
  const groups = new Map<string, Array<B>>()
  for (const row of rows) {
    const group = groups.get(row.message_id)
    if (group === undefined) groups.set(row.message_id, [f(row)])
    else group.push(f(row))
  }
  return groups
}

/** A message's recipients, in the order they were accepted. */
export const recipientsOf = (execute: Execute, id: string) =>
  Effect.map(
    execute(
      fixed<RecipientRow>(
        `SELECT message_id, email, kind, state, updated_at, detail FROM mailroom_message_recipients
          WHERE message_id = ? ORDER BY position`,
        [id]
      )
    ),
    (rows) => rows.map(recipientOf)
  )

/** A message's tags, in the order they were accepted. */
export const tagsOf = (sql: SqlClient.SqlClient, id: string) =>
  Effect.map(
    sql<TagRow>`SELECT message_id, name, value FROM mailroom_message_tags WHERE message_id = ${id} ORDER BY position`,
    (rows) => rows.map((row): MessageLog.Tag => ({ name: row.name, value: row.value }))
  )

/** The recipients and tags of several messages, by message, each in the order accepted: two queries. */
export const partsOf = (execute: Execute, ids: ReadonlyArray<string>) =>
  Effect.map(
    Effect.all([
      execute(
        fixed<RecipientRow>(
          `SELECT message_id, email, kind, state, updated_at, detail FROM mailroom_message_recipients
            WHERE message_id IN ${placeholders(ids.length)} ORDER BY message_id, position`,
          ids
        )
      ),
      execute(
        fixed<TagRow>(
          `SELECT message_id, name, value FROM mailroom_message_tags
            WHERE message_id IN ${placeholders(ids.length)} ORDER BY message_id, position`,
          ids
        )
      )
    ]),
    ([recipients, tags]) => ({
      recipients: grouped(recipients, recipientOf),
      tags: grouped(tags, (row): MessageLog.Tag => ({ name: row.name, value: row.value }))
    })
  )

/** The records of a page of rows, in the rows' order: two more queries, whatever the page's size. */
export const recordsOf = (execute: Execute, rows: ReadonlyArray<MessageRow>) =>
  rows.length === 0
    ? Effect.succeed([])
    : Effect.map(
        partsOf(
          execute,
          rows.map((row) => row.id)
        ),
        ({ recipients, tags }) => rows.map((row) => recordOf(row, recipients.get(row.id) ?? [], tags.get(row.id) ?? []))
      )

/** A message's history, oldest first; events of the same instant in the order they were applied. */
export const eventsOf = (sql: SqlClient.SqlClient, id: string) =>
  Effect.map(
    sql<EventRow>`SELECT id, type, recipient, occurred_at, provider, bounce, click FROM mailroom_message_events
      WHERE message_id = ${id} ORDER BY occurred_at, position`,
    (rows) =>
      rows.map(
        (row): MessageLog.TimelineEvent => ({
          id: row.id,
          type: row.type,
          recipient: row.recipient,
          occurred_at: row.occurred_at,
          provider: row.provider,
          ...(row.bounce === null ? {} : { bounce: JSON.parse(row.bounce) as MessageLog.TimelineEvent["bounce"] & {} }),
          ...(row.click === null ? {} : { click: JSON.parse(row.click) as { readonly url: string } })
        })
      )
  )

/** The row of an event, `position` its place among the message's events in the order applied. */
export const eventRow = (event: MessageLog.TimelineEvent, messageId: string, position: number) => ({
  id: event.id,
  message_id: messageId,
  position,
  type: event.type,
  recipient: event.recipient,
  occurred_at: event.occurred_at,
  provider: event.provider,
  bounce: event.bounce === undefined ? null : JSON.stringify(event.bounce),
  click: event.click === undefined ? null : JSON.stringify(event.click)
})

/**
 * Writes the recipients that moved (`after` is `before` with some replaced), one statement for each
 * distinct change: an event or an answer moves every recipient it moves alike, so usually one.
 */
export const writeRecipients = (
  execute: Execute,
  id: string,
  before: ReadonlyArray<MessageLog.Recipient>,
  after: ReadonlyArray<MessageLog.Recipient>
) => {
  const changes = new Map<string, { readonly to: MessageLog.Recipient; readonly positions: Array<number> }>()
  after.forEach((to, position) => {
    if (to === before[position]) return
    const key = JSON.stringify([to.state, to.updated_at, to.detail ?? null])
    const change = changes.get(key)
    if (change === undefined) changes.set(key, { to, positions: [position] })
    else change.positions.push(position)
  })
  return Effect.forEach(
    changes.values(),
    ({ to, positions }) =>
      execute(
        fixed(
          `UPDATE mailroom_message_recipients SET state = ?, updated_at = ?, detail = ?
            WHERE message_id = ? AND position IN ${placeholders(positions.length)}`,
          [to.state, to.updated_at, to.detail ?? null, id, ...positions]
        )
      ),
    { discard: true }
  )
}

/** The event's type and time when it is the message's latest by when it happened (a tie goes to the newer). */
export const isLatest = (row: Pick<MessageRow, "last_event_at">, event: MailEvent.MailEvent): boolean =>
  row.last_event_at === null || event.occurred_at >= row.last_event_at
