// The wire schemas of the message records and suppressions: the queries of `GET /emails` and
// `GET /suppressions`, `POST /suppressions`'s body, and the pages they answer. Wire.ts exports them.
import * as Schema from "effect/Schema"
import * as SchemaTransformation from "effect/SchemaTransformation"
import { EmailRecord, State, states } from "../MessageLog.js"
import { Reason, Suppression } from "../Suppressions.js"
import { tagPattern } from "./sendExtras.js"
import { atMostCharacters, controlExceptTab, controlRange } from "./text.js"
import { EmailAddress, rule, tagTextMessage } from "./wireRules.js"

/** A message id as `POST /emails` answers it: a UUID (v7), matched in either case. */
export const messageIdPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** `{id}` of `GET /emails/{id}`. Anything else names no message: a 404, like an id that is not stored. */
export const MessageId = Schema.String.pipe(
  Schema.check(
    rule((s: string) => messageIdPattern.test(s), "is not a message id", {
      pattern: "^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$"
    })
  )
)

/** Rows a page holds when the query does not say. */
export const defaultPageSize = 20
/** The most rows one page holds. */
export const maxPageSize = 100

/**
 * `limit`: a whole number from 1 to 100, as a query string carries it (digits) or as a number. The
 * OpenAPI document states it as an integer parameter.
 */
export const PageLimit = Schema.Union([Schema.String, Schema.Number]).pipe(
  Schema.check(
    rule(
      (n: string | number) =>
        typeof n === "number"
          ? Number.isInteger(n) && n >= 1 && n <= maxPageSize
          : /^[0-9]{1,9}$/.test(n) && Number(n) >= 1 && Number(n) <= maxPageSize,
      `must be a whole number from 1 to ${maxPageSize}`,
      {}
    )
  ),
  Schema.decodeTo(
    Schema.Number,
    SchemaTransformation.transform<number, string | number>({ decode: Number, encode: (n) => n })
  )
)

/** The `next_cursor` of the page before: opaque, made by the list that answered it. */
export const PageCursor = Schema.String.pipe(
  Schema.check(
    rule((s: string) => /^[A-Za-z0-9_-]{1,2048}$/.test(s), "is not a cursor this API answered", {
      pattern: "^[A-Za-z0-9_-]{1,2048}$"
    })
  )
)

const dateTime = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/
const dateTimePattern =
  "^\\d{4}-\\d{2}-\\d{2}[Tt](?:[01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(?:\\.\\d{1,9})?(?:[Zz]|[+-](?:[01]\\d|2[0-3]):[0-5]\\d)$"
const earliest = "0000-01-01T00:00:00.000Z"
const latest = "9999-12-31T23:59:59.999Z"

/**
 * Milliseconds since the epoch of an RFC 3339 date-time with its offset, rounded up to the
 * millisecond (records keep milliseconds: `since` and `until` then select exactly the same records);
 * undefined when it is not one, or names a day the month does not have. A leap second is refused.
 */
const instantOf = (text: string): number | undefined => {
  const m = dateTime.exec(text)
  if (m === null) return undefined
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number
  ]
  const [offsetHours, offsetMinutes] = [Number(m[10] ?? 0), Number(m[11] ?? 0)]
  if (month < 1 || month > 12 || hour > 23 || minute > 59 || second > 59 || offsetHours > 23 || offsetMinutes > 59) {
    return undefined
  }
  // setUTCFullYear, not Date.UTC: the latter reads years 0 to 99 as 1900 to 1999.
  const date = new Date(0)
  date.setUTCFullYear(year, month - 1, day)
  if (date.getUTCDate() !== day) return undefined
  const millis = Math.ceil(Number((m[7] ?? "").padEnd(9, "0")) / 1e6)
  const offset = (m[9] === "-" ? -1 : 1) * (offsetHours * 60 + offsetMinutes)
  return date.getTime() + ((hour * 60 + minute - offset) * 60 + second) * 1000 + millis
}

/** An instant as records store it: ISO 8601 in UTC, to the millisecond, within years 0 to 9999. */
const utcIso = (text: string): string => {
  const ms = instantOf(text) ?? 0
  const iso = new Date(ms).toISOString()
  // Outside four-digit years ISO strings gain a sign and stop sorting as text: clamp to the ends.
  return iso.startsWith("-") ? earliest : iso.startsWith("+") ? latest : iso
}

