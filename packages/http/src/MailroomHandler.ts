// The API as request handlers: `node` for anything that hands over Node's (req, res) — node:http,
// Express, Fastify's raw mode — and `web` for (Request) => Response runtimes (Hono, Next.js, Bun, Deno).
import type { IncomingMessage, ServerResponse } from "node:http"
import { pipeline, Readable } from "node:stream"
import * as Adapter from "@mailroom/core/adapter"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Mounted from "./internal/mounted.js"
import { BodyAlreadyRead, BytesNotKept, bodyOf, headerOf, mountIn, mountOf, readBody } from "./internal/nodeRequest.js"
import * as Router from "./internal/router.js"

/** The router's options, and what the Node handler does with a request it does not serve. */
export interface Options extends Router.Options {
  /**
   * What the Node handler does with a request no route of mailroom's serves, when it is called with
   * a `next` function (Express, Connect): `"next"` hands it on, so the app's own routes after it still
   * answer; `"404"` answers 404 `{"message"}` itself. Without `next` (node:http) it always answers 404.
   * Default `"next"`.
   */
  readonly unknownRoutes?: "next" | "404"
}

/** What the handlers need: core's Mailer, Attachments, Messages, Organizations and MailEvents (`Mailroom.layer` provides them all). */
export type Services = Router.Services

/**
 * Node's `(req, res)`. The promise settles (never rejects) once the answer is written, or abandoned
 * because the client went away; callers that only need a listener can ignore it.
 */
export type NodeHandler = (req: IncomingMessage, res: ServerResponse, next?: (error?: unknown) => void) => Promise<void>
/** A handler of Web requests: `(Request) => Promise<Response>`. */
export type WebHandler = (request: Request) => Promise<Response>

/** The API as a Node `(req, res)` handler and as a Web handler. */
export interface Handlers {
  readonly node: NodeHandler
  readonly web: WebHandler
}

/** Releases a body nobody will read: the store's file handle closes with it. */
const discard = (body: ReadableStream | null) => {
  if (body !== null && !body.locked) body.cancel().catch(() => undefined)
}

/**
 * The Node handler. `fixed`: a mount the caller knows and the framework leaves in `req.url` (the
 * Fastify plugin's prefix), taken off before routing; without it, a mount the framework took off
 * itself is read from the request (Express's `req.baseUrl`) when a link needs it.
 */
const nodeHandler = (handle: ReturnType<typeof Router.make>, options: Options, fixed?: string): NodeHandler => {
  const logError = options.logError ?? ((message: string) => console.error(message))
  let warned = false
  let warnedBytes = false
  return (req, res, next) => {
    let oversized = false
    const target = req.url ?? "/"
    const mark = target.indexOf("?")
    let pathname = mark === -1 ? target : target.slice(0, mark)
    const mount = fixed === undefined ? undefined : mountIn(pathname, fixed)
    if (mount) pathname = pathname.slice(mount.length) || "/"
    const incoming: Router.Incoming = {
      method: req.method ?? "GET",
      pathname,
      // Read only by the routes that hand out links (not POST /emails).
      get mount() {
        return mount ?? mountOf(req)
      },
      // Parsed only by the routes that read it (not POST /emails).
      get query() {
        return new URLSearchParams(mark === -1 ? "" : target.slice(mark + 1))
      },
      header: (name) => headerOf(req.headers[name]),
      body: (limit) =>
        readBody(req, limit).then(
          (body) => {
            // A body we stopped reading is not drained: the connection closes instead.
            if (body === "too-large" && !req.readableEnded) oversized = true
            return body
          },
          (error: unknown) => {
            // Answered 400 like any unreadable body; said once to whoever runs the app, who can fix it.
            if (error instanceof BodyAlreadyRead && !warned) {
              warned = true
              logError(`[mailroom] ${error.message}`)
            }
            throw error
          }
        ),
      toWeb: () => {
        const body = req.method === "GET" || req.method === "HEAD" ? undefined : bodyOf(req)
        if (body instanceof BytesNotKept) {
          // Said once to whoever runs the app, who can fix the order; every such upload is refused.
          if (!warnedBytes) {
            warnedBytes = true
            logError(`[mailroom] ${body.message}`)
          }
          return body
        }
        // The store routes read only the path and query; the Host header is the client's to choose.
        return new Request(new URL(req.url ?? "/", "http://localhost"), {
          method: req.method ?? "GET",
          headers: Object.entries(req.headers).flatMap(([name, value]) =>
            value === undefined ? [] : [[name, headerOf(value) ?? ""] as [string, string]]
          ),
          ...(body === undefined ? {} : { body, duplex: "half" as const })
        })
      }
    }
    const handOn = typeof next === "function" && options.unknownRoutes !== "404" ? next : undefined
    // Settles once the answer is written or abandoned, never with an error: a client that went
    // away is the normal end of some requests, not a failure of the process.
    return new Promise<void>((settled) => {
      const write = (answer: Router.Answer) => {
        if ("web" in answer) {
          const body = answer.web.body
          if (res.destroyed) {
            // The status is still the request's outcome, for whoever logs it.
            res.statusCode = answer.web.status
            discard(body)
            return settled()
          }
          const headers: Record<string, string> = {}
          answer.web.headers.forEach((value, name) => {
            headers[name] = value
          })
          // A store that refused an upload part-way has not read it all: close rather than drain.
          if (!req.complete) headers.connection = "close"
          // A client that stops reading is let go: no connection held for ever by a stalled reader.
          const idle = answer.idleTimeoutMillis
          if (idle !== undefined) res.setTimeout(idle, () => res.destroy())
          res.writeHead(answer.web.status, headers)
          if (body === null) {
            res.end()
            return settled()
          }
          // pipeline, not pipe: a client that goes away mid-download releases the store's stream.
          pipeline(Readable.fromWeb(body as import("node:stream/web").ReadableStream), res, () => settled())
          return
        }
        if ("unrouted" in answer && handOn !== undefined) {
          handOn()
          return settled()
        }
        if (res.destroyed) {
          res.statusCode = answer.status
          return settled()
        }
        // A body we stopped reading is not drained: the connection closes instead.
        const headers = oversized || answer.close === true ? { ...answer.headers, connection: "close" } : answer.headers
        res.writeHead(answer.status, { ...headers, "content-length": Buffer.byteLength(answer.body) })
        res.end(answer.body)
        settled()
      }
      const fail = () => {
        if (!res.destroyed) {
          if (!res.headersSent) res.writeHead(500, { "content-type": "application/json; charset=utf-8" })
          res.end(JSON.stringify({ message: "internal error" }))
        } else if (!res.headersSent) res.statusCode = 500
        settled()
      }
      handle(incoming).then((answer) => {
        try {
          write(answer)
        } catch {
          if ("web" in answer) discard(answer.web.body)
          fail()
        }
      }, fail)
    })
  }
}

