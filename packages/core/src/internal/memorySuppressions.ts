// Suppressions in memory, for tests and a single process that need not keep them: the reference the
// SQL stores are checked against by the same suite.
import * as Effect from "effect/Effect"
import type { Suppression, Suppressions } from "../Suppressions.js"
import { normalizeAddress as normalize } from "./address.js"
import * as Cursor from "./cursor.js"

export const make = (): Suppressions => {
  // Per organisation, in the order added: newest last.
  const byOrganization = new Map<string, Map<string, Suppression>>()
  const of = (organizationId: string) => {
    let entries = byOrganization.get(organizationId)
    if (entries === undefined) {
      entries = new Map()
      byOrganization.set(organizationId, entries)
    }
    return entries
  }
  return {
    add: (organizationId, added, now) =>
      Effect.sync(() => {
        const entries = of(organizationId)
        const fresh: Array<Suppression> = []
        for (const entry of added) {
          const email = normalize(entry.email)
          if (entries.has(email)) continue
          const suppression: Suppression = {
            email,
            reason: entry.reason,
            created_at: now,
            message_id: entry.messageId ?? null,
            detail: entry.detail ?? null
          }
          entries.set(email, suppression)
          fresh.push(suppression)
        }
        return fresh
      }),
    remove: (organizationId, email) => Effect.sync(() => of(organizationId).delete(normalize(email))),
    list: (organizationId, query) =>
      Effect.map(Cursor.decode(query.cursor, 2), (after) => {
        const [createdAt, email] = after ?? []
        const sorted = [...of(organizationId).values()].sort((a, b) =>
          a.created_at === b.created_at ? (a.email < b.email ? 1 : -1) : a.created_at < b.created_at ? 1 : -1
        )
        const rest = sorted.filter(
          (s) =>
            (query.reason === undefined || s.reason === query.reason) &&
            (createdAt === undefined ||
              s.created_at < createdAt ||
              (s.created_at === createdAt && email !== undefined && s.email < email))
        )
        const page = rest.slice(0, query.limit)
        const last = page[page.length - 1]
        return {
          data: page,
          next_cursor:
            rest.length > query.limit && last !== undefined ? Cursor.encode([last.created_at, last.email]) : null
        }
      }),
    check: (organizationId, emails) =>
      Effect.sync(() => {
        const entries = of(organizationId)
        // Nearly always none is found: the map that keeps each once is made for the first.
        let found: Map<string, Suppression> | undefined
        for (const email of emails) {
          const entry = entries.size === 0 ? undefined : entries.get(normalize(email))
          if (entry === undefined) continue
          found ??= new Map()
          found.set(entry.email, entry)
        }
        return found === undefined ? [] : [...found.values()]
      })
  }
}
