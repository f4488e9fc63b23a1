// The viewer's pages, rendered on the server: the message list and one message with its parts,
// headers, links, attachments, delivery events and source. Every value from a message goes through
// `html`, which escapes it.
import type { MailEvent, MessageLog } from "@mailroom/core"
import { type Html, html } from "./html.js"
import { references } from "./links.js"
import { addresses, type Message, type Summary } from "./outbox.js"

export const base = "/_mailroom/outbox/"
export const messageUrl = (id: string) => `${base}messages/${encodeURIComponent(id)}`

/** Shown in full up to this size; past it the page links to the `.eml` instead. */
const sourceLimit = 1_000_000

const layout = (title: string, body: Html) => html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title}</title>
<link rel="stylesheet" href="${base}assets/viewer.css">
<script src="${base}assets/viewer.js" defer></script>
</head>
<body>
${body}
</body>
</html>
`

const time = (iso: string) => html`<time datetime="${iso}">${iso.replace("T", " ").replace(/\.\d+Z$/, " UTC")}</time>`

export const rows = (summaries: ReadonlyArray<Summary>, query: string): Html =>
  summaries.length === 0
    ? html`<tr class="empty"><td colspan="6">${
        query.trim() === ""
          ? "No messages yet. Send one through the API (npm run quickstart), and it appears here."
          : "No message matches the search."
      }</td></tr>`
    : html`${summaries.map(
        (s) => html`<tr data-id="${s.id}">
<td>${time(s.date)}</td>
<td>${s.organization}</td>
<td>${s.from}</td>
<td>${s.to}</td>
<td><a href="${messageUrl(s.id)}">${s.subject === "" ? "(no subject)" : s.subject}</a></td>
<td class="count">${s.attachments}</td>
</tr>`
      )}`

/** Messages not in the outbox: waiting for their time, or cancelled before it (from the message log). */
const waitingSection = (waiting: ReadonlyArray<MessageLog.EmailRecord>): Html =>
  waiting.length === 0
    ? html``
    : html`<h2>Scheduled and cancelled</h2>
<table id="waiting">
<thead><tr><th>Scheduled for</th><th>Organisation</th><th>From</th><th>To</th><th>Subject</th><th>Status</th></tr></thead>
<tbody>${waiting.map(
        (m) => html`<tr data-id="${m.id}">
<td>${m.scheduled_at === null ? "" : time(m.scheduled_at)}</td>
<td>${m.organization_id}</td>
<td>${m.from}</td>
<td>${m.recipients.map((r) => r.email).join(", ")}</td>
<td>${m.subject === "" ? "(no subject)" : m.subject}</td>
<td>${m.status}</td>
</tr>`
      )}</tbody>
</table>
<h2>Sent</h2>`

export const listPage = (
  summaries: ReadonlyArray<Summary>,
  query: string,
  waiting: ReadonlyArray<MessageLog.EmailRecord> = []
): Html =>
  layout(
    "Outbox · mailroom",
    html`<header>
<h1>Outbox</h1>
<span id="live" class="muted">connecting</span>
<span class="muted"><span id="count">${summaries.length}</span> shown</span>
<button type="button" class="danger" data-delete="${base}messages" data-then="${base}"
  data-confirm="Delete every message in the outbox?">Delete all</button>
</header>
<p class="note">Every message the outbox wrote, for every organisation, newest first.</p>
${waitingSection(waiting)}
<form role="search" method="get" action="${base}">
<input type="search" id="search" name="q" value="${query}" placeholder="Recipient, subject or organisation" aria-label="Search">
<button type="submit">Search</button>
</form>
<table id="messages">
<thead><tr><th>Time</th><th>Organisation</th><th>From</th><th>To</th><th>Subject</th><th>Attachments</th></tr></thead>
<tbody>${rows(summaries, query)}</tbody>
</table>`
  )

/** A message that was deleted (here or by hand) since its link was shown. */
export const missingPage = (): Html =>
  layout(
    "Not in the outbox · mailroom",
    html`<p><a href="${base}">← All messages</a></p>
<h1>This message is not in the outbox</h1>
<p class="muted">It was deleted, or its link is wrong.</p>`
  )

const warnings = (message: Message) => {
  const found: Array<string> = []
  if (!message.parts.html) found.push("No HTML part: clients show the text part as it is, in a plain font.")
  if (!message.parts.text) {
    found.push(
      "No text part: clients that do not show HTML, screen readers and spam filters get nothing to read, or a poor conversion."
    )
  }
  return found.length === 0 ? html`` : html`<ul class="warnings">${found.map((w) => html`<li>${w}</li>`)}</ul>`
}

const size = (bytes: number) =>
  bytes < 1024
    ? `${bytes} B`
    : bytes < 1048576
      ? `${(bytes / 1024).toFixed(1)} KiB`
      : `${(bytes / 1048576).toFixed(1)} MiB`

const referencesSection = (message: Message) => {
  const part = message.parsed.html
  const found = part === false ? [] : references(part)
  if (found.length === 0) return html`<p class="muted">No links and no remote images.</p>`
  return html`<table id="links">
