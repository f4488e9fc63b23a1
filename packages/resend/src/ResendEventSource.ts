// Resend's delivery webhooks in, verified: Svix signs each with the Standard Webhooks scheme (HMAC-SHA256
// over `id.timestamp.body` with the `whsec_` secret) under `svix-*` header names, checked in constant time.
import { timingSafeEqual } from "node:crypto"
import { EventSource, type MailEvent, WebhookDelivery } from "@mailroom/core"
import * as Adapter from "@mailroom/core/adapter"
import * as Clock from "effect/Clock"
import type * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { translate } from "./internal/events.js"

/** The webhook's signing secret, its path and its body limit. */
export interface Options {
  /**
   * The webhook's signing secret from Resend's dashboard (`whsec_...`), plain or `Redacted`. It signs,
   * so it cannot be given as a digest. Required.
   */
  readonly secret: Adapter.Secret
  /**
   * How far `svix-timestamp` may be from this server's clock, either way, before a request is refused
   * as a replay. Default 5 minutes, as Svix's own libraries.
   */
  readonly tolerance?: Duration.Input
  /** The path segment it is served under by `@mailroom/http`. Default `"resend"`: `POST /webhooks/resend`. */
  readonly name?: string
}

const refuse = (reason: EventSource.Reason["_tag"], message: string) =>
  Effect.fail(EventSource.refusal("resend", reason, message))

/** Whether one of the header's `v1,<base64>` signatures is `expected`, comparing each in constant time. */
const signedWith = (header: string, expected: string): boolean => {
  const wanted = Buffer.from(expected)
  let found = false
  for (const candidate of header.split(" ")) {
    const given = Buffer.from(candidate)
    // Every candidate is compared, so the time taken does not say which one matched.
    if (given.byteLength === wanted.byteLength && timingSafeEqual(given, wanted)) found = true
  }
  return found
}

/** The key of a `whsec_` secret, or a `ConfigError` naming the option. */
const keyOf = (secret: Adapter.Secret) =>
  Effect.try({
    try: () => WebhookDelivery.signingKey(secret),
    catch: () =>
      Adapter.invalidOption("secret", 'must be the webhook\'s signing secret, "whsec_" followed by its key in base64')
  })

/**
 * The source. Fails with a `ConfigError` naming the option when one is unusable: a `secret` that is not
 * a `whsec_` secret, a `tolerance` that is not a positive duration, a `name` that is no path segment.
 */
export const make = (options: Options): Effect.Effect<EventSource.EventSource, Config.ConfigError> =>
  Effect.gen(function* () {
    const key = yield* keyOf(options.secret)
    const tolerance = Duration.toMillis(yield* Adapter.duration("tolerance", options.tolerance ?? "5 minutes"))
    const name = options.name ?? "resend"
    if (!/^[a-z0-9-]+$/.test(name)) {
      return yield* Effect.fail(Adapter.invalidOption("name", "must be a path segment: a-z, 0-9 and -"))
    }

    const receive = (request: EventSource.InboundRequest) =>
      Effect.gen(function* () {
        const id = request.header("svix-id")
        const timestamp = request.header("svix-timestamp")
        const signature = request.header("svix-signature")
        if (id === undefined || timestamp === undefined || signature === undefined) {
          return yield* refuse("Unauthenticated", "svix-id, svix-timestamp and svix-signature are required")
        }
        if (!/^\d{1,15}$/.test(timestamp)) return yield* refuse("Unauthenticated", "svix-timestamp is not a time")
        // The Clock, so that a TestClock can move past the tolerance.
        const now = yield* Clock.currentTimeMillis
        if (Math.abs(now - Number(timestamp) * 1000) > tolerance) {
          return yield* refuse("Unauthenticated", "svix-timestamp is too far from now: a replay, or a clock off")
        }
        const text = Buffer.from(request.body).toString("utf8")
        if (!signedWith(signature, WebhookDelivery.signature(key, id, Number(timestamp), text))) {
          return yield* refuse("Unauthenticated", "the signature does not verify with the webhook's secret")
        }
        let body: unknown
        try {
          body = JSON.parse(text)
        } catch {
          return yield* refuse("Malformed", "the body is not JSON")
        }
        const result = translate(body, id)
        if ("malformed" in result) return yield* refuse("Malformed", result.malformed)
        if ("ignored" in result) {
          yield* Effect.logInfo(`[mailroom] Resend: ignored ${result.ignored}`)
          return [] as ReadonlyArray<MailEvent.Unrouted>
        }
        return result.events
      })

    return { name, receive }
  })
