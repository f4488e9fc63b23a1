// `mailroom.testing`: assertions for end-to-end tests over the standalone server's inbox API
// (`/_mailroom/outbox/api/`), which answers on loopback or with the viewer token.
import { EmailNotReceivedError } from "../EmailNotReceivedError.js"
import type { AwaitEmailOptions, RequestOptions, Testing } from "../MailroomClient.js"
import { segment } from "./segment.js"
import type { Answer } from "./transport.js"
import type * as Wire from "./wire.js"

export type Get = <A>(url: string, headers: Record<string, string>, options: RequestOptions) => Promise<Answer<A>>
export type Send = <A>(method: string, url: string, headers: Record<string, string>) => Promise<Answer<A>>

export interface Dependencies {
  readonly baseUrl: string
  readonly viewerToken: string | undefined
  readonly get: Get
  readonly send: Send
}

/** The longest the server holds one wait; a longer `timeout` is several waits in a row. */
const longestWait = 60_000
const defaultTimeout = 10_000

export const make = ({ baseUrl, viewerToken, get, send }: Dependencies): Testing => {
  const api = `${baseUrl}/_mailroom/outbox/api`
  const headers: Record<string, string> = viewerToken === undefined ? {} : { "x-mailroom-viewer-token": viewerToken }
  // Messages from before the client was made (an outbox kept from an earlier run) are not this run's.
  const madeAt = new Date()
  const query = (params: Record<string, string | undefined>) => {
    const search = new URLSearchParams()
    for (const [name, value] of Object.entries(params)) if (value !== undefined) search.set(name, value)
    return search.toString()
  }
  const sinceOf = (since: Date | string | undefined) =>
    since === undefined ? madeAt.toISOString() : new Date(since).toISOString()

  const getEmail = async (id: string, options: RequestOptions = {}) =>
    (await get<Wire.InboxMessage>(`${api}/messages/${segment(id, "testing.getEmail")}`, headers, options)).value

  const emailsTo: Testing["emailsTo"] = async (address, options = {}) => {
    const found: Array<Wire.InboxMessageSummary> = []
    let cursor: string | undefined
    do {
      const params = query({ to: address, since: sinceOf(options.since), limit: "100", cursor })
      const page = (await get<Wire.InboxMessageList>(`${api}/messages?${params}`, headers, options)).value
      found.push(...page.data)
      cursor = page.next_cursor ?? undefined
    } while (cursor !== undefined)
    return found
  }

  const awaitEmail = async (options: AwaitEmailOptions): Promise<Wire.InboxMessage> => {
    const timeout = options.timeout ?? defaultTimeout
    const deadline = Date.now() + timeout
    const since = sinceOf(options.since)
    for (;;) {
      const remaining = deadline - Date.now()
      if (remaining <= 0) throw new EmailNotReceivedError({ to: options.to, subject: options.subject, timeout })
      const wait = Math.min(remaining, longestWait)
      const params = query({ to: options.to, subject: options.subject, since, timeout: `${Math.ceil(wait)}ms` })
      // The request may take the whole wait: its own timeout is longer.
      const answer = await get<Wire.InboxMessage | undefined>(`${api}/wait?${params}`, headers, {
        ...(options.signal === undefined ? {} : { signal: options.signal }),
        timeout: wait + 10_000
      })
      if (answer.status === 200 && answer.value !== undefined) return answer.value
    }
  }

  return {
    awaitEmail,
    emailsTo,
    lastEmailTo: async (address, options = {}) => {
      const params = query({ to: address, since: sinceOf(options.since), limit: "1" })
      const page = (await get<Wire.InboxMessageList>(`${api}/messages?${params}`, headers, options)).value
      const newest = page.data[0]
      return newest === undefined ? undefined : getEmail(newest.id, options)
    },
    getEmail,
    links: (message) => message.links,
    clear: async () => (await send<{ readonly deleted: number }>("DELETE", `${api}/messages`, headers)).value.deleted
  }
}
