// Postmark delivery webhooks in. Postmark signs nothing, so each request must bring the credentials
// configured on the webhook (HTTP Basic auth in its URL, a custom header, or both), compared in constant time.
import { EventSource, type MailEvent } from "@mailroom/core"
import { Effect } from "effect"
import { translate } from "./internal/events.js"

export interface Options {
  /**
   * The user and password of the webhook URL, `https://user:password@host/webhooks/postmark`, which
   * Postmark sends as HTTP Basic authorization. The password may be given as `sha256:<hex>` of it.
   */
  readonly basicAuth?: { readonly username: string; readonly password: EventSource.Secret }
  /** A custom header set on the webhook in Postmark, and its value (or `sha256:<hex>` of it). */
  readonly header?: { readonly name: string; readonly value: EventSource.Secret }
  /** The path segment it is served under by `@mailroom/http`. Default `"postmark"`: `POST /webhooks/postmark`. */
  readonly name?: string
}

const refuse = (reason: EventSource.EventSourceError["reason"], message: string) =>
  Effect.fail(new EventSource.EventSourceError({ reason, message }))

/** The `user:password` of a Basic authorization header, or undefined. */
const basicCredentials = (header: string | undefined) => {
  const match = /^Basic +([A-Za-z0-9+/]+={0,2}) *$/i.exec(header ?? "")
  if (match?.[1] === undefined) return undefined
  const decoded = Buffer.from(match[1], "base64").toString("utf8")
  const colon = decoded.indexOf(":")
  return colon < 0 ? undefined : { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) }
}

/**
 * The source. Every configured credential must be present and match; with none configured it throws,
 * since an open endpoint would let anyone post events to any organisation.
 */
export const make = (options: Options): EventSource.EventSource => {
  const checks: Array<(request: EventSource.InboundRequest) => boolean> = []
  if (options.basicAuth !== undefined) {
    const username = EventSource.secretMatcher(options.basicAuth.username, "PostmarkEventSource: basicAuth.username")
    const password = EventSource.secretMatcher(options.basicAuth.password, "PostmarkEventSource: basicAuth.password")
    checks.push((request) => {
      const given = basicCredentials(request.header("authorization"))
      // Both compared whatever the first answer, so the time taken does not say which was wrong.
      const [user, pass] = [username(given?.username), password(given?.password)]
      return user && pass
    })
  }
  if (options.header !== undefined) {
    const name = options.header.name.toLowerCase()
    if (!/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(name))
      throw new Error("PostmarkEventSource: header.name is not a header name")
    const value = EventSource.secretMatcher(options.header.value, "PostmarkEventSource: header.value")
    checks.push((request) => value(request.header(name)))
  }
  if (checks.length === 0) throw new Error("PostmarkEventSource: give basicAuth, header, or both")

  return {
    name: options.name ?? "postmark",
    receive: (request) =>
      Effect.gen(function* () {
        const results = checks.map((check) => check(request))
        if (!results.every(Boolean)) return yield* refuse("Unauthenticated", "missing or wrong webhook credentials")
        let body: unknown
        try {
          body = JSON.parse(Buffer.from(request.body).toString("utf8"))
        } catch {
          return yield* refuse("Malformed", "the body is not JSON")
        }
        const result = translate(body, new Date())
        if ("malformed" in result) return yield* refuse("Malformed", result.malformed)
        if ("ignored" in result) {
          yield* Effect.logInfo(`[mailroom] Postmark: ignored ${result.ignored}`)
          return [] as ReadonlyArray<MailEvent.Unrouted>
        }
        return result.events
      })
  }
}
