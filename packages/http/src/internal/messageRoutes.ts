// The routes of the message records and suppressions (DESIGN section 7), in the base variant only:
// each a thin call to core's Messages for the caller's organisation, which decodes and decides.
import { Messages, Wire } from "@mailroom/core"
import { Effect } from "effect"
import { pathSegment, singleQuery } from "./query.js"
import { ok } from "./responses.js"
import type { Route } from "./router.js"

const messages = Messages.Messages

// The query parameters are the fields of core's query schemas, so the two cannot drift apart.
const listEmailsNames = Object.keys(Wire.ListEmailsQuery.fields)
const listSuppressionsNames = Object.keys(Wire.ListSuppressionsQuery.fields)

/** The routes at fixed paths: `GET /emails`, `GET /suppressions`, `POST /suppressions`. */
export const exact = (basePath: string): ReadonlyArray<readonly [string, Route]> => [
  [
    `${basePath}/emails`,
    {
      method: "GET",
      variant: "emails",
      auth: "apiKey",
      run: ({ request, principal }) =>
        Effect.gen(function* () {
          const query = yield* singleQuery(request.query, listEmailsNames)
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
          const query = yield* singleQuery(request.query, listSuppressionsNames)
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

/** Routes whose last path segment is a parameter: `{prefix}{name}`. */
export interface Pattern {
  readonly prefix: string
  /** The path as the OpenAPI document writes it, for spans and logs: never the caller's value. */
  readonly template: string
  readonly routes: ReadonlyArray<Route>
}

/** `GET /emails/{id}` and `DELETE /suppressions/{email}`. */
export const patterns = (basePath: string): ReadonlyArray<Pattern> => [
  {
    prefix: `${basePath}/emails/`,
    template: `${basePath}/emails/{id}`,
    routes: [
      {
        method: "GET",
        variant: "emails",
        auth: "apiKey",
        run: ({ request, principal, param }) =>
          Effect.gen(function* () {
            yield* singleQuery(request.query, [])
            const id = yield* pathSegment(param ?? "", "id")
            return ok(200, yield* (yield* messages).get(principal, id))
          })
      }
    ]
  },
  {
    prefix: `${basePath}/suppressions/`,
    template: `${basePath}/suppressions/{email}`,
    routes: [
      {
        method: "DELETE",
        variant: "suppressions",
        auth: "apiKey",
        run: ({ request, principal, param }) =>
          Effect.gen(function* () {
            yield* singleQuery(request.query, [])
            const email = yield* pathSegment(param ?? "", "email")
            return ok(200, yield* (yield* messages).unsuppress(principal, email))
          })
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
    const { prefix } = pattern
    if (pathname.length > prefix.length && pathname.startsWith(prefix) && !pathname.includes("/", prefix.length)) {
      return { pattern, param: pathname.slice(prefix.length) }
    }
  }
  return undefined
}
