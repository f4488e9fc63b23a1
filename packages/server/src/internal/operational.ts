// The routes the server answers itself, outside the API and its credentials: `GET /` (where to go
// next), `GET /healthz`, `GET /readyz` and, when enabled, `GET /metrics`. Not in the OpenAPI document.
import type { IncomingMessage, ServerResponse } from "node:http"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type { MetricsConfig } from "../ServerConfig.js"
import type * as Health from "./health.js"
import * as Home from "./home.js"
import { metricsAnswer } from "./telemetry.js"

const probes = new Set(["/healthz", "/readyz", "/metrics"])

/** Paths that load balancers and scrapers call every few seconds. */
export const isProbe = (path: string) => probes.has(path)

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  const text = JSON.stringify(body)
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(text),
    "cache-control": "no-store",
    ...headers
  })
  res.end(text)
}

export const make = (options: {
  readonly metrics: MetricsConfig | undefined
  /** The runtime's context, once the layers are built. */
  readonly context: () => Context.Context<never> | undefined
  /** "starting" or "shutting down" while the server is not serving the API, else undefined. */
  readonly state: () => string | undefined
  readonly readiness: ReturnType<typeof Health.make>["readiness"]
  /** Where `GET /` points: known once the server listens and the viewer has started. */
  readonly home: () => Home.Links
}) => {
  const serves = (method: string | undefined, path: string) =>
    (method === "GET" || method === "HEAD") &&
    (path === "/" ||
      path === "/healthz" ||
      path === "/readyz" ||
      (path === "/metrics" && options.metrics !== undefined))

  const answer = async (path: string, req: IncomingMessage, res: ServerResponse): Promise<void> => {
    // The process answers: all /healthz says. A load balancer restarts what stops answering it.
    if (path === "/healthz") return json(res, 200, { status: "ok" })
    if (path === "/") return Home.answer(req, res, options.home())
    const context = options.context()
    const state = options.state()
    if (path === "/readyz") {
      // Not ready while starting or draining, so a load balancer sends nothing new here.
      if (state !== undefined || context === undefined) {
        return json(res, 503, { ready: false, checks: { server: state ?? "starting" } }, { "retry-after": "1" })
      }
      const result = await Effect.runPromiseWith(context as Context.Context<never>)(
        options.readiness as Effect.Effect<{ ready: boolean; checks: Record<string, string> }>
      )
      return json(res, result.ready ? 200 : 503, result)
    }
    if (context === undefined) return json(res, 503, { message: "starting" }, { "retry-after": "1" })
    const metrics = metricsAnswer(options.metrics as MetricsConfig, req.headers.authorization, context)
    res.writeHead(metrics.status, { ...metrics.headers, "content-length": Buffer.byteLength(metrics.body) })
    res.end(metrics.body)
  }
  return { serves, answer }
}
