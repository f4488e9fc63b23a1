// The config's `events` section: the webhooks organisations receive, the queue they wait in, and the
// providers' inbound webhooks (SES, Postmark, Resend). Decoded by Schema; the rest is checked here.
import { WebhookDelivery } from "@mailroom/core"
import * as Schema from "effect/Schema"
import type { Organization, OrganizationsSource, SecretOrEnv } from "../ServerConfig.js"
import { nonEmpty, SecretOrEnv as SecretOrEnvSchema, Time, Url } from "./decode.js"
import { hashedSecretProblems } from "./secrets.js"
import { type IdempotencyConfig, type QueueConfig, queueSection } from "./stores.js"

/** The config's `events` section: delivery events, their webhooks and the queue they go through. */
export const Events = Schema.Struct({
  webhooks: Schema.optionalKey(
    Schema.Array(Schema.Struct({ organization: Schema.String, url: Url, secret: SecretOrEnvSchema }))
  ),
  // {"kind": "local" | "memory" | "redis", ...}: decoded by kind in the events section.
  queue: Schema.optionalKey(Schema.Unknown),
  retry: Schema.optionalKey(
    Schema.Struct({
      firstDelay: Schema.optionalKey(Time),
      maxDelay: Schema.optionalKey(Time),
      giveUpAfter: Schema.optionalKey(Time)
    })
  ),
  timeout: Schema.optionalKey(Time),
  ses: Schema.optionalKey(
    Schema.Struct({
      topicArns: Schema.optionalKey(Schema.Array(nonEmpty("a topic ARN"))),
      eventBridgeSecret: Schema.optionalKey(SecretOrEnvSchema),
      eventBridgeHeader: Schema.optionalKey(nonEmpty("a header name"))
    })
  ),
  postmark: Schema.optionalKey(
    Schema.Struct({
      basicAuth: Schema.optionalKey(Schema.Struct({ username: nonEmpty("a user name"), password: SecretOrEnvSchema })),
      header: Schema.optionalKey(Schema.Struct({ name: nonEmpty("a header name"), value: SecretOrEnvSchema }))
    })
  ),
  // Resend signs its webhooks (Svix): the secret of the webhook, `whsec_...`.
  resend: Schema.optionalKey(Schema.Struct({ secret: SecretOrEnvSchema, tolerance: Schema.optionalKey(Time) }))
})

/** The events section with every `{"env"}` secret read and every directory resolved. */
export interface EventsConfig {
  readonly webhooks: ReadonlyArray<{ readonly organization: string; readonly url: string; readonly secret: string }>
  readonly queue: QueueConfig
  readonly retry: { readonly firstDelay?: string; readonly maxDelay?: string; readonly giveUpAfter?: string }
  readonly timeout: string | undefined
  readonly ses:
    | {
        readonly topicArns: ReadonlyArray<string>
        readonly eventBridgeSecret?: string
        readonly eventBridgeHeader?: string
      }
    | undefined
  readonly postmark:
    | {
        readonly basicAuth?: { readonly username: string; readonly password: string }
        readonly header?: { readonly name: string; readonly value: string }
      }
    | undefined
  readonly resend: { readonly secret: string; readonly tolerance?: string } | undefined
}

/** `events.resend` with its secret read; a secret that cannot sign is added to `problems`. */
const resendSection = (
  section: NonNullable<typeof Events.Type.resend>,
  secret: (value: SecretOrEnv, path: string) => string,
  problems: Array<string>
): NonNullable<EventsConfig["resend"]> => {
  const value = secret(section.secret, "events.resend.secret")
  if (value !== "") {
    try {
      WebhookDelivery.signingKey(value, "events.resend.secret")
    } catch (error) {
      problems.push(`${(error as Error).message} (the webhook's signing secret in Resend)`)
    }
  }
  return { secret: value, ...(section.tolerance === undefined ? {} : { tolerance: section.tolerance }) }
}

/** Checks what the schema cannot (organisations, secrets, environment variables) and fills the defaults. */
export const eventsSection = (
  section: typeof Events.Type,
  organizations: ReadonlyArray<typeof Organization.Type>,
  organizationsSource: OrganizationsSource,
  idempotency: IdempotencyConfig,
  at: (dir: string) => string,
  env: Readonly<Record<string, string | undefined>>
): EventsConfig | { readonly problems: ReadonlyArray<string> } => {
  const problems: Array<string> = []
  const read = (value: SecretOrEnv, path: string): string => {
    if (typeof value === "string") return value
    const found = env[value.env]
    if (found === undefined || found.trim() === "")
      problems.push(`${path}: the environment variable ${value.env} is not set`)
    return found ?? ""
  }
  /** A secret the server only checks callers against, so it may be `sha256:<hex>` of the value. */
  const checked = (value: SecretOrEnv, path: string): string => {
    const found = read(value, path)
    problems.push(...hashedSecretProblems(found, path))
    return found
  }
  const seen = new Set<string>()
  const webhooks = (section.webhooks ?? []).map((webhook, i) => {
    const path = `events.webhooks[${i}]`
    // Organisations from a database are not known until they are looked up.
    if (organizationsSource.kind === "config" && !organizations.some((org) => org.id === webhook.organization)) {
      problems.push(`${path}.organization: no organisation ${webhook.organization} is configured`)
    }
    if (seen.has(webhook.organization))
      problems.push(`${path}.organization: ${webhook.organization} has a webhook already`)
    seen.add(webhook.organization)
    const value = read(webhook.secret, `${path}.secret`)
    if (value !== "") {
      try {
        WebhookDelivery.signingKey(value, `${path}.secret`)
      } catch (error) {
        problems.push((error as Error).message)
      }
    }
    return { organization: webhook.organization, url: webhook.url, secret: value }
  })
  const ses =
    section.ses === undefined
      ? undefined
      : {
          topicArns: section.ses.topicArns ?? [],
          ...(section.ses.eventBridgeSecret === undefined
            ? {}
            : { eventBridgeSecret: checked(section.ses.eventBridgeSecret, "events.ses.eventBridgeSecret") }),
          ...(section.ses.eventBridgeHeader === undefined ? {} : { eventBridgeHeader: section.ses.eventBridgeHeader })
        }
  if (ses !== undefined && ses.topicArns.length === 0 && ses.eventBridgeSecret === undefined) {
    problems.push("events.ses: give topicArns (SNS), eventBridgeSecret (EventBridge), or both")
  }
  const { basicAuth, header } = section.postmark ?? {}
  const postmark =
    section.postmark === undefined
      ? undefined
      : {
          ...(basicAuth === undefined
            ? {}
            : {
                basicAuth: {
                  username: checked(basicAuth.username, "events.postmark.basicAuth.username"),
                  password: checked(basicAuth.password, "events.postmark.basicAuth.password")
                }
              }),
          ...(header === undefined
            ? {}
            : { header: { name: header.name, value: checked(header.value, "events.postmark.header.value") } })
        }
  if (section.postmark !== undefined && basicAuth === undefined && header === undefined) {
    problems.push("events.postmark: give basicAuth, header, or both (Postmark signs nothing)")
  }
  const resend = section.resend === undefined ? undefined : resendSection(section.resend, read, problems)
  const queue = queueSection(section.queue, idempotency, at, env)
  problems.push(...queue.problems)
  if (problems.length > 0 || queue.value === undefined) return { problems }
  return {
    webhooks,
    queue: queue.value,
    retry: section.retry ?? {},
    timeout: section.timeout,
    ses,
    postmark,
    resend
  }
}
