// The inbox API under /_mailroom/outbox/api/: the outbox's messages for end-to-end tests (list with
// filters, one message with its links, delete, mark read) and a long-poll `wait` for the next one. Every
// answer comes from the index or one file: its cost does not grow with the outbox.
import type { IncomingMessage, ServerResponse } from "node:http"
import type { MessageLog } from "@mailroom/core"
import { common } from "../viewer/respond.js"
import { read } from "./message.js"
import { encodeCursor, type Filters, matches, parseQuery } from "./query.js"
import * as Schema from "./schema.js"
import type { Index, Query, Row } from "./store.js"

export interface Options {
  readonly index: Index
  readonly dir: string
  /** Where browsers and tests reach the server, for the download URLs. */
  readonly publicUrl: string
  /** The viewer's path, `/_mailroom/outbox/`. */
  readonly base: string
  /** A message's delivery events, from the message log; empty when it keeps none. */
  readonly events: (organizationId: string | null, id: string) => Promise<ReadonlyArray<MessageLog.TimelineEvent>>
  readonly json: (res: ServerResponse, status: number, body: unknown, headers?: Record<string, string>) => void
}

export const summary = (row: Row): Schema.Summary => ({
  id: row.id,
  organization_id: row.organization,
  from: row.from,
  to: row.to,
  cc: row.cc,
  bcc: row.bcc,
  subject: row.subject,
  received_at: row.receivedAt,
  date: row.date,
  size: row.size,
  attachment_count: row.attachments,
  links: row.links,
  read: row.read
})

const unfold = (line: string) => line.replace(/\r?\n[ \t]+/g, " ")

/** A change from a browser must come from the viewer's own origin; tests and curl send no Sec-Fetch-Site. */
// As the viewer's own check: Sec-Fetch-Site where the browser sends it, else the page's Origin.
const crossSite = (req: IncomingMessage) => {
  const site = req.headers["sec-fetch-site"]
  if (site !== undefined && site !== "same-origin" && site !== "none") return true
  const origin = req.headers.origin
  return origin !== undefined && origin !== `http://${req.headers.host}` && origin !== `https://${req.headers.host}`
}

const body = (req: IncomingMessage, limit: number) =>
  new Promise<string | undefined>((resolve) => {
    const chunks: Array<Buffer> = []
    let size = 0
    req.on("data", (chunk: Buffer) => {
      size += chunk.byteLength
      if (size > limit) {
        resolve(undefined)
        req.destroy()
      } else chunks.push(chunk)
    })
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    req.on("error", () => resolve(undefined))
  })

const notFound = { message: "no such message in the outbox" }

export class InboxApi {
  private readonly waits = new Set<() => void>()
  private closed = false

  constructor(private readonly options: Options) {}

  /** Answers `{base}api/{segments}`; `segments` are the decoded path segments after `api`. */
  async handle(req: IncomingMessage, res: ServerResponse, segments: ReadonlyArray<string>, url: URL): Promise<void> {
    const { json } = this.options
    const method = req.method ?? "GET"
    const [first, id, ...rest] = segments
    if (rest.length > 0 || (first !== "messages" && id !== undefined)) return json(res, 404, { message: "not found" })
    if (first === "openapi.json" && method === "GET") {
      return json(res, 200, Schema.document(`${this.options.base}api`, this.options.publicUrl))
    }
    if (first === "wait" && method === "GET") return this.wait(res, url.searchParams)
    if (first !== "messages") return json(res, 404, { message: "not found" })
    if (method === "DELETE" || method === "PATCH") return this.change(req, res, method, id)
    if (method !== "GET") return json(res, 405, { message: "the inbox answers GET, PATCH and DELETE" })
    if (id === undefined) return this.list(res, url.searchParams)
    return this.answerDetail(res, await this.options.index.find(id))
  }

  /** Ends every open wait: the server is shutting down. */
  close(): void {
    this.closed = true
    for (const end of [...this.waits]) end()
  }

  /** Everything `GET messages/{id}` answers, read from the message's file; undefined when it is gone. */
  async detail(row: Row): Promise<Schema.Detail | undefined> {
    const message = await read(this.options.dir, row.id)
    if (message === undefined) return undefined
    const { parsed, parts } = message
    const url = this.messageUrl(row.id)
    const replyTo = parsed.replyTo?.value.flatMap((a) =>
      a.address === undefined ? [] : [{ address: a.address, name: a.name === "" ? null : a.name }]
    )
    return {
      ...summary({ ...row, ...message.indexed, seq: row.seq, read: row.read }),
      reply_to: replyTo ?? [],
      headers: parsed.headerLines.map(({ key, line }) => {
        const colon = line.indexOf(":")
        return {
          name: colon < 0 ? key : line.slice(0, colon),
          value: colon < 0 ? "" : unfold(line.slice(colon + 1)).trim()
        }
      }),
      text: parts.text ? (parsed.text ?? "") : null,
      html: parts.html && parsed.html !== false ? parsed.html : null,
      attachments: parsed.attachments.map((a, i) => ({
        filename: a.filename ?? null,
        content_type: a.contentType,
        size: a.size,
        content_id: a.cid ?? null,
        inline: a.related === true || a.contentDisposition === "inline",
        download_url: `${url}/attachments/${i}`
      })),
      events: await this.options.events(row.organization, row.id),
      raw_url: `${url}/raw`
    }
  }

