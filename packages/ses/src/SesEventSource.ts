// SES delivery events in, verified: through SNS (every message's signature checked against the SNS
// certificate it names, its topic on an allow-list) or an EventBridge API destination (a shared secret).
import { EventSource, type MailEvent } from "@mailroom/core"
import * as Adapter from "@mailroom/core/adapter"
import * as Clock from "effect/Clock"
import type * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { translate } from "./internal/events.js"
import * as Sns from "./internal/sns.js"

/** The SNS topics and EventBridge secret accepted, how certificates are fetched, the path and the body limit. */
export interface Options {
  /**
   * The SNS topics (exact ARNs) whose messages are accepted: the topics of your configuration set's
   * event destinations. A message from any other topic is a 401, signed or not. Default: none, so SNS
   * messages are refused; give this, `eventBridgeSecret`, or both.
   */
  readonly topicArns?: ReadonlyArray<string>
  /**
   * The shared secret an EventBridge API destination sends (as an API key connection) in
   * `eventBridgeHeader`. A plain value, `Redacted`, or `sha256:<hex>` of it. Default: none, EventBridge refused.
   */
  readonly eventBridgeSecret?: Adapter.Secret
  /** The header the EventBridge secret comes in. Default `x-mailroom-webhook-secret`. */
  readonly eventBridgeHeader?: string
  /** How a certificate's PEM text is fetched, given a checked URL. Default: `fetch`, no redirects, the timeout below. */
  readonly fetchCertificate?: (url: URL) => Promise<string>
  /** How a checked `SubscribeURL` is visited to confirm a subscription. Default: a `fetch` GET, no redirects. */
  readonly confirmSubscription?: (url: URL) => Promise<void>
  /** Certificates kept, most recently used first. Default 32 (SNS uses a handful per region). */
  readonly certificateCacheSize?: number
  /** For the default certificate fetch and confirmation. Default 10 seconds. */
  readonly timeout?: Duration.Input
  /** The path segment it is served under by `@mailroom/http`. Default `"ses"`: `POST /webhooks/ses`. */
  readonly name?: string
  /**
   * The largest body accepted, in bytes (a larger one is a 413). Default 512 KiB: an SNS message or an
   * EventBridge event is at most 256 KiB, and the SNS envelope carries the message JSON-escaped.
   */
  readonly maxBodyBytes?: number
}

/** The default `maxBodyBytes`. */
export const defaultMaxBodyBytes = 512 * 1024

const refuse = (reason: EventSource.Reason["_tag"], message: string, cause?: unknown) =>
  Effect.fail(EventSource.refusal("ses", reason, message, cause))

const json = (body: Uint8Array): unknown => {
  try {
    return JSON.parse(Buffer.from(body).toString("utf8"))
  } catch {
    return undefined
  }
}

/** Fetches certificates once each, keeping at most `size` of them; a failed fetch is not kept. */
const certificateCache = (size: number, fetchText: (url: URL) => Promise<string>) => {
  const cache = new Map<string, Promise<Sns.X509Certificate | undefined>>()
  return (url: URL): Promise<Sns.X509Certificate | undefined> => {
    const key = url.href
    let entry = cache.get(key)
    if (entry === undefined) {
      entry = fetchText(url).then((pem) => {
        try {
          return new Sns.X509Certificate(pem)
        } catch {
          return undefined
        }
      })
      entry.catch(() => cache.delete(key))
      while (cache.size >= size) cache.delete(cache.keys().next().value as string)
    } else cache.delete(key)
    cache.set(key, entry)
    return entry
  }
}

/** An SNS topic's ARN, in any partition (`aws`, `aws-cn`, `aws-us-gov`); FIFO topics end in `.fifo`. */
const topicArn = /^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[\w-]{1,256}(\.fifo)?$/