/** `since` and `until`: an RFC 3339 date-time with an offset (`2026-05-01T09:00:00+02:00`), stored as UTC. */
export const Timestamp = Schema.String.pipe(
  Schema.check(
    // An offset's `+` sent unencoded in a query string arrives as a space: say so, not only what is wanted.
    rule(
      (s: string) => !/\d \d{2}:\d{2}$/.test(s),
      "has a space where its offset's + belongs: in a query string, send the + as %2B (2026-05-01T09:00:00%2B02:00)",
      {},
      true
    ),
    rule(
      (s: string) => instantOf(s) !== undefined,
      "must be an RFC 3339 date-time with an offset, such as 2026-05-01T09:00:00Z",
      { format: "date-time", pattern: dateTimePattern }
    )
  ),
  Schema.decodeTo(Schema.String, SchemaTransformation.transform({ decode: utcIso, encode: (s: string) => s }))
)

const tagFilter = new RegExp(`^${tagPattern.source.slice(1, -1)}:${tagPattern.source.slice(1, -1)}$`)

/** `tag`: `name:value`, the tag a message was sent with. */
export const TagFilter = Schema.String.pipe(
  Schema.check(
    rule((s: string) => tagFilter.test(s), `must be name:value, each ${tagTextMessage.replace("must be ", "")}`, {
      pattern: tagFilter.source
    })
  ),
  Schema.decodeTo(
    Schema.Struct({ name: Schema.String, value: Schema.String }),
    SchemaTransformation.transform({
      decode: (s: string) => ({ name: s.slice(0, s.indexOf(":")), value: s.slice(s.indexOf(":") + 1) }),
      encode: (t: { readonly name: string; readonly value: string }) => `${t.name}:${t.value}`
    })
  )
)

const oneOf = (values: ReadonlyArray<string>) => `must be one of ${values.join(", ")}`

/** `GET /emails`: newest first, filtered; each field as the query string names it. */
export const ListEmailsQuery = Schema.Struct({
  limit: Schema.optionalKey(PageLimit),
  cursor: Schema.optionalKey(PageCursor),
  status: Schema.optionalKey(State.annotate({ message: oneOf(states) })),
  /** A recipient, to, cc or bcc; the domain compared case-insensitively. */
  to: Schema.optionalKey(EmailAddress),
  tag: Schema.optionalKey(TagFilter),
  /** Created at or after. */
  since: Schema.optionalKey(Timestamp),
  /** Created before. */
  until: Schema.optionalKey(Timestamp)
})
export type ListEmailsQuery = typeof ListEmailsQuery.Type

/** `GET /suppressions`: newest first. */
export const ListSuppressionsQuery = Schema.Struct({
  limit: Schema.optionalKey(PageLimit),
  cursor: Schema.optionalKey(PageCursor),
  reason: Schema.optionalKey(Reason.annotate({ message: oneOf(Reason.literals) }))
})
export type ListSuppressionsQuery = typeof ListSuppressionsQuery.Type

/** `POST /suppressions`. */
export const SuppressRequest = Schema.Struct({
  email: EmailAddress,
  /**
   * Default `manual`. `bounced` and `complained` may be given too, to import the list of a provider
   * left behind with its reasons; every reason stops sends alike.
   */
  reason: Schema.optionalKey(Reason.annotate({ message: oneOf(Reason.literals) })),
  /** A note kept with the entry: at most 500 characters, no control characters. */
  detail: Schema.optionalKey(
    Schema.String.pipe(
      Schema.check(
        rule(
          (s: string) => !controlExceptTab.test(s) && atMostCharacters(s, 500),
          "must be at most 500 characters, without control characters",
          { maxLength: 500, pattern: `^[^${controlRange}]*$` }
        )
      )
    )
  )
}).annotate({ identifier: "SuppressRequest" })
export type SuppressRequest = typeof SuppressRequest.Type

/** A page of `GET /emails`; `next_cursor` is null on the last. */
export const EmailList = Schema.Struct({
  data: Schema.Array(EmailRecord),
  next_cursor: Schema.NullOr(Schema.String)
}).annotate({ identifier: "EmailList" })
export type EmailList = typeof EmailList.Type

/** A page of `GET /suppressions`; `next_cursor` is null on the last. */
export const SuppressionList = Schema.Struct({
  data: Schema.Array(Suppression),
  next_cursor: Schema.NullOr(Schema.String)
}).annotate({ identifier: "SuppressionList" })
export type SuppressionList = typeof SuppressionList.Type

/** `DELETE /suppressions/{email}`: the address as it was stored. */
export const UnsuppressResponse = Schema.Struct({
  deleted: Schema.Boolean,
  email: Schema.String
}).annotate({ identifier: "UnsuppressResponse" })
export type UnsuppressResponse = typeof UnsuppressResponse.Type
