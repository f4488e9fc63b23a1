// The routes of the message records, scheduled sends, batches and suppressions (DESIGN section 7), in
// the base variant only: each a thin call to core's Messages or Mailer, which decodes and decides.
import { Mailer, Messages, Wire } from "@mailroom/core"
import * as Effect from "effect/Effect"
import { pathSegment, singleQuery } from "./query.js"
import { ok } from "./responses.js"
import type { Route, Services } from "./router.js"

const messages = Messages.Messages
const mailer = Mailer.Mailer

/** `Idempotent-Replayed: true` on an answer replayed under its Idempotency-Key. */
const replayedHeader = (replayed: boolean): Record<string, string> =>
  replayed ? { "idempotent-replayed": "true" } : {}

// The query parameters are the fields of core's query schemas, so the two cannot drift apart.
const listEmailsNames = Object.keys(Wire.ListEmailsQuery.fields)
const listSuppressionsNames = Object.keys(Wire.ListSuppressionsQuery.fields)
// Only to name what else is wrong when the query also has an unknown or repeated parameter.
const decodeListEmails = Wire.decode(Wire.ListEmailsQuery)
const decodeListSuppressions = Wire.decode(Wire.ListSuppressionsQuery)

/** The routes at fixed paths: `POST|GET /emails`, `POST /emails/batch`, `GET /suppressions`, `POST /suppressions`. */
export const exact = (basePath: string): ReadonlyArray<readonly [string, Route]> => [
  [
    `${basePath}/emails`,
    {
      method: "POST",
      variant: "emails",
      auth: "apiKey",
      body: "json",
      // The hot path of the API: plain steps, no generator.
      run: ({ request, principal, body }) =>
        Effect.flatMap(mailer, (m) => {
          const idempotencyKey = request.header("idempotency-key")
          return Effect.map(
            m.send(
              principal,
              body as typeof Wire.SendEmailRequest.Encoded,
              idempotencyKey === undefined ? {} : { idempotencyKey }
            ),
            // 202: a scheduled message is accepted, not sent.
            ({ response, replayed }) => ok("status" in response ? 202 : 201, response, replayedHeader(replayed))
          )
        })
    }
  ],
  [
    `${basePath}/emails/batch`,
    {
      method: "POST",
      variant: "emails",
      auth: "apiKey",
      body: "batch",
      // 200 when any item was accepted; 400 with the same per-item body when none was.
      run: ({ request, principal, body }) =>
        Effect.gen(function* () {
          yield* singleQuery(request.query, [])
          const idempotencyKey = request.header("idempotency-key")
          const { response, replayed } = yield* (yield* mailer).sendBatch(
            principal,
            body,
            idempotencyKey === undefined ? {} : { idempotencyKey }
          )
          return ok(response.data.length > 0 ? 200 : 400, response, replayedHeader(replayed))
        })
    }
  ],
  [
    `${basePath}/emails`,
    {
      method: "GET",
      variant: "emails",
      auth: "apiKey",
      run: ({ request, principal }) =>
        Effect.gen(function* () {
          const query = yield* singleQuery(request.query, listEmailsNames, decodeListEmails)
          return ok(200, yield* (yield* messages).list(principal, query as typeof Wire.ListEmailsQuery.Encoded))
        })
    }
  ],
  [
    `${basePath}/suppressions`,
    {
      method: "GET",
      variant: "suppressions",
      auth: "apiKey",
      run: ({ request, principal }) =>
        Effect.gen(function* () {
          const query = yield* singleQuery(request.query, listSuppressionsNames, decodeListSuppressions)
          const page = yield* (yield* messages).listSuppressions(
            principal,
            query as typeof Wire.ListSuppressionsQuery.Encoded
          )
          return ok(200, page)
        })
    }
  ],
  [
    `${basePath}/suppressions`,
    {
      method: "POST",
      variant: "suppressions",
      auth: "apiKey",
      body: "json",
      run: ({ request, principal, body }) =>
        Effect.gen(function* () {
          yield* singleQuery(request.query, [])
          const { suppression, created } = yield* (yield* messages).suppress(principal, body as never)
          return ok(created ? 201 : 200, suppression)
        })
    }
  ]
]

/** Routes with one path segment a parameter: `{prefix}{name}{suffix}`. */
export interface Pattern {
  readonly prefix: string
  /** What follows the parameter (`/cancel`); empty when it is the last segment. */
  readonly suffix: string
  /** The path as the OpenAPI document writes it, for spans and logs: never the caller's value. */
  readonly template: string
  readonly routes: ReadonlyArray<Route>
}

/**
 * A route on one path parameter and no query: the query refused if it has any parameter, the segment
 * decoded as `name`, then `f`'s answer with 200.
 */
const onSegment =
  <A, E>(
    name: string,
    f: (segment: string, context: Parameters<Route["run"]>[0]) => Effect.Effect<A, E, Services>
  ): Route["run"] =>
  (context) =>
    Effect.gen(function* () {
      yield* singleQuery(context.request.query, [])
      const segment = yield* pathSegment(context.param ?? "", name)
      return ok(200, yield* f(segment, context))
    })

/** `GET|PATCH /emails/{id}`, `POST /emails/{id}/cancel` and `DELETE /suppressions/{email}`. */
export const patterns = (basePath: string): ReadonlyArray<Pattern> => [
  {
    prefix: `${basePath}/emails/`,
    suffix: "/cancel",
    template: `${basePath}/emails/{id}/cancel`,
    routes: [
      {
        method: "POST",
        variant: "emails",
        auth: "apiKey",
        run: onSegment("id", (id, { principal }) => Effect.flatMap(mailer, (m) => m.cancel(principal, id)))
      }
    ]
  },
  {
    prefix: `${basePath}/emails/`,
    suffix: "",
    template: `${basePath}/emails/{id}`,
    routes: [
      {
        method: "GET",
        variant: "emails",
        auth: "apiKey",
        run: onSegment("id", (id, { principal }) => Effect.flatMap(messages, (m) => m.get(principal, id)))
      },
      {
        method: "PATCH",
        variant: "emails",
        auth: "apiKey",
        body: "json",
        run: onSegment("id", (id, { principal, body }) =>
          Effect.flatMap(mailer, (m) => m.reschedule(principal, id, body as never))
        )
      }
    ]
  },
  {
    prefix: `${basePath}/suppressions/`,
    suffix: "",
    template: `${basePath}/suppressions/{email}`,
    routes: [
      {
        method: "DELETE",
        variant: "suppressions",
        auth: "apiKey",
        run: onSegment("email", (email, { principal }) =>
          Effect.flatMap(messages, (m) => m.unsuppress(principal, email))
        )
      }
    ]
  }
]

/** The pattern `pathname` matches and its parameter, still percent-encoded: one non-empty segment. */
export const match = (
  all: ReadonlyArray<Pattern>,
  pathname: string
): { readonly pattern: Pattern; readonly param: string } | undefined => {
  for (const pattern of all) {
    const { prefix, suffix } = pattern
    if (pathname.length <= prefix.length + suffix.length || !pathname.startsWith(prefix)) continue
    if (!pathname.endsWith(suffix)) continue
    const param = pathname.slice(prefix.length, pathname.length - suffix.length)
    if (!param.includes("/")) return { pattern, param }
  }
  return undefined
}
