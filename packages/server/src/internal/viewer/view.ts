// One message in the viewer's right pane: its header and actions, then tabs for the HTML (at desktop
// and phone widths side by side, remote images blocked until asked for), the text, the links checked,
// the attachments (images previewed), the delivery events, the headers and the source.
import type { MessageLog } from "@mailroom/core"
import { type Html, html } from "./html.js"
import { references } from "./links.js"
import { addresses, type Message } from "./outbox.js"
import { base, messageUrl, time } from "./pages.js"

/** Shown in full up to this size; past it the page links to the `.eml` instead. */
const sourceLimit = 1_000_000

/** Image types a browser shows and that run nothing: previewed inline (never SVG, which can hold script). */
export const previewable = new Set(["image/png", "image/jpeg", "image/gif", "image/webp", "image/avif"])

export const size = (bytes: number) =>
  bytes < 1024
    ? `${bytes} B`
    : bytes < 1048576
      ? `${(bytes / 1024).toFixed(1)} KiB`
      : `${(bytes / 1048576).toFixed(1)} MiB`

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

const linksSection = (message: Message) => {
  const part = message.parsed.html
  const found = part === false ? [] : references(part)
  if (found.length === 0) return html`<p class="muted">No links and no remote images.</p>`
  return html`<div class="scroll"><table id="links">
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
</table></div>`
}

const attachmentsSection = (message: Message) => {
  const { attachments } = message.parsed
  if (attachments.length === 0) return html`<p class="muted">No attachments.</p>`
  const url = messageUrl(message.id)
  const images = attachments
    .map((a, i) => ({ a, i }))
    .filter(({ a }) => previewable.has(a.contentType.toLowerCase()) && a.related !== true)
  return html`${
    images.length === 0
      ? html``
      : html`<div class="previews-images">${images.map(
          ({ a, i }) =>
            html`<figure><img src="${url}/attachments/${i}?inline=1" alt="${a.filename ?? `attachment ${i + 1}`}" loading="lazy"><figcaption>${a.filename ?? `attachment ${i + 1}`}</figcaption></figure>`
        )}</div>`
  }<div class="scroll"><table id="attachments">
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
</table></div>`
}

const eventsSection = (events: ReadonlyArray<MessageLog.TimelineEvent>) =>
  events.length === 0
    ? html`<p class="muted">No delivery events yet.</p>`
    : html`<div class="scroll"><table id="events">
<thead><tr><th>Event</th><th>Recipient</th><th>When</th><th>Provider</th></tr></thead>
<tbody>${events.map(
        (e) =>
          html`<tr><td>${e.type}${e.bounce === undefined ? "" : ` (${e.bounce.kind})`}</td><td>${e.recipient ?? ""}</td><td>${time(e.occurred_at)}</td><td>${e.provider}</td></tr>`
      )}</tbody>
</table></div>`

const headersSection = (message: Message) =>
  html`<div class="scroll"><table id="headers"><tbody>${message.parsed.headerLines.map((h) => {
    const colon = h.line.indexOf(":")
    return html`<tr><th>${colon < 0 ? h.key : h.line.slice(0, colon)}</th><td><code>${
      colon < 0 ? h.line : h.line.slice(colon + 1).trim()
    }</code></td></tr>`
  })}</tbody></table></div>`

const preview = (message: Message, url: string) =>
  message.parsed.html === false || !message.parts.html
    ? html`<p class="muted">This message has no HTML part.</p>`
    : html`<div class="preview-controls">
<div class="segmented" role="group" aria-label="Width">
<button type="button" data-width="both" aria-pressed="true">Phone and desktop</button>
<button type="button" data-width="desktop" aria-pressed="false">Desktop</button>
<button type="button" data-width="phone" aria-pressed="false">Phone</button>
</div>
<button type="button" id="remote-images" aria-pressed="false" title="Remote images are blocked: loading them tells their server the message was opened">Load remote images</button>
</div>
<div class="previews" data-width="both">
<figure class="frame desktop"><figcaption>Desktop</figcaption><iframe id="html-part" title="The HTML part, at desktop width" sandbox="" referrerpolicy="no-referrer" src="${url}/html"></iframe></figure>
<figure class="frame phone"><figcaption>Phone · 375 px</figcaption><iframe id="html-phone" title="The HTML part, at phone width" sandbox="" referrerpolicy="no-referrer" src="${url}/html"></iframe></figure>
</div>`

