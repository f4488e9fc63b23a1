// The outbox viewer at /_mailroom/outbox/: its routes, the live feed (Server-Sent Events) and the inbox
// API beside it, all answered from the outbox's index or one message's file. Reached only as access.ts
// allows; otherwise the request falls through to the API, which answers 404.
import type { IncomingMessage, ServerResponse } from "node:http"
import { type MailEvents, MessageLog } from "@mailroom/core"
import * as Effect from "effect/Effect"
import type * as ManagedRuntime from "effect/ManagedRuntime"
import * as Api from "../inbox/api.js"
import { decodeCursor, encodeCursor } from "../inbox/query.js"
import * as Store from "../inbox/store.js"
import * as Access from "./access.js"
import * as Assets from "./assets.js"
import * as Message from "./message.js"
import { base, pageSize, rows, shell } from "./pages.js"
import { common, fragment, json, page, send } from "./respond.js"
import { script } from "./script.js"

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
  /** The messages scheduled or cancelled, from the message log, listed above the outbox's. Default: none. */
  readonly waiting?: (() => Promise<ReadonlyArray<MessageLog.EmailRecord>>) | undefined
  /** The access rule, when the caller made it already (deferred.ts): one session for both. Default: made here. */
  readonly access?: Access.Access | undefined
}

export interface Viewer {
  /** The list's URL, or undefined when the viewer is not served (`notServed` says why). */
  readonly url: string | undefined
  readonly notServed: string
  /** Answers a viewer request; undefined when the request is not the viewer's to answer. */
  readonly handle: (req: IncomingMessage, res: ServerResponse) => Promise<void> | undefined
  /** Says the outbox just wrote this message: the list, the inbox API and its waits see it at once. */
  readonly noteWritten: (id: string) => void
  /** Ends the live feeds and the inbox's waits (they would hold a graceful shutdown open) and stops watching. */
  readonly close: () => Promise<void>
}

const assets: Readonly<Record<string, readonly [string, string]>> = {
  "assets/viewer.css": ["text/css; charset=utf-8", Assets.css],
  "assets/viewer.js": ["text/javascript; charset=utf-8", script],
  "assets/favicon.svg": ["image/svg+xml", Assets.favicon]
}

/** The live feed: one `change` per change of the outbox, to every open page; it keeps the index following. */
const makeFeeds = (index: Store.Index) => {
  const feeds = new Set<ServerResponse>()
  let closed = false
  let release = () => {}
  index.onChange(() => {
    for (const feed of feeds) feed.write("event: change\ndata: \n\n")
  })
  const open = (req: IncomingMessage, res: ServerResponse) =>
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
      // The outbox is followed only while someone looks: nobody looking costs nothing.
      if (feeds.size === 1) release = index.hold()
      void index.open()
      // Comments keep proxies from closing an idle stream.
      const heartbeat = setInterval(() => res.write(": ping\n\n"), 15_000)
      const done = () => {
        clearInterval(heartbeat)
        if (feeds.delete(res) && feeds.size === 0) release()
        resolve()
      }
      req.once("close", done)
      res.once("close", done)
    })
  const close = () => {
    closed = true
    for (const feed of feeds) feed.end()
    feeds.clear()
    release()
  }
  return { open, close }
}

interface State {
  readonly access: Access.Access
  readonly index: Store.Index
  readonly api: Api.InboxApi
  readonly feeds: ReturnType<typeof makeFeeds>
  readonly context: Message.Context
  readonly logError: (message: string) => void
  readonly waiting: () => Promise<ReadonlyArray<MessageLog.EmailRecord>>
}

/** A page of the list, newest first, with the cursor of the next. */
const listPage = async (index: Store.Index, query: string, cursor?: string) => {
  const after = cursor === undefined ? undefined : decodeCursor(cursor)
  const found = await index.list({
    limit: pageSize + 1,
    ...(query.trim() === "" ? {} : { text: query.trim().slice(0, 200) }),
    ...(after === undefined ? {} : { after })
  })
  const shown = found.slice(0, pageSize)
  const last = shown.at(-1)
  return { rows: shown, next: found.length > pageSize && last !== undefined ? encodeCursor(last) : undefined }
}

