// The viewer's routes of one message: its page (the two panes), the pane alone for the viewer's script,
// its HTML part (remote images only when asked for), its source, and its attachments (downloads; the
// raster images also inline, for their preview).
import type { ServerResponse } from "node:http"
import type { MessageLog } from "@mailroom/core"
import type { Index } from "../inbox/store.js"
import { read } from "./outbox.js"
import { missingPage, pageSize, shell } from "./pages.js"
import { disposition, fragment, json, mediaType, messageCsp, page, send } from "./respond.js"
import { messageView, previewable } from "./view.js"

export interface Context {
  readonly dir: string
  readonly index: Index
  readonly events: (organizationId: string | null, id: string) => Promise<ReadonlyArray<MessageLog.TimelineEvent>>
  /** The list beside the message: its first page, for the search in the address. */
  readonly list: (query: string, selected: string) => Promise<Parameters<typeof shell>[1]>
}

/** Answers `messages/{id}` and what is under it; `rest` is what follows the id. */
export const route = async (
  context: Context,
  res: ServerResponse,
  id: string,
  rest: ReadonlyArray<string>,
  url: URL
) => {
  const message = await read(context.dir, id)
  const [part, index] = rest
  if (message === undefined && part === undefined) return page(res, missingPage().value, 404)
  if (message === undefined) return json(res, 404, { message: "no such message in the outbox" })
  if (part === undefined) {
    // Opening a message marks it read, as a mail client does.
    await context.index.markRead(id, true)
    const view = messageView(message, await context.events(message.organization || null, id), true)
    if (url.searchParams.get("fragment") === "1") return fragment(res, view.value)
    const subject =
      message.parsed.subject === undefined || message.parsed.subject === "" ? "(no subject)" : message.parsed.subject
    const list = await context.list(url.searchParams.get("q") ?? "", id)
    return page(res, shell(`${subject} · Outbox · mailroom`, list, view).value)
  }
  if (part === "html" && rest.length === 1 && message.parts.html && message.parsed.html !== false) {
    return send(res, 200, "text/html; charset=utf-8", message.parsed.html, {
      "content-security-policy": messageCsp(url.searchParams.get("images") === "remote"),
      // Framed by the message's page, and by nothing else.
      "x-frame-options": "SAMEORIGIN"
    })
  }
  if (part === "raw" && rest.length === 1) {
    return send(res, 200, "message/rfc822", message.raw, { "content-disposition": disposition(`${id}.eml`) })
  }
  const attachment = part === "attachments" && rest.length === 2 ? message.parsed.attachments[Number(index)] : undefined
  if (attachment !== undefined && /^\d+$/.test(index ?? "")) {
    const type = mediaType(attachment.contentType).toLowerCase()
    const name = attachment.filename ?? `attachment-${Number(index) + 1}`
    // Shown inline only as an image a browser draws and that runs nothing (nosniff holds it to that
    // type); anything else, a text/html file above all, is a download: it would run as the viewer.
    const inline = url.searchParams.get("inline") === "1" && previewable.has(type)
    return send(res, 200, inline ? type : mediaType(attachment.contentType), attachment.content, {
      "content-disposition": disposition(name, inline ? "inline" : "attachment")
    })
  }
  return json(res, 404, { message: "no such part of the message" })
}

export { pageSize }
