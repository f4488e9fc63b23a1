// The outbox viewer at /_mailroom/outbox/: routes, security headers, the live feed (Server-Sent Events)
// and the delivery events remembered per message. Reached only as access.ts allows; otherwise the
// request falls through to the API, which answers 404.
import type { IncomingMessage, ServerResponse } from "node:http"
import { type MailEvent, MailEvents, MessageLog } from "@mailroom/core"
import { Effect, Exit, Fiber, type ManagedRuntime, Scope, Stream } from "effect"
import * as Api from "../inbox/api.js"
import * as Store from "../inbox/store.js"
import * as Access from "./access.js"
import * as Assets from "./assets.js"
import * as Outbox from "./outbox.js"
import { base, listPage, messagePage, missingPage, rows } from "./pages.js"

export interface Options {
  readonly dir: string
  readonly enabled: boolean
  readonly token: string | undefined
  /** The interface the server listens on. */
  readonly host: string
  /** Where browsers reach the server (the config's publicUrl, else the listening address). */
  readonly publicUrl: string
  readonly runtime: ManagedRuntime.ManagedRuntime<MailEvents.MailEvents | MessageLog.MessageLog, unknown>
  /** Where the cause of a 500 goes; the page says only that it failed. Default: console.error. */
  readonly logError?: ((message: string) => void) | undefined
}

export interface Viewer {
  /** The list's URL, or undefined when the viewer is not served (`notServed` says why). */
  readonly url: string | undefined
  readonly notServed: string
  /** Answers a viewer request; undefined when the request is not the viewer's to answer. */
  readonly handle: (req: IncomingMessage, res: ServerResponse) => Promise<void> | undefined
  /** Says the outbox just wrote this message: the inbox API and its waits see it at once. */
  readonly noteWritten: (id: string) => void
  /** Ends the live feeds and the inbox's waits (they would hold a graceful shutdown open) and stops watching. */
  readonly close: () => Promise<void>
}

const pageCsp =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "frame-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
// The message's own HTML: no script, no network (images only inline), and an opaque origin even when
// opened outside the viewer's sandboxed iframe.
const messageCsp =
  "default-src 'none'; img-src data:; style-src 'unsafe-inline'; font-src data:; frame-ancestors 'self'; sandbox"
/**
 * Every viewer response, whatever it is (a page, a fragment, JSON, a redirect, the live feed, a file),
 * is written with these: nothing it holds runs, loads or is framed unless a route grants it (a page's
 * own policy, the message's HTML framed by the viewer).
 */
const common = {
  "content-security-policy": "default-src 'none'; frame-ancestors 'none'; sandbox",
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
  "cross-origin-resource-policy": "same-origin"
}

const send = (res: ServerResponse, status: number, type: string, body: string | Buffer, headers = {}) => {
  res.writeHead(status, { ...common, "content-type": type, "content-length": Buffer.byteLength(body), ...headers })
  res.end(body)
}
const page = (res: ServerResponse, body: string, headers = {}) =>
  send(res, 200, "text/html; charset=utf-8", body, { "content-security-policy": pageCsp, ...headers })
const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
  send(res, status, "application/json", JSON.stringify(body), headers)

/** `filename*` (RFC 6266) for any name, with an ASCII fallback for old clients. */
const disposition = (filename: string) =>
  `attachment; filename="${filename.replace(/[^\x20-\x7e]|["\\]/g, "_")}"; filename*=UTF-8''${encodeURIComponent(
    filename
  ).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`

const mediaType = (value: string) => (/^[\w.+-]+\/[\w.+-]+$/.test(value) ? value : "application/octet-stream")

/** At most this many messages' events are remembered; the oldest are forgotten first. */
const rememberedMessages = 5000

