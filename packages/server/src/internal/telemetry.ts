// What the server reports about itself: requests by route and status as Effect metrics beside core's
// (one registry per server), `GET /metrics` in Prometheus's text format, and spans over OTLP/HTTP JSON.
import { OpenApi } from "@mailroom/http"
import type * as Context from "effect/Context"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import type * as PrometheusMetrics from "effect/observability/PrometheusMetrics"
import type { MetricsConfig, TracingConfig } from "../ServerConfig.js"
import { lazy } from "./lazy.js"
import { tokenMatcher } from "./secrets.js"

const requests = Metric.counter("mailroom_http_requests_total", {
  description: "HTTP requests answered, by method, route and status",
  incremental: true
})

const requestSeconds = Metric.histogram("mailroom_http_request_duration_seconds", {
  description: "How long HTTP requests took to answer, by method and route",
  boundaries: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]
})

/**
 * A route's template for labels: a path of the API as the OpenAPI document names it (`/emails/{id}`
 * for any one segment after `/emails/`, `/emails/{id}/cancel`), a signed-URL route by its prefix, else
 * "unmatched", so a scan of random paths cannot grow the series without bound.
 */
export const routeOf = (known: ReadonlySet<string>) => {
  const templates = [...known]
    .filter((route) => /\/\{[^/{}]+\}(\/[^/{}]+)?$/.test(route))
    .map((template) => {
      const open = template.lastIndexOf("{")
      const close = template.indexOf("}", open)
      return { prefix: template.slice(0, open), suffix: template.slice(close + 1), template }
    })
    // The longer suffix first: `/emails/x/cancel` is the cancel route, not an `{id}` of "x/cancel".
    .sort((a, b) => b.suffix.length - a.suffix.length)
  return (pathname: string) => {
    if (known.has(pathname)) return pathname
    for (const { prefix, suffix, template } of templates) {
      if (pathname.length <= prefix.length + suffix.length || !pathname.startsWith(prefix)) continue
      if (!pathname.endsWith(suffix)) continue
      if (!pathname.slice(prefix.length, pathname.length - suffix.length).includes("/")) return template
    }
    const prefix = /^\/_mailroom\/[a-z]+\//.exec(pathname)?.[0]
    return prefix === undefined ? "unmatched" : `${prefix}*`
  }
}

/** The routes of the API, and the operational ones this server adds outside it. */
export const knownRoutes = (webhooks: ReadonlyArray<string>): ReadonlySet<string> =>
  new Set([
    ...Object.keys((OpenApi.document({ webhooks }) as { paths: Record<string, unknown> }).paths),
    "/healthz",
    "/readyz",
    "/metrics"
  ])

/** A fresh registry: two servers in one process (tests, embedding) each count only their own. */
export const registryLayer = () => Layer.succeed(Metric.MetricRegistry, new Map())

export const recordRequest = (
  context: Context.Context<never>,
  request: { readonly method: string; readonly route: string; readonly status: number; readonly seconds: number }
) => {
  const labels = { method: request.method, route: request.route }
  Metric.withAttributes(requests, { ...labels, status: String(request.status) }).updateUnsafe(1, context)
  Metric.withAttributes(requestSeconds, labels).updateUnsafe(request.seconds, context)
}

// Effect's exporters (and the HTTP client OTLP posts with) load only when the config turns them on.
let prometheus: typeof PrometheusMetrics | undefined

/** Loads the Prometheus formatter; the server calls it at start-up when `/metrics` is on. */
export const loadMetrics = async (): Promise<void> => {
  prometheus = await import("effect/observability/PrometheusMetrics")
}

// Built once per config: the token's digest is not recomputed on every scrape.
const matchers = new WeakMap<MetricsConfig, (presented: string | undefined) => boolean>()

/** `GET /metrics`: 401 without the configured bearer token, else every metric of this server. */
export const metricsAnswer = (
  config: MetricsConfig,
  authorization: string | undefined,
  context: Context.Context<never>
): { readonly status: number; readonly headers: Record<string, string>; readonly body: string } => {
  if (config.token !== undefined) {
    const presented = /^Bearer +(\S+) *$/i.exec(authorization ?? "")?.[1]
    let matches = matchers.get(config)
    if (matches === undefined) {
      matches = tokenMatcher(config.token, "metrics.token")
      matchers.set(config, matches)
    }
    if (!matches(presented)) {
      return {
        status: 401,
        headers: { "content-type": "application/json; charset=utf-8", "www-authenticate": "Bearer" },
        body: JSON.stringify({ message: "missing or invalid metrics token" })
      }
    }
  }
  return {
    status: 200,
    headers: { "content-type": "text/plain; version=0.0.4; charset=utf-8" },
    body: (prometheus as typeof PrometheusMetrics).formatUnsafe(context)
  }
}

/** Effect's tracer exporting to `{otlpEndpoint}/v1/traces` (OTLP/HTTP JSON), flushed when the server closes. */
export const tracingLayer = (config: TracingConfig) =>
  lazy(async () => {
    const [OtlpSerialization, OtlpTracer, FetchHttpClient] = await Promise.all([
      import("effect/observability/OtlpSerialization"),
      import("effect/observability/OtlpTracer"),
      import("effect/http/FetchHttpClient")
    ])
    return OtlpTracer.layer({
      url: `${config.otlpEndpoint}/v1/traces`,
      resource: { serviceName: config.serviceName },
      exportInterval: "2 seconds"
    }).pipe(Layer.provide([OtlpSerialization.layerJson, FetchHttpClient.layer]))
  })
