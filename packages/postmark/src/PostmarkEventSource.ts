// Postmark delivery webhooks in. Postmark signs nothing, so each request must bring the credentials
// configured on the webhook (HTTP Basic auth in its URL, a custom header, or both), compared in constant time.
import { EventSource, type MailEvent } from "@mailroom/core"
import * as Adapter from "@mailroom/core/adapter"
import type * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import { translate } from "./internal/events.js"

/** The webhook's credentials (Basic auth, a header, or both), its path and its body limit. */
export interface Options {
  /**
   * The user and password of the webhook URL, `https://user:password@host/webhooks/postmark`, which
   * Postmark sends as HTTP Basic authorization. The password may be given as `sha256:<hex>` of it.
   */
  readonly basicAuth?: { readonly username: string; readonly password: Adapter.Secret }
  /** A custom header set on the webhook in Postmark, and its value (or `sha256:<hex>` of it). */
  readonly header?: { readonly name: string; readonly value: Adapter.Secret }
  /** The path segment it is served under by `@mailroom/http`. Default `"postmark"`: `POST /webhooks/postmark`. */
  readonly name?: string
  /**
   * The largest body accepted, in bytes (a larger one is a 413). Default 1 MiB: a delivery record is a
   * few KiB; only a bounce or complaint with the webhook's "Include message content" on can be larger.
   */
  readonly maxBodyBytes?: number
}

/** The default `maxBodyBytes`. */
export const defaultMaxBodyBytes = 1024 * 1024

const refuse = (reason: EventSource.Reason["_tag"], message: string) =>
  Effect.fail(EventSource.refusal("postmark", reason, message))

/** The `user:password` of a Basic authorization header, or undefined. */
const basicCredentials = (header: string | undefined) => {
  const match = /^Basic +([A-Za-z0-9+/]+={0,2}) *$/i.exec(header ?? "")
  if (match?.[1] === undefined) return undefined
  const decoded = Buffer.from(match[1], "base64").toString("utf8")
  const colon = decoded.indexOf(":")
  return colon < 0 ? undefined : { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) }
}

/**
 * A matcher of `secret`, or a `ConfigError` naming `option` when it is empty (which would let an empty
 * header in) or a malformed `sha256:` hash (which nothing could match).
 */
const matcher = (option: ReadonlyArray<string>, secret: Adapter.Secret) => {
  const value = Adapter.secretValue(secret)
  const malformed = Adapter.hashedSecretProblem(value)
  if (value.trim() === "") return Effect.fail(Adapter.invalidOption(option, "must not be empty"))
  if (malformed !== undefined) return Effect.fail(Adapter.invalidOption(option, malformed))
  return Effect.succeed(Adapter.secretMatcher(secret, option.join(".")))
}

/**
 * The source. Every configured credential must be present and match. Fails with a `ConfigError` naming
 * the option when one is unusable, or when none is configured, since an open endpoint would let anyone
 * post events to any organisation.
 */
export const make = (options: Options): Effect.Effect<EventSource.EventSource, Config.ConfigError> =>
  Effect.gen(function* () {
    const checks: Array<(header: EventSource.InboundRequest["header"]) => boolean> = []
    if (options.basicAuth !== undefined) {
      const username = yield* matcher(["basicAuth", "username"], options.basicAuth.username)
      const password = yield* matcher(["basicAuth", "password"], options.basicAuth.password)
      checks.push((header) => {
        const given = basicCredentials(header("authorization"))
        // Both compared whatever the first answer, so the time taken does not say which was wrong.
        const [user, pass] = [username(given?.username), password(given?.password)]
        return user && pass
      })
    }
    if (options.header !== undefined) {
      const name = options.header.name.toLowerCase()
      if (!/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(name)) {
        return yield* Effect.fail(Adapter.invalidOption(["header", "name"], "must be an HTTP header name"))
      }
      const value = yield* matcher(["header", "value"], options.header.value)
      checks.push((header) => value(header(name)))
    }
    if (checks.length === 0) {
      return yield* Effect.fail(
        Adapter.invalidOption("basicAuth", "give basicAuth, header, or both: Postmark signs nothing")
      )
    }
    const name = options.name ?? "postmark"
    if (!/^[a-z0-9-]+$/.test(name)) {
      return yield* Effect.fail(Adapter.invalidOption("name", "must be a path segment: a-z, 0-9 and -"))
    }
    const maxBodyBytes = yield* Adapter.positiveInteger("maxBodyBytes", options.maxBodyBytes ?? defaultMaxBodyBytes)
    // Every check is made whatever the first answers, so the time taken does not say which was wrong.
    const genuine = (header: EventSource.InboundRequest["header"]) =>
      checks.map((check) => check(header)).every(Boolean)
    const unauthenticated = () =>
      EventSource.refusal("postmark", "Unauthenticated", "missing or wrong webhook credentials")

    return {
      name,
      maxBodyBytes,
      // Postmark's credentials are all in the headers: a caller without them costs no body.
      checkHeaders: (header) => (genuine(header) ? "verified" : unauthenticated()),
      receive: (request) =>
        Effect.gen(function* () {
          if (!genuine(request.header)) return yield* Effect.fail(unauthenticated())
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
  })
