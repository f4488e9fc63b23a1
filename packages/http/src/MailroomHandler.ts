// The API as request handlers: `node` for anything that hands over Node's (req, res) — node:http,
// Express, Fastify's raw mode — and `web` for (Request) => Response runtimes (Hono, Next.js, Bun, Deno).
import type { IncomingMessage, ServerResponse } from "node:http"
import { pipeline, Readable } from "node:stream"
import { Effect, type Layer, ManagedRuntime } from "effect"
import * as Router from "./internal/router.js"

export type Options = Router.Options

/** What the handlers need: core's Mailer, Attachments, Organizations and the ObjectStore (`Mailroom.layer` provides all four). */
export type Services = Router.Services

export type NodeHandler = (req: IncomingMessage, res: ServerResponse, next?: unknown) => void
export type WebHandler = (request: Request) => Promise<Response>

export interface Handlers {
  readonly node: NodeHandler
  readonly web: WebHandler
}

const headerOf = (value: string | ReadonlyArray<string> | undefined) =>
  value === undefined ? undefined : typeof value === "string" ? value : value.join(", ")

const nodeHandler = (handle: ReturnType<typeof Router.make>): NodeHandler => {
  return (req, res) => {
    let oversized = false
    const target = req.url ?? "/"
    const mark = target.indexOf("?")
    const incoming: Router.Incoming = {
      method: req.method ?? "GET",
      pathname: mark === -1 ? target : target.slice(0, mark),
      query: new URLSearchParams(mark === -1 ? "" : target.slice(mark + 1)),
      header: (name) => headerOf(req.headers[name]),
      body: (limit) =>
        new Promise((resolve, reject) => {
          const chunks: Array<Buffer> = []
          let size = 0
          const onData = (chunk: Buffer) => {
            size += chunk.byteLength
            if (size > limit) {
              oversized = true
              req.off("data", onData)
              req.pause()
              resolve("too-large")
            } else chunks.push(chunk)
          }
          req.on("data", onData)
          req.once("end", () => resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)))
          req.once("error", reject)
        }),
      toWeb: () =>
        // The store routes read only the path and query; the Host header is the client's to choose.
        new Request(new URL(req.url ?? "/", "http://localhost"), {
          method: req.method ?? "GET",
          headers: Object.entries(req.headers).flatMap(([name, value]) =>
            value === undefined ? [] : [[name, headerOf(value) ?? ""] as [string, string]]
          ),
          ...(req.method === "GET" || req.method === "HEAD"
            ? {}
            : { body: Readable.toWeb(req) as ReadableStream<Uint8Array>, duplex: "half" as const })
        })
    }
    handle(incoming).then(
      (answer) => {
        if ("web" in answer) {
          const headers: Record<string, string> = {}
          answer.web.headers.forEach((value, name) => {
            headers[name] = value
          })
          // A store that refused an upload part-way has not read it all: close rather than drain.
          if (!req.complete) headers.connection = "close"
          res.writeHead(answer.web.status, headers)
          if (answer.web.body === null) res.end()
          else {
            // pipeline, not pipe: a client that goes away mid-download releases the store's stream.
            pipeline(Readable.fromWeb(answer.web.body as import("node:stream/web").ReadableStream), res, () => {})
          }
          return
        }
        // A body we stopped reading is not drained: the connection closes instead.
        const headers = oversized ? { ...answer.headers, connection: "close" } : answer.headers
        res.writeHead(answer.status, { ...headers, "content-length": Buffer.byteLength(answer.body) })
        res.end(answer.body)
      },
      () => {
        if (!res.headersSent) res.writeHead(500, { "content-type": "application/json; charset=utf-8" })
        res.end(JSON.stringify({ message: "internal error" }))
      }
    )
  }
}

const webHandler = (handle: ReturnType<typeof Router.make>): WebHandler => {
  return async (request) => {
    const url = new URL(request.url)
    const answer = await handle({
      method: request.method,
      pathname: url.pathname,
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
    return "web" in answer ? answer.web : new Response(answer.body, { status: answer.status, headers: answer.headers })
  }
}

/** Both handlers over the services of the current Effect context. */
export const make = (options: Options = {}): Effect.Effect<Handlers, never, Services> =>
  Effect.map(Effect.context<Services>(), (context) => {
    const handle = Router.make(Effect.runPromiseExitWith(context), options)
    return { node: nodeHandler(handle), web: webHandler(handle) }
  })

/** Both handlers over a layer, for code outside Effect; `dispose` releases the layer. */
export const fromLayer = <E>(
  layer: Layer.Layer<Services, E>,
  options: Options = {}
): Handlers & { readonly dispose: () => Promise<void> } => {
  const runtime = ManagedRuntime.make(layer)
  const handle = Router.make((effect) => runtime.runPromiseExit(effect), options)
  return { node: nodeHandler(handle), web: webHandler(handle), dispose: () => runtime.dispose() }
}