const webHandler = (handle: ReturnType<typeof Router.make>): WebHandler => {
  return async (request) => {
    const url = new URL(request.url)
    const answer = await handle({
      method: request.method,
      pathname: url.pathname,
      // The whole URL reaches a Web handler: its mount is `basePath`.
      mount: "",
      query: url.searchParams,
      header: (name) => request.headers.get(name) ?? undefined,
      body: async (limit) => {
        if (request.body === null) return new Uint8Array(0)
        const reader = request.body.getReader()
        const chunks: Array<Uint8Array> = []
        let size = 0
        for (;;) {
          const { done, value } = await reader.read()
          if (done) break
          size += value.byteLength
          if (size > limit) {
            await reader.cancel()
            return "too-large"
          }
          chunks.push(value)
        }
        return Buffer.concat(chunks)
      },
      toWeb: () => request
    })
    if (!("web" in answer)) return new Response(answer.body, { status: answer.status, headers: answer.headers })
    // A caller that went away never reads the body: release it (and the store's file) here, since
    // not every runtime cancels the body of a response it can no longer send.
    const body = answer.web.body
    if (body !== null) {
      if (request.signal.aborted) discard(body)
      else request.signal.addEventListener("abort", () => discard(body), { once: true })
    }
    return answer.web
  }
}

const trimMount = (mount: string) => mount.replace(/\/+$/, "")

/** Both handlers over the services of the current Effect context. */
export const make = (options: Options = {}): Effect.Effect<Handlers, never, Services> =>
  Effect.map(Effect.context<Services>(), (context) => {
    const handle = Router.make(Effect.runPromiseExitWith(context), options)
    return Mounted.register({ node: nodeHandler(handle, options), web: webHandler(handle) }, (mount) =>
      nodeHandler(handle, options, trimMount(mount))
    )
  })

/** The handlers of a layer being built, and how to wait for it and dispose of it. */
export interface Started extends Handlers {
  /**
   * Settles once the layer is built, which starts at once. Rejects when it cannot be built, saying
   * why (`mailroom could not start: ... at ["SES_REGION"]` for a missing variable): await it before
   * listening, so a misconfiguration stops start-up instead of failing every request. Requests that
   * arrive earlier wait for it.
   */
  readonly ready: Promise<void>
  /**
   * Waits for the requests already running (a send waiting on its provider is answered as it ends),
   * then releases the layer (clients, connections). Requests from then on are answered 503, nothing
   * done. To bound the wait, abort the `mailer.shutdown` signal given to `Mailroom.layer`.
   */
  readonly dispose: () => Promise<void>
}

/** Why building a layer failed, as one line that names the setting (a ConfigError names the variable). */
const startupError = (cause: unknown): Error => {
  const squashed = Exit.isExit(cause) && Exit.isFailure(cause) ? Cause.squash(cause.cause) : cause
  const message = squashed instanceof Error ? squashed.message : String(squashed)
  return new Error(`mailroom could not start: ${message}`, { cause: squashed })
}

/** Both handlers over a layer, for code outside Effect; the layer is built at once (see `ready`). */
export const fromLayer = <E>(layer: Layer.Layer<Services, E>, options: Options = {}): Started => {
  const runtime = ManagedRuntime.make(layer)
  // Not caught here: a caller who never awaits `ready` still learns of a broken configuration at
  // start-up, as an unhandled rejection naming it, rather than from a 500 on every request.
  const ready = runtime.context().then(
    () => undefined,
    (cause: unknown) => Promise.reject(startupError(cause))
  )
  // Disposing a ManagedRuntime interrupts every fiber it started: a send in flight would be answered
  // 500, though the provider may have the message. So dispose waits for the requests running.
  const calls = Adapter.inFlight()
  const run: Router.Runner = (effect) =>
    calls.isClosing() ? Promise.resolve(Exit.fail(Adapter.disposing())) : calls.track(runtime.runPromiseExit(effect))
  const handle = Router.make(run, options)
  const started = {
    node: nodeHandler(handle, options),
    web: webHandler(handle),
    ready,
    dispose: async () => {
      await calls.drain()
      await runtime.dispose()
    }
  }
  return Mounted.register(started, (mount) => nodeHandler(handle, options, trimMount(mount)))
}
