// The client's reads of message records, its calls on a scheduled message and on the suppression list:
// one request each, and the lists as async iterators that fetch the next page only when the loop asks.
import type { Emails, RequestOptions, Suppressions } from "../MailroomClient.js"
import { segment } from "./segment.js"
import type { Answer } from "./transport.js"
import type * as Wire from "./wire.js"

/** One JSON exchange with the server, as the client makes every call. */
export type Call = <A>(
  method: string,
  url: string,
  headers: Record<string, string>,
  body: unknown,
  options: RequestOptions
) => Promise<Answer<A>>

/** `?name=value&...` of the fields given, or nothing. */
const queryOf = (query: object): string => {
  const params = new URLSearchParams()
  for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, String(value))
  const text = params.toString()
  return text === "" ? "" : `?${text}`
}

/** Pages from `cursor` (the first when undefined) until one says there is no next. */
async function* pagesFrom<Q extends { readonly cursor?: string }, P extends { readonly next_cursor: string | null }>(
  page: (query: Q) => Promise<P>,
  query: Q
): AsyncIterableIterator<P> {
  let cursor = query.cursor
  for (;;) {
    const answer = await page(cursor === undefined ? query : { ...query, cursor })
    yield answer
    if (answer.next_cursor === null) return
    cursor = answer.next_cursor
  }
}

export interface Dependencies {
  readonly baseUrl: string
  readonly call: Call
  /** The `x-api-key` header, or a TypeError naming the operation when the client has no key. */
  readonly withApiKey: (what: string) => Record<string, string>
}

export const make = ({ baseUrl, call, withApiKey }: Dependencies) => {
  /** One call with the API key: its body's value (a scheduled message's cancel and reschedule too). */
  const one = async (method: string, url: string, what: string, options: RequestOptions, body?: unknown) =>
    (await call<never>(method, url, withApiKey(what), body, options)).value
  const get = (url: string, what: string, options: RequestOptions) => one("GET", url, what, options)
  const emailUrl = (id: string, what: string) => `${baseUrl}/emails/${segment(id, what)}`

  const emailsPage: Emails["listPage"] = (query = {}, options = {}) =>
    get(`${baseUrl}/emails${queryOf(query)}`, "emails.list", options)

  const suppressionsPage: Suppressions["listPage"] = (query = {}, options = {}) =>
    get(`${baseUrl}/suppressions${queryOf(query)}`, "suppressions.list", options)

  const emails: Omit<Emails, "send" | "sendBatch"> = {
    // async: a refused id (`segment`) rejects the promise, as every other problem does.
    get: async (id, options = {}) => get(emailUrl(id, "emails.get"), "emails.get", options),
    cancel: async (id, options = {}) =>
      one("POST", `${emailUrl(id, "emails.cancel")}/cancel`, "emails.cancel", options),
    // A Date is sent as JSON writes it: its toISOString().
    reschedule: async (id, at, options = {}) =>
      one("PATCH", emailUrl(id, "emails.reschedule"), "emails.reschedule", options, { scheduled_at: at }),
    list: (query = {}, options = {}) => pagesFrom((q) => emailsPage(q, options), query),
    listPage: emailsPage
  }

  const suppressions: Suppressions = {
    add: async (request, options = {}) => {
      const url = `${baseUrl}/suppressions`
      const answer = await call<Wire.Suppression>("POST", url, withApiKey("suppressions.add"), request, options)
      return { ...answer.value, created: answer.status === 201 }
    },
    remove: async (email, options = {}) =>
      (
        await call<Wire.UnsuppressResponse>(
          "DELETE",
          `${baseUrl}/suppressions/${segment(email, "suppressions.remove")}`,
          withApiKey("suppressions.remove"),
          undefined,
          options
        )
      ).value,
    list: (query = {}, options = {}) => pagesFrom((q) => suppressionsPage(q, options), query),
    listPage: suppressionsPage
  }

  return { emails, suppressions }
}