<thead><tr><th>Kind</th><th>URL</th><th>Check</th></tr></thead>
<tbody>${found.map(
    (r) => html`<tr>
<td>${r.kind === "link" ? "link" : "image"}</td>
<td><code>${r.url.length > 300 ? `${r.url.slice(0, 300)}…` : r.url}</code></td>
<td>${
      r.problems.length === 0
        ? html`<span class="ok">ok</span>`
        : r.problems.map((p) => html`<div class="problem">${p}</div>`)
    }</td>
</tr>`
  )}</tbody>
</table>`
}

const attachmentsSection = (message: Message) => {
  const { attachments } = message.parsed
  if (attachments.length === 0) return html`<p class="muted">No attachments.</p>`
  const url = messageUrl(message.summary.id)
  return html`<table id="attachments">
<thead><tr><th>File</th><th>Content type</th><th>Size</th></tr></thead>
<tbody>${attachments.map(
    (a, i) => html`<tr>
<td><a href="${url}/attachments/${i}" download="${a.filename ?? `attachment-${i + 1}`}">${a.filename ?? `attachment ${i + 1}`}</a>${
      a.related === true ? html` <span class="muted">(inline)</span>` : html``
    }</td>
<td><code>${a.contentType}</code></td>
<td>${size(a.size)}</td>
</tr>`
  )}</tbody>
</table>`
}

const eventsSection = (events: ReadonlyArray<MailEvent.MailEvent>) =>
  events.length === 0
    ? html`<p class="muted">No delivery events seen since the server started.</p>`
    : html`<table id="events">
<thead><tr><th>Event</th><th>Recipient</th><th>When</th><th>Provider</th></tr></thead>
<tbody>${events.map(
        (e) =>
          html`<tr><td>${e.type}</td><td>${e.recipient ?? ""}</td><td>${time(e.occurred_at)}</td><td>${e.provider}</td></tr>`
      )}</tbody>
</table>`

const headersSection = (message: Message) =>
  html`<table id="headers"><tbody>${message.parsed.headerLines.map((h) => {
    const colon = h.line.indexOf(":")
    return html`<tr><th>${colon < 0 ? h.key : h.line.slice(0, colon)}</th><td><code>${
      colon < 0 ? h.line : h.line.slice(colon + 1).trim()
    }</code></td></tr>`
  })}</tbody></table>`

export const messagePage = (message: Message, events: ReadonlyArray<MailEvent.MailEvent>): Html => {
  const { summary, parsed, raw } = message
  const url = messageUrl(summary.id)
  const meta: ReadonlyArray<readonly [string, string | Html]> = [
    ["Organisation", summary.organization],
    ["From", summary.from],
    ["To", summary.to],
    ["Cc", addresses(parsed.cc)],
    ["Bcc", message.bcc.join(", ")],
    ["Reply-To", addresses(parsed.replyTo)],
    ["Date", time(summary.date)],
    ["Message-ID", parsed.messageId ?? ""],
    ["Size", size(raw.byteLength)]
  ]
  // Without a text part, mailparser's text is its own conversion of the HTML: not what was sent.
  const text = message.parts.text ? (parsed.text ?? "") : ""
  return layout(
    `${summary.subject === "" ? "(no subject)" : summary.subject} · Outbox · mailroom`,
    html`<p><a href="${base}">← All messages</a></p>
<header>
<h1 id="subject">${summary.subject === "" ? "(no subject)" : summary.subject}</h1>
<button type="button" class="danger" data-delete="${url}" data-then="${base}"
  data-confirm="Delete this message?">Delete</button>
</header>
<dl class="meta">${meta
      .filter(([, value]) => value !== "")
      .map(([name, value]) => html`<dt>${name}</dt><dd>${value}</dd>`)}</dl>
${warnings(message)}
<nav class="sections"><a href="#html">HTML</a><a href="#text">Text</a><a href="#links-images">Links and images</a>
<a href="#attachments-section">Attachments (${parsed.attachments.length})</a><a href="#events-section">Delivery events</a>
<a href="#headers-section">Headers</a><a href="#source">Source</a></nav>
<h2 id="html">HTML</h2>
${
  parsed.html === false || !message.parts.html
    ? html`<p class="muted">This message has no HTML part.</p>`
    : html`<iframe id="html-part" title="The HTML part" sandbox="" referrerpolicy="no-referrer" src="${url}/html"></iframe>`
}
<h2 id="text">Text</h2>
${text.trim() === "" ? html`<p class="muted">This message has no text part.</p>` : html`<pre id="text-part">${text}</pre>`}
<h2 id="links-images">Links and images</h2>
${referencesSection(message)}
<h2 id="attachments-section">Attachments</h2>
${attachmentsSection(message)}
<h2 id="events-section">Delivery events</h2>
${eventsSection(events)}
<h2 id="headers-section">Headers</h2>
${headersSection(message)}
<h2 id="source">Source</h2>
<p><a href="${url}/raw" download="${summary.id}.eml">Download the .eml</a></p>
${
  raw.byteLength > sourceLimit
    ? html`<p class="muted">The source is ${size(raw.byteLength)}; download it to read it.</p>`
    : html`<pre id="raw">${raw.toString("utf8")}</pre>`
}`
  )
}
