// What the log answers about the records of fixtures/v2.db, read as a user would: by the v2 code when
// the fixture was written (fixtures/generate-v2.mjs, which imports this module), and by today's code
// after the migration, which must answer the same.
import { type MailroomError, MessageLog, Suppressions } from "@mailroom/core"
import * as Effect from "effect/Effect"

/** The ids of the fixture's messages (UUIDv7s of March 2026), by their index. */
export const ids: ReadonlyArray<string> = Array.from(
  { length: 12 },
  (_, i) => `0195f000-0000-7000-8000-${String(i).padStart(12, "0")}`
)

/** The fixture's organisations. */
export const organizations = ["org_acme", "org_globex"] as const

const at = (minute: number) => new Date(Date.UTC(2026, 2, 1, 9, minute)).toISOString()

const queries: Record<string, MessageLog.ListQuery> = {
  all: { limit: 100 },
  sent: { limit: 100, status: "sent" },
  delivered: { limit: 100, status: "delivered" },
  bounced: { limit: 100, status: "bounced" },
  scheduled: { limit: 100, status: "scheduled" },
  toBob: { limit: 100, to: "Bob@EXAMPLE.com" },
  toDave: { limit: 100, to: "dave@example.org" },
  tagReceipt: { limit: 100, tag: { name: "category", value: "receipt" } },
  tagAndTo: { limit: 100, tag: { name: "batch", value: "b1" }, to: "alice@example.com" },
  since: { limit: 100, since: at(3), until: at(8) }
}

/** Every record with its history, every list (filters, and page by page through cursors), the suppressions, the queue's reads. */
export const readAll: Effect.Effect<
  Record<string, unknown>,
  MailroomError.Unavailable | MailroomError.ValidationError,
  MessageLog.MessageLog | Suppressions.Suppressions
> = Effect.gen(function* () {
  const log = yield* MessageLog.MessageLog
  const suppressions = yield* Suppressions.Suppressions
  const found: Record<string, unknown> = {}
  for (const [i, id] of ids.entries()) {
    for (const org of organizations) {
      const record = yield* log.find(org, id)
      if (record !== undefined) found[`${org}/${i}`] = record
    }
  }
  const lists: Record<string, unknown> = {}
  for (const org of organizations) {
    for (const [name, query] of Object.entries(queries)) lists[`${org}/${name}`] = yield* log.list(org, query)
    const pages: Array<MessageLog.Page<MessageLog.EmailRecord>> = []
    let cursor: string | undefined
    do {
      const page: MessageLog.Page<MessageLog.EmailRecord> = yield* log.list(org, {
        limit: 2,
        ...(cursor === undefined ? {} : { cursor })
      })
      pages.push(page)
      cursor = page.next_cursor ?? undefined
    } while (cursor !== undefined)
    lists[`${org}/pages`] = pages
  }
  const resolved: Record<string, unknown> = {}
  for (const id of ids) resolved[id] = (yield* log.resolve("suite", `pm-${id}`)) ?? null
  const suppressed: Record<string, unknown> = {}
  for (const org of organizations) suppressed[org] = yield* suppressions.list(org, { limit: 100 })
  return {
    found,
    lists,
    resolved,
    suppressed,
    due: yield* log.due(at(59), 100),
    stalled: yield* log.stalled("2100-01-01T00:00:00.000Z", 100),
    backlog: yield* log.backlog(at(59))
  }
})
