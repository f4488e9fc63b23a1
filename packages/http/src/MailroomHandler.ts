// The API as request handlers: `node` for anything that hands over Node's (req, res) — node:http,
// Express, Fastify's raw mode — and `web` for (Request) => Response runtimes (Hono, Next.js, Bun, Deno).
import type { IncomingMessage, ServerResponse } from "node:http"
import { pipeline, Readable } from "node:stream"
import { Effect, type Layer, ManagedRuntime } from "effect"
import * as Router from "./internal/router.js"

export type Options = Router.Options

/** What the handlers need: core's Mailer, Attachments, Organizations and the ObjectStore (`Mailroom.layer` provides all four). */
export type Services = Router.Services

/**
 * Node's `(req, res)`. The promise settles (never rejects) once the answer is written, or abandoned
 * because the client went away; callers that only need a listener can ignore it.
 */
export type NodeHandler = (req: IncomingMessage, res: ServerResponse, next?: unknown) => Promise<void>
export type WebHandler = (request: Request) => Promise<Response>

export interface Handlers {
  readonly node: NodeHandler
  readonly web: WebHandler
}

const headerOf = (value: string | ReadonlyArray<string> | undefined) =>
  value === undefined ? undefined : typeof value === "string" ? value : value.join(", ")

const gone = () => new Error("the client went away before the body ended")

/**
 * The request body as a Web stream that errors when the client goes away before the end: a body cut
 * short must never read as a complete (chunked) upload.
 */
const bodyOf = (req: IncomingMessage): ReadableStream<Uint8Array> => {
  // Set once the stream is closed, errored or cancelled: whatever `req` does afterwards is ignored, as
  // a closed controller throws, and a throw from an event listener would take the process down.
  let detach: (() => void) | undefined
  return new ReadableStream<Uint8Array>({
    start: (controller) => {
      // The client may have gone before a store route asked for the body.
      if (req.destroyed && !req.readableEnded) return controller.error(gone())
      const onData = (chunk: Buffer) => {
        controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength))
        if ((controller.desiredSize ?? 0) <= 0) req.pause()
      }
      const settle = (error?: unknown) => {
        detach?.()
        if (error === undefined) controller.close()
        else controller.error(error)
      }
      const onEnd = () => settle()
      const onError = (error: unknown) => settle(error)
      const onClose = () => settle(gone())
      detach = () => {
        detach = undefined
        req.off("data", onData)
        req.off("end", onEnd)
        req.off("error", onError)
        req.off("close", onClose)
      }
      req.on("data", onData)
      req.once("end", onEnd)
      req.once("error", onError)
      req.once("close", onClose)
    },
    pull: () => {
      req.resume()
    },
    // A reader that stops early (a body over its limit): the rest is not read, and the connection
    // closes after the answer.
    cancel: () => {
      detach?.()
      req.pause()
    }
  })
}

/** Releases a body nobody will read: the store's file handle closes with it. */
const discard = (body: ReadableStream | null) => {
  if (body !== null && !body.locked) body.cancel().catch(() => undefined)
}

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
          if (req.destroyed && !req.readableEnded) return reject(gone())
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
          // Without this a body cut short would leave the request waiting for an end that never comes.
          req.once("close", () => reject(gone()))
        }),
      toWeb: () =>
        // The store routes read only the path and query; the Host header is the client's to choose.
        new Request(new URL(req.url ?? "/", "http://localhost"), {
          method: req.method ?? "GET",
          headers: Object.entries(req.headers).flatMap(([name, value]) =>
            value === undefined ? [] : [[name, headerOf(value) ?? ""] as [string, string]]
          ),
          ...(req.method === "GET" || req.method === "HEAD" ? {} : { body: bodyOf(req), duplex: "half" as const })
        })
    }
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
          res.writeHead(answer.web.status, headers)
          if (body === null) {
            res.end()
            return settled()
          }
          // pipeline, not pipe: a client that goes away mid-download releases the store's stream.
          pipeline(Readable.fromWeb(body as import("node:stream/web").ReadableStream), res, () => settled())
          return
        }
        if (res.destroyed) {
          res.statusCode = answer.status
          return settled()
        }
        // A body we stopped reading is not drained: the connection closes instead.
        const headers = oversized ? { ...answer.headers, connection: "close" } : answer.headers
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