/** The first option `make` refuses, as the ConfigError naming it; undefined when all are usable. */
const problem = (options: Options): Config.ConfigError | undefined => {
  const invalid = Adapter.invalidOption
  const { topicArns = [], eventBridgeSecret, eventBridgeHeader, certificateCacheSize, name } = options
  const index = topicArns.findIndex((arn) => !topicArn.test(arn))
  if (index >= 0) {
    return invalid(["topicArns", index], "must be an SNS topic ARN: arn:aws:sns:<region>:<account>:<name>")
  }
  if (eventBridgeSecret !== undefined && Adapter.secretValue(eventBridgeSecret).trim() === "") {
    return invalid("eventBridgeSecret", "must not be empty")
  }
  const malformed =
    eventBridgeSecret === undefined ? undefined : Adapter.hashedSecretProblem(Adapter.secretValue(eventBridgeSecret))
  if (malformed !== undefined) return invalid("eventBridgeSecret", malformed)
  if (topicArns.length === 0 && eventBridgeSecret === undefined) {
    return invalid("topicArns", "give topicArns (SNS), eventBridgeSecret (EventBridge), or both")
  }
  if (eventBridgeHeader !== undefined && !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(eventBridgeHeader)) {
    return invalid("eventBridgeHeader", "must be an HTTP header name")
  }
  if (certificateCacheSize !== undefined && !(Number.isSafeInteger(certificateCacheSize) && certificateCacheSize > 0)) {
    return invalid("certificateCacheSize", "must be a positive whole number")
  }
  if (name !== undefined && !/^[a-z0-9-]+$/.test(name)) {
    return invalid("name", "must be a path segment: a-z, 0-9 and -")
  }
  const { maxBodyBytes } = options
  if (maxBodyBytes !== undefined && !(Number.isSafeInteger(maxBodyBytes) && maxBodyBytes > 0)) {
    return invalid("maxBodyBytes", "must be a positive whole number")
  }
  return undefined
}

/**
 * The source. Fails with a `ConfigError` naming the option when one is unusable, or when it would
 * accept nothing (neither `topicArns` nor `eventBridgeSecret`).
 */
export const make = (options: Options): Effect.Effect<EventSource.EventSource, Config.ConfigError> =>
  Effect.gen(function* () {
    const refused = problem(options)
    if (refused !== undefined) return yield* Effect.fail(refused)
    const timeout = Duration.toMillis(yield* Adapter.duration("timeout", options.timeout ?? "10 seconds"))
    return source(options, timeout)
  })

