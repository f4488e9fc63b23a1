// The inbox API's query strings: each parameter checked (a bad or unknown one named in the answer), the
// opaque cursors of its pages, and the same filters applied to one message, for the waits.
import * as Schema from "./schema.js"
import type { Position, Row } from "./store.js"

export type Parsed<A> = { readonly value: A } | { readonly problems: ReadonlyArray<string> }

const email = /^[^\s@]{1,64}@[^\s@]{1,253}$/

const filterNames = ["to", "from", "subject", "since"] as const
const known: Readonly<Record<string, ReadonlyArray<string>>> = {
  messages: [...filterNames, "limit", "cursor", "q"],
  wait: [...filterNames, "timeout"]
}

export interface Filters {
  readonly to?: string
  readonly from?: string
  readonly subject?: string
  readonly since?: string
  readonly text?: string
}

export const encodeCursor = (row: Row) => Buffer.from(JSON.stringify([row.receivedAt, row.id])).toString("base64url")
export const decodeCursor = (cursor: string): Position | undefined => {
  try {
    const value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown
    if (!Array.isArray(value) || typeof value[0] !== "string" || typeof value[1] !== "string") return undefined
    return { receivedAt: value[0], id: value[1] }
  } catch {
    return undefined
  }
}

/** `10s`, `500ms`, or whole seconds, up to the longest wait. */
const waitMillis = (value: string): number | undefined => {
  const match = /^(\d{1,6})(ms|s)?$/.exec(value)
  if (match === null) return undefined
  const millis = Number(match[1]) * (match[2] === "ms" ? 1 : 1000)
  return millis <= Schema.maxWaitMillis ? millis : undefined
}

/** The query of `route`, each problem naming its parameter; a parameter the route does not take is one too. */
export const parseQuery = (
  route: "messages" | "wait",
  params: URLSearchParams
): Parsed<Filters & Record<string, unknown>> => {
  const problems: Array<string> = []
  const value: Record<string, unknown> = {}
  for (const name of new Set(params.keys())) {
    if (!known[route]?.includes(name))
      problems.push(`${name}: is not a parameter of ${route} (${known[route]?.join(", ")})`)
    else if (params.getAll(name).length > 1) problems.push(`${name}: give it once`)
  }
  const get = (name: string) => params.get(name) ?? undefined
  for (const name of ["to", "from"] as const) {
    const given = get(name)
    if (given === undefined) continue
    if (!email.test(given)) problems.push(`${name}: must be an email address`)
    else value[name] = given
  }
  for (const [name, key] of [
    ["subject", "subject"],
    ["q", "text"]
  ] as const) {
    const given = get(name)
    if (given === undefined) continue
    if (given.trim() === "" || given.length > 200) problems.push(`${name}: must be 1 to 200 characters`)
    else value[key] = given.trim()
  }
  const since = get("since")
  if (since !== undefined) {
    const time = /^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(since) ? new Date(since) : undefined
    if (time === undefined || Number.isNaN(time.getTime())) {
      problems.push("since: must be an ISO 8601 time, such as 2026-01-31T12:00:00Z")
    } else value.since = time.toISOString()
  }
  const limit = get("limit")
  if (limit !== undefined) {
    const n = /^\d{1,3}$/.test(limit) ? Number(limit) : Number.NaN
    if (!(n >= 1 && n <= Schema.maxPageSize))
      problems.push(`limit: must be a whole number from 1 to ${Schema.maxPageSize}`)
    else value.limit = n
  }
  const cursor = get("cursor")
  if (cursor !== undefined) {
    const position = decodeCursor(cursor)
    if (position === undefined) problems.push("cursor: is not a cursor this inbox answered")
    else value.after = position
  }
  const timeout = get("timeout")
  if (timeout !== undefined) {
    const millis = waitMillis(timeout)
    if (millis === undefined) {
      problems.push(`timeout: must be a duration up to ${Schema.maxWaitMillis / 1000}s, such as 10s or 500ms`)
    } else value.timeout = millis
  }
  return problems.length > 0 ? { problems } : { value }
}

/** Whether a row passes the filters, as the index's query would judge it. */
export const matches = (filters: Filters, row: Row) => {
  const recipients = [...row.to.map((a) => a.address), ...row.cc.map((a) => a.address), ...row.bcc]
  return (
    (filters.to === undefined || recipients.some((r) => r.toLowerCase() === filters.to?.toLowerCase())) &&
    (filters.from === undefined || row.from?.address.toLowerCase() === filters.from.toLowerCase()) &&
    (filters.subject === undefined || row.subject.toLowerCase().includes(filters.subject.toLowerCase())) &&
    (filters.since === undefined || row.receivedAt >= filters.since)
  )
}