export const start = async (options: Options): Promise<Viewer> => {
  const access = Access.make({
    enabled: options.enabled,
    token: options.token,
    host: options.host,
    secure: options.publicUrl.startsWith("https:")
  })
  const outbox = Outbox.make(options.dir)
  const index = Store.make(options.dir)
  const { runtime } = options
  const api = Api.make({
    index,
    dir: options.dir,
    publicUrl: options.publicUrl,
    base,
    json,
    // The message log is the truth about a message's events; one it cannot reach now shows none.
    events: (organizationId, id) =>
      organizationId === null
        ? Promise.resolve([])
        : runtime.runPromise(
            Effect.flatMap(MessageLog.MessageLog, (log) => log.find(organizationId, id)).pipe(
              Effect.map((detail) => detail?.events ?? []),
              Effect.catch(() => Effect.succeed([]))
            )
          )
  })
  const logError = options.logError ?? ((message: string) => console.error(message))
  const feeds = new Set<ServerResponse>()
  const events = new Map<string, Array<MailEvent.MailEvent>>()
  const notify = () => {
    for (const feed of feeds) feed.write("event: change\ndata: \n\n")
  }

  const scope = await runtime.runPromise(Scope.make())
  let stopWatching = () => {}
  let subscription: Fiber.Fiber<void, unknown> | undefined
  if (access.served) {
    // Subscribed before the first request is served, so no event of a send is missed.
    const stream = await runtime.runPromise(
      Scope.provide(scope)(Effect.flatMap(MailEvents.MailEvents, (service) => service.subscribe()))
    )
    subscription = runtime.runFork(
      Stream.runForEach(stream, (event) =>
        Effect.sync(() => {
          const list = events.get(event.message_id) ?? []
          if (list.length === 0) {
            events.set(event.message_id, list)
            if (events.size > rememberedMessages) events.delete(events.keys().next().value as string)
          }
          list.push(event)
        })
      )
    )
  }

  let closed = false
  const feed = (req: IncomingMessage, res: ServerResponse) =>
    new Promise<void>((resolve) => {
      // 204 tells EventSource not to reconnect: the server is shutting down.
      if (closed) {
        res.writeHead(204, common)
        res.end()
        return resolve()
      }
      res.writeHead(200, { ...common, "content-type": "text/event-stream" })
      res.write("retry: 2000\n\n")
      feeds.add(res)
      // The outbox is watched only while a page of the viewer is open: nobody looking costs nothing.
      if (feeds.size === 1) stopWatching = outbox.watch(notify)
      // Comments keep proxies from closing an idle stream.
      const heartbeat = setInterval(() => res.write(": ping\n\n"), 15_000)
      const done = () => {
        clearInterval(heartbeat)
        if (feeds.delete(res) && feeds.size === 0) {
          stopWatching()
          stopWatching = () => {}
        }
        resolve()
      }
      req.once("close", done)
      res.once("close", done)
    })

  const messageRoute = async (res: ServerResponse, id: string, rest: ReadonlyArray<string>) => {
    const message = await outbox.read(id)
    const [part, index] = rest
    if (message === undefined && part === undefined) {
      return send(res, 404, "text/html; charset=utf-8", missingPage().value, { "content-security-policy": pageCsp })
    }
    if (message === undefined) return json(res, 404, { message: "no such message in the outbox" })
    if (part === undefined) return page(res, messagePage(message, events.get(id) ?? []).value)
    if (part === "html" && rest.length === 1 && message.parts.html && message.parsed.html !== false) {
      return send(res, 200, "text/html; charset=utf-8", message.parsed.html, {
        "content-security-policy": messageCsp,
        // Framed by the message's page, and by nothing else.
        "x-frame-options": "SAMEORIGIN"
      })
    }
    if (part === "raw" && rest.length === 1) {
      return send(res, 200, "message/rfc822", message.raw, { "content-disposition": disposition(`${id}.eml`) })
    }
    const attachment =
      part === "attachments" && rest.length === 2 ? message.parsed.attachments[Number(index)] : undefined
    if (attachment !== undefined && /^\d+$/.test(index ?? "")) {
      // An attachment is never shown on the viewer's origin: a text/html one would run as the viewer.
      return send(res, 200, mediaType(attachment.contentType), attachment.content, {
        "content-disposition": disposition(attachment.filename ?? `attachment-${Number(index) + 1}`)
      })
    }
    return json(res, 404, { message: "no such part of the message" })
  }

  const route = async (req: IncomingMessage, res: ServerResponse, url: URL) => {
    const path = url.pathname.slice(base.length)
    let segments: ReadonlyArray<string>
    try {
      segments = path === "" ? [] : path.split("/").map(decodeURIComponent)
    } catch {
      return json(res, 404, { message: "not found" })
    }
    const method = req.method ?? "GET"
    if (segments[0] === "api") return api.handle(req, res, segments.slice(1), url)
    if (method === "DELETE") {
      if (!access.sameOrigin(req)) return json(res, 403, { message: "a change must come from the viewer's own page" })
      if (segments.length === 1 && segments[0] === "messages") return json(res, 200, { deleted: await outbox.clear() })
      if (segments.length === 2 && segments[0] === "messages") {
        const removed = await outbox.remove(segments[1] as string)
        return removed ? json(res, 200, { deleted: 1 }) : json(res, 404, { message: "no such message in the outbox" })
      }
      return json(res, 404, { message: "not found" })
    }
    if (method !== "GET" && method !== "HEAD") return json(res, 405, { message: "the viewer answers GET and DELETE" })
    const query = url.searchParams.get("q") ?? ""
    switch (path) {
      case "":
        return page(res, listPage(await outbox.list(query), query).value)
      case "rows": {
        const found = await outbox.list(query)
        return send(res, 200, "text/html; charset=utf-8", rows(found, query).value, {
          "x-mailroom-count": String(found.length)
        })
      }
      case "events":
        return method === "GET" ? feed(req, res) : json(res, 405, { message: "the live feed answers GET" })
      case "assets/viewer.css":
        return send(res, 200, "text/css; charset=utf-8", Assets.css)
      case "assets/viewer.js":
        return send(res, 200, "text/javascript; charset=utf-8", Assets.js)
    }
    if (segments[0] === "messages" && segments.length >= 2) {
      return messageRoute(res, segments[1] as string, segments.slice(2))
    }
    return json(res, 404, { message: "not found" })
  }

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://viewer.invalid")
    if (!access.served || !(url.pathname === base.slice(0, -1) || url.pathname.startsWith(base))) return undefined
    const decision = access.decide(req, url)
    if (decision.kind === "hidden") return undefined
    if (decision.kind === "signIn") {
      res.writeHead(303, { ...common, location: decision.location, "set-cookie": decision.cookie })
      res.end()
      return Promise.resolve()
    }
    if (url.pathname === base.slice(0, -1)) {
      res.writeHead(308, { ...common, location: `${base}${url.search}` })
      res.end()
      return Promise.resolve()
    }
    return route(req, res, url).catch((cause: unknown) => {
      logError(
        `[mailroom] 500 on ${req.method} ${url.pathname} (outbox viewer)\n${String((cause as Error)?.stack ?? cause)}`
      )
      if (!res.headersSent) json(res, 500, { message: "the viewer failed; the cause is in the server's log" })
      else res.destroy()
    })
  }

  const close = async () => {
    closed = true
    api.close()
    await index.close()
    stopWatching()
    for (const feed of feeds) feed.end()
    feeds.clear()
    if (subscription !== undefined) await runtime.runPromise(Fiber.interrupt(subscription))
    await runtime.runPromise(Scope.close(scope, Exit.void))
  }

  return {
    url: access.served ? `${options.publicUrl}${base}` : undefined,
    notServed: access.notServed,
    handle,
    noteWritten: access.served ? index.noteWritten : () => {},
    close
  }
}
