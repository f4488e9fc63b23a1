// The standalone service: builds the layers a config names, serves both API variants on one
// node:http server, logs one line per request, and shuts down gracefully.
import type { IncomingMessage, Server as NodeServer, ServerResponse } from "node:http"
import { type AddressInfo, isIPv6 } from "node:net"
import { join } from "node:path"
import { MailroomError } from "@mailroom/core"
import { MailroomHandler } from "@mailroom/http"
import type * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import { optional } from "./internal/adapters.js"
import { answerClientError } from "./internal/clientError.js"
import { fromAdapter, isConfigError } from "./internal/configError.js"
import { redisConnections, sqlConnections } from "./internal/connections.js"
import { eventSources } from "./internal/events.js"
import * as Health from "./internal/health.js"
import * as Lines from "./internal/lines.js"
import * as Operational from "./internal/operational.js"
import * as ServerOrganizations from "./internal/organizations.js"
import * as RateLimiting from "./internal/rateLimit.js"
import * as Runtime from "./internal/runtime.js"
import * as Startup from "./internal/startup.js"
import { ServerStartError } from "./internal/startup.js"
import * as Telemetry from "./internal/telemetry.js"
import * as Viewer from "./internal/viewer/deferred.js"
import type * as ViewerModule from "./internal/viewer/viewer.js"
import * as Waiting from "./internal/viewer/waiting.js"
import { type Config, isServerConfigError, ServerConfigError } from "./ServerConfig.js"

// Taken with getBuiltinModule, not imported: an ESM import of node:http builds its namespace from
// every export, and the getter of its WebSocket export loads undici, ~25 ms of every cold start.
const { createServer } = process.getBuiltinModule("node:http")

export { isServerStartError, ServerStartError } from "./internal/startup.js"

/** Where the server listens and where its log lines go. */
export interface StartOptions {
  /** Interface to listen on. Default 127.0.0.1; "0.0.0.0" to serve the network. */
  readonly host?: string
  /** One line per request, and start-up and shutdown notices. Default: stdout, the lines of one turn of the event loop in one write. */
  readonly log?: (line: string) => void
  /** The causes of 5xx answers, one line each. Default: console.error. */
  readonly logError?: (message: string) => void
}

/** A started server: its URL, its config, and how to stop or reload it. */
export interface RunningServer {
  /** The base URL both API variants are served on. */
  readonly url: string
  readonly config: Config
  /**
   * Stops accepting connections, lets requests in flight finish for up to the config's
   * `shutdownGracePeriod`, then closes every connection left and releases the layers.
   */
  readonly close: () => Promise<void>
  /**
   * Serves the organisations (keys, domains) listed in `config` from now on, without a restart.
   * Throws a ServerConfigError, keeping the running ones, when they are invalid or not from the file.
   * Answers the names of the other sections that differ: those take a restart.
   */
  readonly reload: (config: Config) => ReadonlyArray<string>
  /** The outbox viewer's URL; undefined when it is not served (config's `viewer`, the listening address). */
  readonly viewer: string | undefined
}

/** Why a public URL cannot be the base of every link the service hands out, if it cannot. */
const urlProblem = (value: string): string | undefined => {
  if (!URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol)) return "must be an http(s) URL"
  const url = new URL(value)
  return url.search !== "" || url.hash !== "" ? "must not have a query or a fragment" : undefined
}

/** A config built in code has not been through `parse`: its URL is checked here, as the file's would be. */
const checkPublicUrl = (config: Config) => {
  const problem = config.publicUrl === undefined ? undefined : urlProblem(config.publicUrl)
  if (problem !== undefined) throw new ServerConfigError({ source: "config", problems: [`publicUrl: ${problem}`] })
}

/** The providers' webhook sources the config names; a problem with one is the config's. */
const loadEventSources = (config: Config) =>
  eventSources(config.events).catch((cause: unknown) => {
    throw isServerConfigError(cause)
      ? cause
      : new ServerConfigError({ source: "config", problems: [(cause as Error).message] })
  })

/** Node's request and header timeouts from the config's, checked often enough to hold. */
const timeouts = (requestTimeout: number) => ({
  requestTimeout,
  headersTimeout: Math.min(60_000, requestTimeout),
  // Node enforces both timeouts only when it checks its connections (every 30 s by default).
  connectionsCheckingInterval: Math.max(50, Math.min(30_000, requestTimeout / 4))
})

