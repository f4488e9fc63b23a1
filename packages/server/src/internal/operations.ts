// The config sections for running a fleet: `sending.rateLimit` (one token bucket per provider account,
// on Redis when the instances share one), `metrics` (Prometheus) and `tracing` (OTLP).
import * as Schema from "effect/Schema"
import { type Decoded, decodeKind, nonEmpty, positive, SecretOrEnv, Time, Url } from "./decode.js"
import { hashedSecretProblems } from "./secrets.js"
import { type IdempotencyConfig, RedisQueue, redisUrl } from "./stores.js"

export const RateLimit = Schema.Struct({
  perSecond: Schema.optionalKey(positive("a number of recipients per second above 0", false)),
  from: Schema.optionalKey(Schema.Literal("ses")),
  burst: Schema.optionalKey(positive("a whole number of recipients above 0", true)),
  wait: Schema.optionalKey(Time),
  refresh: Schema.optionalKey(Time),
  // {"kind": "memory"} or {"kind": "redis", "url"?, "prefix"?}: decoded by kind below.
  store: Schema.optionalKey(Schema.Unknown)
})

export const Metrics = Schema.Struct({
  enabled: Schema.Boolean,
  token: Schema.optionalKey(SecretOrEnv)
})

export const Tracing = Schema.Struct({
  otlpEndpoint: Url,
  serviceName: Schema.optionalKey(nonEmpty("a service name"))
})

/** `sending.rateLimit` with its defaults filled and its Redis URL read. */
export interface RateLimitConfig {
  readonly rate: { readonly perSecond: number } | { readonly from: "ses"; readonly refresh: string }
  readonly burst?: number
  readonly wait: string
  readonly store:
    | { readonly kind: "memory" }
    | { readonly kind: "redis"; readonly url: string; readonly prefix?: string }
}

/** The `metrics` section as the server uses it. */
export interface MetricsConfig {
  /** The bearer token `GET /metrics` asks for: plain, or `sha256:<hex>`. None: open to whoever reaches it. */
  readonly token: string | undefined
}

/** The `tracing` section as the server uses it: where spans are exported and under which service name. */
export interface TracingConfig {
  readonly otlpEndpoint: string
  readonly serviceName: string
}

type Env = Readonly<Record<string, string | undefined>>

/**
 * `sending.rateLimit`: a fixed `perSecond` or the SES account's own rate, on Redis by default when the
 * Idempotency-Keys are (the instances then share one bucket), else in this process.
 */
export const rateLimitSection = (
  section: typeof RateLimit.Type | undefined,
  providerKind: string,
  idempotency: IdempotencyConfig,
  env: Env
): Decoded<RateLimitConfig> => {
  if (section === undefined) return { value: undefined, problems: [] }
  const path = "sending.rateLimit"
  const problems: Array<string> = []
  if ((section.perSecond === undefined) === (section.from === undefined)) {
    problems.push(`${path}: give perSecond, or "from": "ses" to read the rate from the SES account, not both`)
  }
  if (section.from === "ses" && providerKind !== "ses") {
    problems.push(`${path}.from: "ses" needs "provider": {"kind": "ses"}`)
  }
  if (section.refresh !== undefined && section.from === undefined) {
    problems.push(`${path}.refresh: only applies with "from": "ses"`)
  }
  const shared = idempotency.kind === "redis" ? idempotency.url : undefined
  const decoded = decodeKind(
    `${path}.store`,
    section.store ?? (shared === undefined ? { kind: "memory" } : { kind: "redis" }),
    { memory: Schema.Struct({ kind: Schema.Literal("memory") }), redis: RedisQueue }
  )
  problems.push(...decoded.problems)
  let store: RateLimitConfig["store"] | undefined
  const kind = decoded.value as typeof RedisQueue.Type | { readonly kind: "memory" } | undefined
  if (kind?.kind === "memory") store = { kind: "memory" }
  else if (kind?.kind === "redis") {
    const url = redisUrl(kind.url, `${path}.store.url`, env, shared)
    problems.push(...url.problems)
    if (url.value !== undefined) {
      store = { kind: "redis", url: url.value, ...(kind.prefix === undefined ? {} : { prefix: kind.prefix }) }
    }
  }
  if (problems.length > 0 || store === undefined) return { problems }
  return {
    value: {
      rate:
        section.perSecond === undefined
          ? { from: "ses", refresh: section.refresh ?? "5 minutes" }
          : { perSecond: section.perSecond },
      ...(section.burst === undefined ? {} : { burst: section.burst }),
      wait: section.wait ?? "5 seconds",
      store
    },
    problems: []
  }
}

export const metricsSection = (section: typeof Metrics.Type | undefined, env: Env): Decoded<MetricsConfig> => {
  if (section === undefined || !section.enabled) return { value: undefined, problems: [] }
  const token = section.token
  if (typeof token === "object") {
    const value = env[token.env]
    if (value === undefined || value.trim() === "") {
      return { problems: [`metrics.token: the environment variable ${token.env} is not set`] }
    }
    const problems = hashedSecretProblems(value, "metrics.token")
    return problems.length > 0 ? { problems } : { value: { token: value }, problems: [] }
  }
  const problems = hashedSecretProblems(token, "metrics.token")
  return problems.length > 0 ? { problems } : { value: { token }, problems: [] }
}

export const tracingSection = (section: typeof Tracing.Type | undefined): Decoded<TracingConfig> =>
  section === undefined
    ? { value: undefined, problems: [] }
    : {
        value: {
          otlpEndpoint: section.otlpEndpoint.replace(/\/+$/, ""),
          serviceName: section.serviceName ?? "mailroom"
        },
        problems: []
      }
