// The API's operations on message records and suppressions, each for the caller's organisation only:
// what `GET /emails`, `GET /emails/{id}` and the suppression routes answer, and the Promise facade too.
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { withSpan } from "./internal/tracing.js"
import { NotFound, Unavailable, type ValidationError } from "./MailroomError.js"
import { type EmailDetail, MessageLog } from "./MessageLog.js"
import type { Principal } from "./Organizations.js"
import { normalize, type Suppression, Suppressions } from "./Suppressions.js"
import * as Wire from "./Wire.js"

type Flat<A> = { readonly [K in keyof A]: A[K] }

/** `GET /emails`'s query as code writes it (the facade's and `@mailroom/client`'s): `limit` a number. */
export type ListEmailsRequest = Flat<Omit<typeof Wire.ListEmailsQuery.Encoded, "limit"> & { readonly limit?: number }>

/** `GET /suppressions`'s query as code writes it. */
export type ListSuppressionsRequest = Flat<
  Omit<typeof Wire.ListSuppressionsQuery.Encoded, "limit"> & { readonly limit?: number }
>

/** An address added to the suppression list, or the entry it already had. */
export interface Suppressed {
  /** The entry now on the list. */
  readonly suppression: Suppression
  /** False when the address was on the list already: the entry is the one kept, with its first reason. */
  readonly created: boolean
}

/** The message records' and suppressions' operations, for the caller's organisation only. */
export interface Messages {
  /** `GET /emails/{id}`: the record and its events. Another organisation's id, or none, is `NotFound`. */
  readonly get: (principal: Principal, id: string) => Effect.Effect<EmailDetail, NotFound | Unavailable>
  /** `GET /emails`: a page, newest first; each bad query field is a `ValidationError` naming it. */
  readonly list: (
    principal: Principal,
    query: typeof Wire.ListEmailsQuery.Encoded
  ) => Effect.Effect<Wire.EmailList, ValidationError | Unavailable>
  /** `POST /suppressions`: adds the address (reason `manual` unless given), or answers the entry kept. */
  readonly suppress: (
    principal: Principal,
    request: typeof Wire.SuppressRequest.Encoded
  ) => Effect.Effect<Suppressed, ValidationError | Unavailable>
  /** `DELETE /suppressions/{email}`: `NotFound` when the address is not on the list. */
  readonly unsuppress: (
    principal: Principal,
    email: string
  ) => Effect.Effect<Wire.UnsuppressResponse, ValidationError | NotFound | Unavailable>
  /** `GET /suppressions`: a page, newest first. */
  readonly listSuppressions: (
    principal: Principal,
    query: typeof Wire.ListSuppressionsQuery.Encoded
  ) => Effect.Effect<Wire.SuppressionList, ValidationError | Unavailable>
}

export const Messages: Context.Service<Messages, Messages> = Context.Service("@mailroom/core/Messages")

// Message ids are UUIDs (MessageLog.makeId); anything else names no message, and a SQL log typed
// `uuid` would refuse it with an error rather than find nothing.
const isMessageId = Schema.is(Wire.MessageId)

const UnsuppressTarget = Schema.Struct({ email: Wire.EmailAddress })

/** How often `suppress` tries again when the entry it found gone was removed meanwhile. */
const suppressAttempts = 3

/** The service on the `MessageLog` and `Suppressions` in context. */
export const make = Effect.gen(function* () {
  const log = yield* MessageLog
  const suppressions = yield* Suppressions
  const decodeList = Wire.decode(Wire.ListEmailsQuery)
  const decodeSuppressionList = Wire.decode(Wire.ListSuppressionsQuery)
  const decodeSuppress = Wire.decode(Wire.SuppressRequest)
  const decodeTarget = Wire.decode(UnsuppressTarget)
  const span = (name: string, principal: Principal) =>
    withSpan(`Messages.${name}`, { attributes: { "mailroom.organization": principal.orgId } })

  const get: Messages["get"] = (principal, id) =>
    (isMessageId(id) ? log.find(principal.orgId, id.toLowerCase()) : Effect.succeed(undefined)).pipe(
      Effect.flatMap((detail) =>
        detail === undefined
          ? Effect.fail(new NotFound({ message: isMessageId(id) ? `no email with id ${id}` : "no email with this id" }))
          : Effect.succeed(detail)
      ),
      span("get", principal)
    )

  const list: Messages["list"] = (principal, query) =>
    decodeList(query).pipe(
      Effect.flatMap((q) => log.list(principal.orgId, { ...q, limit: q.limit ?? Wire.defaultPageSize })),
      span("list", principal)
    )

  const suppress: Messages["suppress"] = (principal, request) =>
    Effect.gen(function* () {
      const input = yield* decodeSuppress(request)
      const now = new Date(yield* Clock.currentTimeMillis).toISOString()
      const entry = {
        email: input.email,
        reason: input.reason ?? "manual",
        ...(input.detail === undefined ? {} : { detail: input.detail })
      }
      for (let attempt = 0; attempt < suppressAttempts; attempt++) {
        const [added] = yield* suppressions.add(principal.orgId, [entry], now)
        if (added !== undefined) return { suppression: added, created: true }
        const [kept] = yield* suppressions.check(principal.orgId, [input.email])
        if (kept !== undefined) return { suppression: kept, created: false }
      }
      return yield* new Unavailable({ message: "the suppression list kept changing while it was written; try again" })
    }).pipe(span("suppress", principal))

  const unsuppress: Messages["unsuppress"] = (principal, email) =>
    decodeTarget({ email }).pipe(
      Effect.flatMap(() => suppressions.remove(principal.orgId, email)),
      Effect.flatMap((deleted) =>
        deleted
          ? Effect.succeed({ deleted: true, email: normalize(email) })
          : Effect.fail(new NotFound({ message: `${email} is not on the suppression list` }))
      ),
      span("unsuppress", principal)
    )

  const listSuppressions: Messages["listSuppressions"] = (principal, query) =>
    decodeSuppressionList(query).pipe(
      Effect.flatMap((q) => suppressions.list(principal.orgId, { ...q, limit: q.limit ?? Wire.defaultPageSize })),
      span("listSuppressions", principal)
    )

  return Messages.of({ get, list, suppress, unsuppress, listSuppressions })
})

/** The operations over the `MessageLog` and `Suppressions` in context (`Mailroom.layer` provides all three). */
export const layer: Layer.Layer<Messages, never, MessageLog | Suppressions> = Layer.effect(Messages, make)