/** The outbox viewer and its inbox API, over the outbox's directory. */
const startViewer = (
  dir: string,
  config: Config,
  runtime: ViewerModule.Options["runtime"],
  at: { readonly host: string; readonly publicUrl: string; readonly options: StartOptions },
  organizationIds: () => ReadonlyArray<string>
) =>
  Viewer.start({
    dir,
    ...config.viewer,
    host: at.host,
    publicUrl: at.publicUrl,
    runtime,
    logError: at.options.logError,
    waiting: Waiting.make(runtime, organizationIds)
  })

/** The readiness checks the config's dependencies call for. */
const healthOf = (config: Config, providerProblem: Parameters<typeof Health.make>[0]["providerProblem"]) =>
  Health.make({
    postgres: config.organizationsSource.kind === "postgres",
    messages: { memory: undefined, sqlite: "SQLite", postgres: "PostgreSQL" }[config.messages.kind],
    providerProblem,
    // The disk store's uploads land in its .tmp first: the same file system as the objects.
    storageDir: config.storage.kind === "local" ? join(config.storage.dir, ".tmp") : undefined,
    outboxDir: config.provider.kind === "outbox" ? config.provider.dir : undefined
  })

/** Listens on `port` and `host`; rejects with a ServerStartError naming the port when it cannot. */
const listen = (server: NodeServer, port: number, host: string) =>
  new Promise<void>((resolve, reject) => {
    server.once("error", (error) => reject(Startup.listenError(error, port, host)))
    server.listen(port, host, () => {
      server.off("error", reject)
      resolve()
    })
  })

/** Resolves once every promise of `pending` has settled, including those added meanwhile. */
const settledAll = async (pending: ReadonlySet<Promise<void>>) => {
  while (pending.size > 0) await Promise.allSettled([...pending])
}

/** Whether `promise` settled within `ms`. */
const within = (promise: Promise<unknown>, ms: number) =>
  new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), ms)
    void promise.then(
      () => {
        clearTimeout(timer)
        resolve(true)
      },
      () => {
        clearTimeout(timer)
        resolve(true)
      }
    )
  })

/**
 * Starts the service for a checked config. Rejects with a ServerConfigError when the layers cannot be
 * built from it, and with a ServerStartError when the port is taken or a dependency the config names
 * cannot be used (each problem naming its field).
 */
export const start = (config: Config, options: StartOptions = {}): Promise<RunningServer> =>
  serve(config, options).catch((cause: unknown) => {
    // A problem found past the file's own checks is still named after the file, when it came from one.
    throw isServerConfigError(cause) && config.source !== undefined
      ? new ServerConfigError({ source: config.source, problems: cause.problems })
      : cause
  })