/** The source for options `make` checked; `timeout` in milliseconds. */
const source = (options: Options, timeout: number): EventSource.EventSource => {
  const topics = new Set(options.topicArns ?? [])
  const eventBridge =
    options.eventBridgeSecret === undefined
      ? undefined
      : EventSource.secretMatcher(options.eventBridgeSecret, "SesEventSource: eventBridgeSecret")
  const eventBridgeHeader = (options.eventBridgeHeader ?? "x-mailroom-webhook-secret").toLowerCase()
  const certificate = certificateCache(
    options.certificateCacheSize ?? 32,
    options.fetchCertificate ??
      (async (url) => {
        const response = await fetch(url, { redirect: "error", signal: AbortSignal.timeout(timeout) })
        if (!response.ok) throw new Error(`${url.href} answered ${response.status}`)
        return await response.text()
      })
  )
  const confirm =
    options.confirmSubscription ??
    (async (url: URL) => {
      const response = await fetch(url, { redirect: "error", signal: AbortSignal.timeout(timeout) })
      await response.arrayBuffer()
      if (!response.ok) throw new Error(`SNS answered ${response.status}`)
    })

  const events = (record: unknown, via: string) =>
    Effect.suspend(() => {
      const result = translate(record, new Date())
      if ("events" in result) return Effect.succeed(result.events)
      return Effect.logInfo(`[mailroom] ${via}: ignored ${result.ignored}`).pipe(
        Effect.as([] as ReadonlyArray<MailEvent.Unrouted>)
      )
    })

  const fromEventBridge = (request: EventSource.InboundRequest) =>
    Effect.gen(function* () {
      const body = json(request.body)
      if (typeof body !== "object" || body === null || Array.isArray(body)) {
        return yield* refuse("Malformed", "the body is not a JSON object")
      }
      // The whole EventBridge event, or its `detail` alone when an input transformer passes only that.
      const detail = (body as { readonly detail?: unknown }).detail
      return yield* events(detail ?? body, "EventBridge")
    })

  const fromSns = (request: EventSource.InboundRequest) =>
    Effect.gen(function* () {
      const parsed = Sns.parse(json(request.body))
      if ("problem" in parsed) return yield* refuse("Malformed", `not an SNS message: ${parsed.problem}`)
      const { envelope } = parsed
      const declared = request.header("x-amz-sns-message-type")
      if (declared !== undefined && declared !== envelope.Type) {
        return yield* refuse("Malformed", "x-amz-sns-message-type does not match the message's Type")
      }
      if (!topics.has(envelope.TopicArn)) {
        return yield* refuse("Unauthenticated", `messages from the topic ${envelope.TopicArn} are not accepted`)
      }
      // The Clock, so that a TestClock can age a message (and a certificate, below).
      const now = yield* Clock.currentTimeMillis
      if (Sns.isStale(envelope, now)) {
        return yield* refuse("Unauthenticated", "the message is more than one hour old (its Timestamp is signed)")
      }
      const url = Sns.certificateUrl(envelope)
      if (typeof url === "string") return yield* refuse("Unauthenticated", url)
      const cert = yield* Effect.tryPromise({
        try: () => certificate(url),
        catch: (cause) =>
          EventSource.refusal("ses", "Unavailable", "the signing certificate could not be fetched", cause)
      })
      if (cert === undefined) return yield* refuse("Unauthenticated", "SigningCertURL: not a PEM certificate")
      if (!Sns.isCurrent(cert, new Date(now)))
        return yield* refuse("Unauthenticated", "the signing certificate has expired")
      if (!Sns.isSignedBy(envelope, cert)) return yield* refuse("Unauthenticated", "the signature does not verify")

      switch (envelope.Type) {
        case "SubscriptionConfirmation": {
          // Only now, signed by SNS: a forged confirmation could otherwise make this server fetch any URL.
          const subscribe = Sns.subscribeUrl(envelope)
          if (typeof subscribe === "string") return yield* refuse("Malformed", subscribe)
          yield* Effect.tryPromise({
            try: () => confirm(subscribe),
            catch: (cause) =>
              EventSource.refusal("ses", "Unavailable", "the subscription could not be confirmed", cause)
          })
          yield* Effect.logInfo(`[mailroom] confirmed the SNS subscription to ${envelope.TopicArn}`)
          return []
        }
        case "UnsubscribeConfirmation":
          yield* Effect.logWarning(
            `[mailroom] this endpoint was unsubscribed from ${envelope.TopicArn}; SES events from it stop`
          )
          return []
        case "Notification":
          return yield* events(json(Buffer.from(envelope.Message, "utf8")), `SNS ${envelope.TopicArn}`)
      }
    })

  return {
    name: options.name ?? "ses",
    maxBodyBytes: options.maxBodyBytes ?? defaultMaxBodyBytes,
    checkHeaders: (header) => {
      const secret = header(eventBridgeHeader)
      if (secret !== undefined && eventBridge !== undefined) {
        return eventBridge(secret)
          ? "verified"
          : EventSource.refusal("ses", "Unauthenticated", `the ${eventBridgeHeader} header does not match`)
      }
      if (topics.size === 0) {
        return EventSource.refusal("ses", "Unauthenticated", `the ${eventBridgeHeader} header is missing`)
      }
      // SNS names the topic in a header too: one off the list is refused before its body is read.
      const topic = header("x-amz-sns-topic-arn")
      if (topic !== undefined && !topics.has(topic)) {
        return EventSource.refusal("ses", "Unauthenticated", "messages from this topic are not accepted")
      }
      // Only the body's signature can prove an SNS message.
      return "unverified"
    },
    receive: (request) => {
      const secret = request.header(eventBridgeHeader)
      if (secret !== undefined && eventBridge !== undefined) {
        return eventBridge(secret)
          ? fromEventBridge(request)
          : refuse("Unauthenticated", `the ${eventBridgeHeader} header does not match`)
      }
      return fromSns(request)
    }
  }
}
