// The message log in memory, for tests and a single process that need not keep its history: the
// reference the SQL logs are checked against by the same suite.
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type * as MailEvent from "../MailEvent.js"
import type {
  Applied,
  ChangeRefused,
  EmailDetail,
  EmailRecord,
  MessageLog,
  Recipient,
  TimelineEvent
} from "../MessageLog.js"
import { normalizeAddress as normalize } from "./address.js"
import * as Cursor from "./cursor.js"
import { advance, settled, statusOf } from "./messageState.js"

interface Entry {
  record: EmailRecord
  readonly events: Array<TimelineEvent>
  request: string | undefined
}

const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms).toISOString())

/** The event as its history keeps it: without the vendor's raw record. */
export const timelineOf = (event: MailEvent.MailEvent): TimelineEvent => ({
  id: event.id,
  type: event.type,
  recipient: event.recipient,
  occurred_at: event.occurred_at,
  provider: event.provider,
  ...(event.bounce === undefined ? {} : { bounce: event.bounce }),
  ...(event.click === undefined ? {} : { click: event.click })
})

/** What a bounce or a refusal said, kept on the recipient. */
export const detailOf = (event: MailEvent.MailEvent): string | undefined =>
  event.bounce?.diagnostic ?? (event.bounce === undefined ? undefined : `${event.bounce.kind} bounce`)

/** The recipients after `event`, or undefined when none moves. */
export const afterEvent = (
  recipients: ReadonlyArray<Recipient>,
  event: MailEvent.MailEvent
): ReadonlyArray<Recipient> | undefined => {
  let moved = false
  const target = event.recipient === null ? undefined : normalize(event.recipient)
  const next = recipients.map((r) => {
    if (target === undefined || normalize(r.email) !== target) return r
    const to = advance(r.state, event.type)
    if (to === undefined) return r
    moved = true
    const detail = detailOf(event)
    return { ...r, state: to, updated_at: event.occurred_at, ...(detail === undefined ? {} : { detail }) }
  })
  return moved ? next : undefined
}