const serve = async (config: Config, options: StartOptions): Promise<RunningServer> => {
  const log = options.log ?? Lines.toStdout
  const host = options.host ?? "127.0.0.1"
  checkPublicUrl(config)
  const sql = sqlConnections(config)
  const organizations = ServerOrganizations.make(config, sql)
  // The organisations of the file, whose scheduled and cancelled messages the viewer lists.
  let organizationIds = config.organizations.map((organization) => organization.id)
  const sources = await loadEventSources(config)

  if (config.metrics !== undefined) await Telemetry.loadMetrics()

  let closing: Promise<void> | undefined
  // Requests that arrive before the layers are built are answered 503.
  let handle: ((req: IncomingMessage, res: ServerResponse) => Promise<void>) | undefined
  // The runtime's context once built: where the metrics are, and what readiness checks run with.
  let context: Context.Context<never> | undefined
  // Built with the first request's metric, not at start-up: it walks the whole OpenAPI document.
  let routeOfPath: ((pathname: string) => string) | undefined
  const routeOf = (pathname: string) => {
    routeOfPath ??= Telemetry.routeOf(Telemetry.knownRoutes(sources.map((source) => source.name)))
    return routeOfPath(pathname)
  }
  const redis = redisConnections(config)
  const rateLimiting = RateLimiting.make(config, redis)
  const health = healthOf(config, rateLimiting.providerProblem)
  const operational = Operational.make({
    metrics: config.metrics,
    context: () => context,
    state: () => (closing !== undefined ? "shutting down" : handle === undefined ? "starting" : undefined),
    readiness: health.readiness,
    home: () => ({ viewer: viewer?.url, publicUrl })
  })
  let viewer: ViewerModule.Viewer | undefined
  // Answers still being worked on, also those whose client went away: a send must not be cut short.
  const inFlight = new Set<Promise<void>>()
  const requestTimeout = Duration.toMillis(config.requestTimeout)
  const server = createServer(timeouts(requestTimeout), (req, res) => {
    const started = performance.now()
    let logged = false
    // Exactly one line per request: when the answer is sent, or once it is done with if the client left first.
    const path = (req.url ?? "/").split("?")[0] ?? "/"
    const logOnce = (note: string) => {
      if (logged) return
      logged = true
      const took = performance.now() - started
      if (context !== undefined) {
        const request = { method: req.method ?? "GET", route: routeOf(path), status: res.statusCode }
        Telemetry.recordRequest(context, { ...request, seconds: took / 1000 })
      }
      // Load balancers probe every few seconds: their successes would drown the log.
      if (Operational.isProbe(path) && res.statusCode === 200) return
      // The path only: query strings carry storage keys, and no header is ever logged. A path with a
      // parameter is logged as its template: `/suppressions/{email}` holds an address, and a store's
      // route (`/_mailroom/storage/*`) a key, whose file name may name a person.
      const route = routeOf(path)
      const shown = route.includes("{") || route.endsWith("/*") ? route : path
      log(`${req.method} ${shown} ${res.statusCode} ${took.toFixed(1)}ms${note}`)
    }
    res.once("finish", () => {
      logOnce("")
      // While shutting down, a connection whose last request just finished is not kept alive.
      if (closing !== undefined) setImmediate(() => server.closeIdleConnections())
    })
    let done: Promise<void>
    if (operational.serves(req.method, path)) {
      done = operational.answer(path, req, res)
    } else if (handle === undefined) {
      res.writeHead(503, { "content-type": "application/json", "retry-after": "1" })
      res.end(JSON.stringify({ message: "starting" }))
      done = Promise.resolve()
    } else {
      done = viewer?.handle(req, res) ?? handle(req, res)
      inFlight.add(done)
      void done.finally(() => inFlight.delete(done))
    }
    res.once("close", () => {
      if (!res.writableFinished) void done.then(() => logOnce(" (client gone)"))
    })
  })
  server.on("clientError", answerClientError)
  await listen(server, config.port, host)
  const port = (server.address() as AddressInfo).port
  const shown = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host
  // An IPv6 address is bracketed in a URL (`http://[::1]:3000`): written bare, the URL does not parse.
  const url = `http://${isIPv6(shown) ? `[${shown}]` : shown}:${port}`
  const publicUrl = (config.publicUrl ?? url).replace(/\/+$/, "")

  // Aborted when the grace period is over: sends still waiting on the provider are answered then.
  const stopSends = new AbortController()
  // Set once the viewer is up; until then nobody reads the outbox's index.
  let noteWritten = (_messageId: string) => {}
  const runtime = Runtime.make({
    config,
    sql,
    redis,
    organizations,
    rateLimiting,
    health,
    publicUrl,
    shutdown: stopSends.signal,
    noteWritten: (id) => noteWritten(id)
  })
  try {
    const handlers = await runtime.runPromise(
      MailroomHandler.make({ ...optional("logError", options.logError), eventSources: sources, publicUrl })
    )
    context = (await runtime.context()) as Context.Context<never>
    const unusable = await runtime.runPromise(Startup.problems(config))
    if (unusable.length > 0) throw new ServerStartError({ problems: unusable })
    if (config.provider.kind === "outbox") {
      viewer = startViewer(config.provider.dir, config, runtime, { host, publicUrl, options }, () => organizationIds)
      noteWritten = viewer.noteWritten
    }
    handle = handlers.node
  } catch (cause) {
    server.close()
    await runtime.dispose()
    // An outage met while building (a Redis that cannot be reached) names its field already.
    if (MailroomError.isUnavailable(cause)) throw new ServerStartError({ problems: [cause.message] })
    throw isConfigError(cause) ? fromAdapter("", cause) : cause
  }

  const grace = Duration.toMillis(config.shutdownGracePeriod)
  const close = () => {
    closing ??= (async () => {
      await viewer?.close()
      const closed = new Promise<void>((resolve) => server.close(() => resolve()))
      // Idle keep-alive connections would hold close() open; busy ones get the grace period to finish.
      server.closeIdleConnections()
      const drained = Promise.all([closed, settledAll(inFlight)])
      if (!(await within(drained, grace))) {
        // Sends still waiting on their provider are answered now (503, may have been sent once the
        // provider had them), each logged, and their Idempotency-Keys recorded as that outcome.
        stopSends.abort()
        await within(settledAll(inFlight), 2000)
        // Stalled clients and slow transfers: their requests end with an error, their uploads are discarded.
        server.closeAllConnections()
        // What is left is work whose client is gone (an interrupted upload's cleanup); it ends quickly.
        await within(drained, 2000)
      }
      await runtime.dispose()
    })()
    return closing
  }
  const reload = (next: Config) => {
    const others = organizations.reload(next)
    organizationIds = next.organizations.map((organization) => organization.id)
    return others
  }
  return { url, config, close, reload, viewer: viewer?.url }
}
