// The viewer's pages, rendered on the server: one shell of two panes (the list of messages, and the
// message open beside it), its rows, and the page of a message that is gone. Every value from a
// message goes through `html`, which escapes it.
import type { MessageLog } from "@mailroom/core"
import type { Row } from "../inbox/store.js"
import { type Html, html } from "./html.js"

export const base = "/_mailroom/outbox/"
export const messageUrl = (id: string) => `${base}messages/${encodeURIComponent(id)}`

/** Rows a list page and each "more" answer hold. */
export const pageSize = 50

export const time = (iso: string) =>
  html`<time datetime="${iso}">${iso.replace("T", " ").replace(/\.\d+Z$/, " UTC")}</time>`

const layout = (title: string, route: "at-list" | "at-message", body: Html) => html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title}</title>
<link rel="icon" href="${base}assets/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="${base}assets/viewer.css">
<script src="${base}assets/viewer.js" defer></script>
</head>
<body class="${route}">
${body}
</body>
</html>
`

const addressList = (list: ReadonlyArray<{ readonly address: string; readonly name: string | null }>) =>
  list.map((a) => a.name ?? a.address).join(", ")

/** One message of the list: unread ones are marked, the open one selected. */
const rowOf = (row: Row, selected: string | undefined) => {
  const recipients = [addressList(row.to), addressList(row.cc), row.bcc.join(", ")].filter((s) => s !== "").join(", ")
  return html`<li data-id="${row.id}" class="${row.read ? "read" : "unread"}${row.id === selected ? " selected" : ""}">
<a href="${messageUrl(row.id)}"${row.id === selected ? html` aria-current="page"` : html``}>
<span class="from" title="${row.from?.address ?? ""}">${row.from === null ? "(no sender)" : (row.from.name ?? row.from.address)}</span>
${time(row.receivedAt)}
<span class="subject">${row.subject === "" ? "(no subject)" : row.subject}</span>
<span class="to">${recipients === "" ? "(no recipient)" : `to ${recipients}`}</span>
<span class="tags">${row.organization === null ? html`` : html`<span class="org">${row.organization}</span>`}${
    row.attachments > 0
      ? html`<span class="attachments" title="${row.attachments} attachment${row.attachments === 1 ? "" : "s"}">📎 ${row.attachments}</span>`
      : html``
  }</span>
</a>
</li>`
}

/** The rows of a page of the list, or why there are none. */
export const rows = (list: ReadonlyArray<Row>, query: string, selected?: string): Html =>
  list.length === 0
    ? html`<li class="empty">${
        query.trim() === ""
          ? "No messages yet. Send one through the API (npm run quickstart), and it appears here."
          : "No message matches the search."
      }</li>`
    : html`${list.map((row) => rowOf(row, selected))}`

export interface ListState {
  readonly rows: ReadonlyArray<Row>
  readonly query: string
  /** The cursor of the next page, when there is one. */
  readonly next: string | undefined
  readonly selected?: string
}

const keys = html`<details class="keys"><summary>Keyboard</summary>
<dl><dt><kbd>j</kbd> <kbd>↓</kbd></dt><dd>next message</dd><dt><kbd>k</kbd> <kbd>↑</kbd></dt><dd>previous message</dd>
<dt><kbd>/</kbd></dt><dd>search</dd><dt><kbd>u</kbd></dt><dd>mark read or unread</dd>
<dt><kbd>Delete</kbd></dt><dd>delete the message</dd><dt><kbd>Esc</kbd></dt><dd>back to the list</dd></dl>
</details>`

/** Messages not in the outbox: waiting for their time, or cancelled before it (from the message log). */
const waitingList = (waiting: ReadonlyArray<MessageLog.EmailRecord>): Html =>
  waiting.length === 0
    ? html``
    : html`<h2 class="waiting">Scheduled and cancelled</h2>
<ol id="waiting">${waiting.map(
        (m) => html`<li data-id="${m.id}" class="${m.status}">
<span class="from">${m.from}</span>
${m.scheduled_at === null ? html`` : time(m.scheduled_at)}
<span class="subject">${m.subject === "" ? "(no subject)" : m.subject}</span>
<span class="to">to ${m.recipients.map((r) => r.email).join(", ")}</span>
<span class="tags"><span class="org">${m.organization_id}</span><span class="status">${m.status}</span></span>
</li>`
      )}</ol>`

/**
 * The two panes: the list (with the search) and `view`, the open message or a hint. `waiting`, when
 * any, is listed above the outbox's messages (as the page loads; a reload refreshes it).
 */
export const shell = (
  title: string,
  list: ListState,
  view: Html | undefined,
  waiting: ReadonlyArray<MessageLog.EmailRecord> = []
): Html =>
  layout(
    title,
    view === undefined ? "at-list" : "at-message",
    html`<div class="app">
<header class="bar">
<a class="brand" href="${base}"><img src="${base}assets/favicon.svg" alt="" width="22" height="22"><span>Outbox</span></a>
<form role="search" method="get" action="${base}">
<input type="search" id="search" name="q" value="${list.query}" placeholder="Search from, to, subject and text" aria-label="Search from, to, subject and text" autocomplete="off">
</form>
<span id="live" class="live" title="Updates live as messages arrive">connecting</span>
<button type="button" class="danger" data-delete="${base}messages" data-then="${base}" data-confirm="Delete every message in the outbox?">Delete all</button>
</header>
<nav class="list" aria-label="Messages">
${waitingList(waiting)}
<ol id="messages">${rows(list.rows, list.query, list.selected)}</ol>
<button type="button" id="more"${list.next === undefined ? html` hidden` : html``} data-next="${list.next ?? ""}">Older messages</button>
${keys}
</nav>
<main class="view" id="view">${
      view ??
      html`<div class="placeholder"><p>Select a message to read it.</p><p class="muted">Newest first, for every organisation; the list updates as mail arrives.</p></div>`
    }</main>
</div>`
  )

/** A message that was deleted (here or by hand) since its link was shown. */
export const missingPage = (): Html =>
  layout(
    "Not in the outbox · mailroom",
    "at-message",
    html`<main class="gone"><p><a href="${base}">← All messages</a></p>
<h1>This message is not in the outbox</h1>
<p class="muted">It was deleted, or its link is wrong.</p></main>`
  )