/** The message's pane: what `GET messages/{id}` shows beside the list, and its `?fragment=1`. */
export const messageView = (message: Message, events: ReadonlyArray<MessageLog.TimelineEvent>, read: boolean): Html => {
  const { parsed, raw } = message
  const url = messageUrl(message.id)
  const subject = parsed.subject === undefined || parsed.subject === "" ? "(no subject)" : parsed.subject
  const meta: ReadonlyArray<readonly [string, string | Html]> = [
    ["From", addresses(parsed.from)],
    ["To", addresses(parsed.to)],
    ["Cc", addresses(parsed.cc)],
    ["Bcc", message.bcc.join(", ")],
    ["Reply-To", addresses(parsed.replyTo)],
    ["Date", parsed.date === undefined ? "" : time(parsed.date.toISOString())],
    ["Organisation", message.organization],
    ["Message-ID", parsed.messageId ?? ""],
    ["Size", size(raw.byteLength)]
  ]
  // Without a text part, mailparser's text is its own conversion of the HTML: not what was sent.
  const text = message.parts.text ? (parsed.text ?? "") : ""
  const tab = (id: string, label: string) => html`<a href="#${id}" role="tab" data-tab="${id}">${label}</a>`
  return html`<article class="message" data-id="${message.id}" data-title="${subject} · Outbox · mailroom">
<p class="back"><a href="${base}">← Messages</a></p>
<header class="message-head">
<h1 id="subject">${subject}</h1>
<div class="actions">
<button type="button" data-toggle-read="${read ? "unread" : "read"}">${read ? "Mark unread" : "Mark read"}</button>
<a class="button" href="${url}/raw" download="${message.id}.eml">Download .eml</a>
<button type="button" class="danger" data-delete="${url}" data-then="${base}" data-confirm="Delete this message?">Delete</button>
</div>
</header>
<dl class="meta">${meta
    .filter(([, value]) => value !== "")
    .map(([name, value]) => html`<dt>${name}</dt><dd>${value}</dd>`)}</dl>
${warnings(message)}
<nav class="tabs" role="tablist" aria-label="Parts of the message">${[
    tab("tab-html", "HTML"),
    tab("tab-text", "Text"),
    tab("tab-links", "Links"),
    tab("tab-attachments", `Attachments (${parsed.attachments.length})`),
    tab("tab-events", `Events (${events.length})`),
    tab("tab-headers", "Headers"),
    tab("tab-source", "Source")
  ]}</nav>
<section id="tab-html" class="tab"><h2>HTML</h2>${preview(message, url)}</section>
<section id="tab-text" class="tab"><h2>Text</h2>${
    text.trim() === ""
      ? html`<p class="muted">This message has no text part.</p>`
      : html`<pre id="text-part">${text}</pre>`
  }</section>
<section id="tab-links" class="tab"><h2>Links and images</h2>${linksSection(message)}</section>
<section id="tab-attachments" class="tab"><h2>Attachments</h2>${attachmentsSection(message)}</section>
<section id="tab-events" class="tab"><h2>Delivery events</h2>${eventsSection(events)}</section>
<section id="tab-headers" class="tab"><h2>Headers</h2>${headersSection(message)}</section>
<section id="tab-source" class="tab"><h2>Source</h2><p><a href="${url}/raw" download="${message.id}.eml">Download the .eml</a></p>${
    raw.byteLength > sourceLimit
      ? html`<p class="muted">The source is ${size(raw.byteLength)}; download it to read it.</p>`
      : html`<pre id="raw">${raw.toString("utf8")}</pre>`
  }</section>
</article>`
}