  private messageUrl(id: string) {
    return `${this.options.publicUrl}${this.options.base}messages/${encodeURIComponent(id)}`
  }

  private async answerDetail(res: ServerResponse, row: Row | undefined) {
    const found = row === undefined ? undefined : await this.detail(row)
    return found === undefined ? this.options.json(res, 404, notFound) : this.options.json(res, 200, found)
  }

  private async list(res: ServerResponse, params: URLSearchParams) {
    const parsed = parseQuery("messages", params)
    if ("problems" in parsed) return this.options.json(res, 400, { errors: parsed.problems })
    const { limit = Schema.defaultPageSize, ...filters } = parsed.value as Query & Record<string, unknown>
    const rows = await this.options.index.list({ ...(filters as Omit<Query, "limit">), limit: limit + 1 })
    const page = rows.slice(0, limit)
    const last = page.at(-1)
    return this.options.json(res, 200, {
      data: page.map(summary),
      next_cursor: rows.length > page.length && last !== undefined ? encodeCursor(last) : null
    })
  }

  /** A long poll: the next matching message, the newest since `since` at once, or 204 after the timeout. */
  private wait(res: ServerResponse, params: URLSearchParams) {
    const { json, index } = this.options
    return new Promise<void>((resolve) => {
      const parsed = parseQuery("wait", params)
      if ("problems" in parsed) return resolve(json(res, 400, { errors: parsed.problems }))
      if (this.closed || this.waits.size >= Schema.maxWaits) {
        const message = this.closed ? "the server is shutting down" : "too many waits are open; try again"
        return resolve(json(res, 503, { message }, { "retry-after": "1" }))
      }
      const filters = parsed.value as Filters & { readonly timeout?: number }
      let done = false
      let stop = () => {}
      // The index follows the outbox while the wait is open.
      const release = index.hold()
      const finish = (answer: () => Promise<void> | void) => {
        if (done) return
        done = true
        clearTimeout(timer)
        stop()
        release()
        this.waits.delete(end)
        void Promise.resolve()
          .then(answer)
          .catch(() => (res.headersSent ? res.destroy() : json(res, 500, { message: "the wait failed" })))
          .finally(resolve)
      }
      const end = () => finish(() => json(res, 503, { message: "the server is shutting down" }, { "retry-after": "1" }))
      this.waits.add(end)
      const timer = setTimeout(
        () => finish(() => void res.writeHead(204, common).end()),
        filters.timeout ?? Schema.defaultWaitMillis
      )
      // The client went away: nothing to answer.
      res.once("close", () => finish(() => void res.destroy()))
      void index
        .open()
        .then(async () => {
          if (done) return
          stop = index.onAdded((row) => {
            if (matches(filters, row)) finish(() => this.answerDetail(res, row))
          })
          if (filters.since === undefined) return
          const [found] = await index.list({ ...filters, limit: 1 })
          if (found !== undefined) finish(() => this.answerDetail(res, found))
        })
        .catch(() => finish(() => json(res, 500, { message: "the outbox index could not be read" })))
    })
  }

  private async change(req: IncomingMessage, res: ServerResponse, method: string, id: string | undefined) {
    const { json, index } = this.options
    if (crossSite(req)) return json(res, 403, { message: "a change must come from the viewer's own page or a test" })
    if (method === "DELETE") {
      if (id === undefined) return json(res, 200, { deleted: await index.clear() })
      return (await index.remove(id)) ? json(res, 200, { deleted: 1 }) : json(res, 404, notFound)
    }
    if (id === undefined) return json(res, 405, { message: "PATCH names one message" })
    const read = readFlag(await body(req, 1024))
    if (read === undefined) return json(res, 400, { errors: ['read: must be true or false, as in {"read": true}'] })
    if (!(await index.markRead(id, read))) return json(res, 404, notFound)
    const row = await index.find(id)
    return row === undefined ? json(res, 404, notFound) : json(res, 200, summary(row))
  }
}

/** `{"read": true|false}`, else undefined. */
const readFlag = (text: string | undefined): boolean | undefined => {
  try {
    const value = text === undefined ? undefined : (JSON.parse(text) as unknown)
    const flag = typeof value === "object" && value !== null ? (value as { read?: unknown }).read : undefined
    return typeof flag === "boolean" ? flag : undefined
  } catch {
    return undefined
  }
}

export const make = (options: Options): InboxApi => new InboxApi(options)