export const make = (): MessageLog => {
  // Insertion order is id order: ids are UUIDv7, increasing within a process.
  const entries = new Map<string, Entry>()
  const byProvider = new Map<string, string>()
  const applied = new Set<string>()

  const update = (entry: Entry, recipients: ReadonlyArray<Recipient>, extra: Partial<EmailRecord> = {}) => {
    entry.record = { ...entry.record, ...extra, recipients, status: statusOf(recipients) }
  }

  const applyOne = (event: MailEvent.MailEvent): Applied => {
    const entry = entries.get(event.message_id)
    if (entry === undefined || entry.record.organization_id !== event.organization_id) {
      return { applied: false, found: false, tags: [] }
    }
    if (applied.has(event.id)) return { applied: false, found: true, tags: entry.record.tags }
    applied.add(event.id)
    entry.events.push(timelineOf(event))
    entry.events.sort((a, b) => a.occurred_at.localeCompare(b.occurred_at))
    const last = entry.events[entry.events.length - 1]
    const lastEvent = last === undefined ? null : { type: last.type, occurred_at: last.occurred_at }
    update(entry, afterEvent(entry.record.recipients, event) ?? entry.record.recipients, { last_event: lastEvent })
    return { applied: true, found: true, tags: entry.record.tags }
  }

  const changeScheduled = (
    organizationId: string,
    id: string,
    change: (entry: Entry, at: string) => void
  ): Effect.Effect<ChangeRefused | undefined> =>
    Effect.map(now, (at) => {
      const entry = entries.get(id)
      if (entry === undefined || entry.record.organization_id !== organizationId) return { _tag: "NotFound" as const }
      if (entry.record.status !== "scheduled") return { _tag: "NotScheduled" as const, status: entry.record.status }
      change(entry, at)
      return undefined
    })

  const log: MessageLog = {
    accept: (message) =>
      Effect.sync(() => {
        const recipients = message.recipients.map(
          (r): Recipient => ({ email: r.email, kind: r.kind, state: r.state, updated_at: message.createdAt })
        )
        entries.set(message.id, {
          record: {
            id: message.id,
            organization_id: message.organizationId,
            created_at: message.createdAt,
            status: statusOf(recipients),
            from: message.from,
            from_name: message.fromName ?? null,
            subject: message.subject,
            recipients,
            tags: message.tags,
            attachments: message.attachments,
            html_bytes: message.htmlBytes,
            text_bytes: message.textBytes,
            provider: null,
            provider_message_id: null,
            idempotency_key: message.idempotencyKey ?? null,
            scheduled_at: message.scheduledAt ?? null,
            last_event: null,
            reason: null
          },
          events: [],
          request: message.request
        })
      }),
    settle: (id, outcome) =>
      Effect.map(now, (at) => {
        const entry = entries.get(id)
        // Answered once: a late second answer (a send recovered meanwhile) changes nothing.
        if (entry === undefined || entry.record.provider !== null) return
        const recipients = entry.record.recipients.map((r) => {
          const to = settled(r.state, outcome, r.email)
          return to === undefined ? r : { ...r, state: to, updated_at: at }
        })
        if (outcome._tag === "Sent") byProvider.set(`${outcome.provider}\n${outcome.providerMessageId}`, id)
        update(entry, recipients, {
          provider: outcome.provider,
          provider_message_id: outcome._tag === "Sent" ? outcome.providerMessageId : null,
          reason: outcome._tag === "Sent" ? null : outcome.reason
        })
        entry.request = undefined
      }),
    // A write here cannot land after its answer: a record there is settled as any refusal is.
    abandon: (id, reason) => log.settle(id, { _tag: "Failed", provider: "mailroom", reason }),
    apply: (event) => Effect.sync(() => applyOne(event)),
    applyAll: (events) => Effect.sync(() => events.map(applyOne)),
    find: (organizationId, id) =>
      Effect.sync((): EmailDetail | undefined => {
        const entry = entries.get(id)
        return entry === undefined || entry.record.organization_id !== organizationId
          ? undefined
          : { ...entry.record, events: [...entry.events] }
      }),
    list: (organizationId, query) =>
      Effect.map(Cursor.decode(query.cursor, 1), (after) => {
        const before = after?.[0]
        const to = query.to === undefined ? undefined : normalize(query.to)
        const data: Array<EmailRecord> = []
        for (const { record } of [...entries.values()].reverse()) {
          if (data.length > query.limit) break
          if (record.organization_id !== organizationId) continue
          if (before !== undefined && record.id >= before) continue
          if (query.status !== undefined && record.status !== query.status) continue
          if (to !== undefined && !record.recipients.some((r) => normalize(r.email) === to)) continue
          const tag = query.tag
          if (tag !== undefined && !record.tags.some((t) => t.name === tag.name && t.value === tag.value)) continue
          if (query.since !== undefined && record.created_at < query.since) continue
          if (query.until !== undefined && record.created_at >= query.until) continue
          data.push(record)
        }
        const more = data.length > query.limit
        const page = more ? data.slice(0, query.limit) : data
        const last = page[page.length - 1]
        return { data: page, next_cursor: more && last !== undefined ? Cursor.encode([last.id]) : null }
      }),
    resolve: (provider, providerMessageId) =>
      Effect.sync(() => {
        const id = byProvider.get(`${provider}\n${providerMessageId}`)
        const entry = id === undefined ? undefined : entries.get(id)
        return entry === undefined ? undefined : { id: entry.record.id, organizationId: entry.record.organization_id }
      }),
    claim: (id, at) =>
      Effect.sync(() => {
        const entry = entries.get(id)
        const due = entry?.record.scheduled_at
        if (entry === undefined || entry.record.status !== "scheduled" || due == null || due > at) return undefined
        const request = entry.request
        if (request === undefined) return undefined
        const recipients = entry.record.recipients.map((r) =>
          r.state === "scheduled" ? { ...r, state: "sending" as const, updated_at: at } : r
        )
        update(entry, recipients)
        return { record: entry.record, request }
      }),
    cancel: (organizationId, id) =>
      changeScheduled(organizationId, id, (entry, at) => {
        const recipients = entry.record.recipients.map((r) =>
          r.state === "scheduled" ? { ...r, state: "cancelled" as const, updated_at: at } : r
        )
        update(entry, recipients)
        entry.request = undefined
      }),
    reschedule: (organizationId, id, scheduledAt) =>
      changeScheduled(organizationId, id, (entry) => {
        entry.record = { ...entry.record, scheduled_at: scheduledAt }
      }),
    release: (id) =>
      Effect.map(now, (at) => {
        const entry = entries.get(id)
        if (entry === undefined || entry.request === undefined || entry.record.status !== "sending") return false
        const recipients = entry.record.recipients.map((r) =>
          r.state === "sending" ? { ...r, state: "scheduled" as const, updated_at: at } : r
        )
        update(entry, recipients)
        return true
      }),
    due: (before, limit) =>
      Effect.sync(() =>
        [...entries.values()]
          .flatMap(({ record }) =>
            record.status === "scheduled" && record.scheduled_at !== null && record.scheduled_at <= before
              ? [{ id: record.id, organizationId: record.organization_id, scheduledAt: record.scheduled_at }]
              : []
          )
          .sort((a, b) => a.scheduledAt.localeCompare(b.scheduledAt) || a.id.localeCompare(b.id))
          .slice(0, limit)
      ),
    stalled: (before, limit) =>
      Effect.sync(() =>
        [...entries.values()]
          .flatMap(({ record }) => {
            const since = record.recipients
              .filter((r) => r.state === "sending")
              .reduce<string | undefined>((a, r) => (a === undefined || r.updated_at < a ? r.updated_at : a), undefined)
            return since !== undefined && since < before ? [{ id: record.id, since }] : []
          })
          .sort((a, b) => a.since.localeCompare(b.since) || a.id.localeCompare(b.id))
          .slice(0, limit)
          .map((s) => s.id)
      ),
    backlog: (at) =>
      Effect.sync(() => {
        let scheduled = 0
        let oldestDue: string | null = null
        for (const { record } of entries.values()) {
          if (record.status !== "scheduled" || record.scheduled_at === null) continue
          scheduled++
          if (record.scheduled_at <= at && (oldestDue === null || record.scheduled_at < oldestDue)) {
            oldestDue = record.scheduled_at
          }
        }
        return { scheduled, oldestDue }
      }),
    purge: (before) =>
      Effect.sync(() => {
        let purged = 0
        for (const [id, entry] of entries) {
          if (entry.record.created_at >= before) continue
          entries.delete(id)
          for (const event of entry.events) applied.delete(event.id)
          if (entry.record.provider !== null && entry.record.provider_message_id !== null) {
            byProvider.delete(`${entry.record.provider}\n${entry.record.provider_message_id}`)
          }
          purged++
        }
        return purged
      })
  }
  return log
}