/** A delete, from the viewer's own page only. */
const change = async (state: State, req: IncomingMessage, res: ServerResponse, segments: ReadonlyArray<string>) => {
  if (!state.access.sameOrigin(req)) return json(res, 403, { message: "a change must come from the viewer's own page" })
  if (segments.length === 1 && segments[0] === "messages") return json(res, 200, { deleted: await state.index.clear() })
  if (segments.length === 2 && segments[0] === "messages") {
    const removed = await state.index.remove(segments[1] as string)
    return removed ? json(res, 200, { deleted: 1 }) : json(res, 404, { message: "no such message in the outbox" })
  }
  return json(res, 404, { message: "not found" })
}

const route = async (state: State, req: IncomingMessage, res: ServerResponse, url: URL) => {
  const path = url.pathname.slice(base.length)
  let segments: ReadonlyArray<string>
  try {
    segments = path === "" ? [] : path.split("/").map(decodeURIComponent)
  } catch {
    return json(res, 404, { message: "not found" })
  }
  const method = req.method ?? "GET"
  if (segments[0] === "api") return state.api.handle(req, res, segments.slice(1), url)
  if (method === "DELETE") return change(state, req, res, segments)
  if (method !== "GET" && method !== "HEAD") return json(res, 405, { message: "the viewer answers GET and DELETE" })
  const query = url.searchParams.get("q") ?? ""
  const asset = assets[path]
  if (asset !== undefined) return send(res, 200, asset[0], asset[1])
  switch (path) {
    case "": {
      const list = await listPage(state.index, query)
      return page(res, shell("Outbox · mailroom", { ...list, query }, undefined, await state.waiting()).value)
    }
    case "rows": {
      const list = await listPage(state.index, query, url.searchParams.get("cursor") ?? undefined)
      const selected = url.searchParams.get("selected") ?? undefined
      return fragment(res, rows(list.rows, query, selected).value, { "x-mailroom-next": list.next ?? "" })
    }
    case "events":
      return method === "GET" ? state.feeds.open(req, res) : json(res, 405, { message: "the live feed answers GET" })
  }
  if (segments[0] === "messages" && segments.length >= 2) {
    return Message.route(state.context, res, segments[1] as string, segments.slice(2), url)
  }
  return json(res, 404, { message: "not found" })
}

/** Answers a request of the viewer's, or undefined when the access rule hides it (the API then answers 404). */
const handle = (state: State, req: IncomingMessage, res: ServerResponse) => {
  const url = new URL(req.url ?? "/", "http://viewer.invalid")
  const { access } = state
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
  return route(state, req, res, url).catch((cause: unknown) => {
    state.logError(
      `[mailroom] 500 on ${req.method} ${url.pathname} (outbox viewer)\n${String((cause as Error)?.stack ?? cause)}`
    )
    if (!res.headersSent) json(res, 500, { message: "the viewer failed; the cause is in the server's log" })
    else res.destroy()
  })
}

export const start = async (options: Options): Promise<Viewer> => {
  const access = options.access ?? Access.make(Access.optionsOf(options))
  const { runtime } = options
  const index = Store.make(options.dir)
  // The message log is the truth about a message's events; one it cannot reach now shows none.
  const events = (organizationId: string | null, id: string) =>
    organizationId === null
      ? Promise.resolve([])
      : runtime.runPromise(
          Effect.flatMap(MessageLog.MessageLog, (log) => log.find(organizationId, id)).pipe(
            Effect.map((detail) => detail?.events ?? []),
            Effect.catch(() => Effect.succeed([]))
          )
        )
  const api = Api.make({ index, dir: options.dir, publicUrl: options.publicUrl, base, json, events })
  const feeds = makeFeeds(index)
  const context: Message.Context = {
    dir: options.dir,
    index,
    events,
    list: async (query, selected) => ({ ...(await listPage(index, query)), query, selected })
  }
  const logError = options.logError ?? ((message: string) => console.error(message))
  const waiting = options.waiting ?? (() => Promise.resolve([]))
  const state: State = { access, index, api, feeds, context, logError, waiting }
  return {
    url: access.served ? `${options.publicUrl}${base}` : undefined,
    notServed: access.notServed,
    handle: (req, res) => handle(state, req, res),
    noteWritten: access.served ? index.noteWritten : () => {},
    close: async () => {
      api.close()
      feeds.close()
      await index.close()
    }
  }
}
