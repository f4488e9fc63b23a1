// The optional parts of a send beyond the spec's fields: tags, custom headers, RFC 8058 unsubscribe
// and inline parts; their rules, the headers they become, and the checks that span several fields.
import type { Header, Limits } from "../EmailProvider.js"
import { messageKey, organizationKey } from "../MailEvent.js"

export const maxTags = 10
export const maxHeaders = 20
export const tagPattern = /^[A-Za-z0-9_-]{1,256}$/
/** RFC 5322 field name: visible ASCII but the colon; 76 keeps `name: ` and a folded value on a line. */
export const headerNamePattern = /^[!-9;-~]{1,76}$/
/** RFC 2392 content-id without brackets, restricted to what every vendor accepts. */
export const contentIdPattern = /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~@-]{1,200}$/

/** Headers mailroom writes from the request's own fields or for its own use: never the caller's. */
const owned = [
  "from",
  "to",
  "cc",
  "bcc",
  "reply-to",
  "subject",
  "date",
  "message-id",
  "sender",
  "return-path",
  "received",
  "dkim-signature",
  "mime-version"
]
const ownedPrefixes = ["content-", "x-mailroom-"]

const ownedHeader = (name: string): boolean => {
  const lower = name.toLowerCase()
  return owned.includes(lower) || ownedPrefixes.some((prefix) => lower.startsWith(prefix))
}

/** The request's fields an owned header is written from: the error points the caller to them. */
const writtenFrom: Readonly<Record<string, string>> = {
  from: "from and from_name fields",
  to: "to field",
  cc: "cc field",
  bcc: "bcc field",
  "reply-to": "reply_to field",
  subject: "subject field"
}

/** Why a header mailroom writes is refused (naming the request's field for it), else undefined. */
export const ownedHeaderIssue = (name: string): string | undefined => {
  if (!ownedHeader(name)) return undefined
  const fields = writtenFrom[name.toLowerCase()]
  return fields === undefined
    ? "is a header mailroom writes itself and cannot be set"
    : `is a header mailroom writes itself; use the request's ${fields}`
}

/** `ownedHeader` as a JSON Schema pattern, which has no case-insensitive flag. */
const caseless = (word: string) =>
  [...word].map((c) => (/[a-z]/.test(c) ? `[${c}${c.toUpperCase()}]` : c.replace(/\./g, "\\."))).join("")
export const ownedHeaderPattern = `^(?:${owned.map(caseless).join("|")}|(?:${ownedPrefixes.map(caseless).join("|")}).*)$`

export const isUnsubscribeUrl = (value: string): boolean => {
  if (value.length > 2048 || !value.startsWith("https://") || /[\s<>,]/.test(value)) return false
  return URL.canParse(value)
}

interface Extras {
  readonly headers?: Readonly<Record<string, string>>
  readonly unsubscribe?: { readonly url: string; readonly mailto?: string }
}

const noHeaders: ReadonlyArray<Header> = Object.freeze([])

/** The custom headers a request asks for, in order: its `headers`, then the unsubscribe pair. */
export const headersOf = (request: Extras): ReadonlyArray<Header> => {
  const { unsubscribe } = request
  if (request.headers === undefined && unsubscribe === undefined) return noHeaders
  const headers = Object.entries(request.headers ?? {}).map(([name, value]) => ({ name, value }))
  if (unsubscribe === undefined) return headers
  // The https URI first: a client uses the leftmost method it supports (RFC 2369), and RFC 8058's
  // one-click POST needs it.
  const targets = [
    `<${unsubscribe.url}>`,
    ...(unsubscribe.mailto === undefined ? [] : [`<mailto:${unsubscribe.mailto}>`])
  ]
  return [
    ...headers,
    { name: "List-Unsubscribe", value: targets.join(", ") },
    { name: "List-Unsubscribe-Post", value: "List-Unsubscribe=One-Click" }
  ]
}

/** `cid:` references in HTML (RFC 2392: the content-id, percent-encoded), each once. */
const cidReferences = (html: string): ReadonlyArray<string> => {
  // Most HTML has none: one scan for the letters, not the match iterator and the set.
  if (!/cid:/i.test(html)) return []
  const found = new Set<string>()
  // One bounded character class per match: linear in the HTML's length.
  for (const match of html.matchAll(/\bcid:([^\s"'<>)]{1,400})/gi)) {
    const raw = match[1] ?? ""
    let id = raw
    try {
      id = decodeURIComponent(raw)
    } catch {}
    found.add(id)
  }
  return [...found]
}

/** Tag names core writes itself on every message (its metadata): a caller's tag may not take them. */
const reservedTags = new Set([organizationKey, messageKey].map((name) => name.toLowerCase()))

/** What the provider's declared limits refuse among the headers and tags. */
const limitProblems = (
  request: Extras & { readonly tags?: ReadonlyArray<{ readonly name: string }> },
  limits: Limits
): ReadonlyArray<string> => {
  const errors: Array<string> = []
  const headers = headersOf(request)
  if (limits.maxCustomHeaders !== undefined && headers.length > limits.maxCustomHeaders) {
    errors.push(
      `headers: the message has ${headers.length} custom headers (unsubscribe writes 2); the provider accepts at most ${limits.maxCustomHeaders}`
    )
  }
  if (request.headers !== undefined) {
    const forbidden = new Set((limits.forbiddenHeaders ?? []).map((name) => name.toLowerCase()))
    for (const name of Object.keys(request.headers)) {
      if (forbidden.has(name.toLowerCase())) errors.push(`headers.${name}: is not accepted by the provider`)
    }
  }
  const tags = request.tags ?? []
  tags.forEach((tag, i) => {
    if (reservedTags.has(tag.name.toLowerCase())) errors.push(`tags[${i}].name: ${tag.name} is reserved for mailroom`)
  })
  if (limits.maxTags !== undefined && tags.length > limits.maxTags) {
    errors.push(`tags: the message has ${tags.length} tags; the provider accepts at most ${limits.maxTags}`)
  }
  return errors
}

/**
 * The problems that span several fields or need the provider's limits: a `cid:` in the HTML that no
 * attachment has, a content id given twice, headers that `unsubscribe` writes given as well, more
 * headers or tags than the provider takes, a header it writes itself, a tag name core uses.
 */
export const problems = (
  request: Extras & {
    readonly body: { readonly html?: string }
    readonly attachments?: ReadonlyArray<{ readonly content_id?: string }>
    readonly tags?: ReadonlyArray<{ readonly name: string }>
  },
  limits: Limits
): ReadonlyArray<string> => {
  const errors: Array<string> = [...limitProblems(request, limits)]
  const ids = new Map<string, number>()
  request.attachments?.forEach((a, i) => {
    if (a.content_id === undefined) return
    const first = ids.get(a.content_id)
    if (first !== undefined) errors.push(`attachments[${i}].content_id: is attachments[${first}]'s already`)
    else ids.set(a.content_id, i)
  })
  for (const id of request.body.html === undefined ? [] : cidReferences(request.body.html)) {
    if (!ids.has(id)) errors.push(`body.html: references cid:${id}, which no attachment has as its content_id`)
  }
  if (request.unsubscribe !== undefined) {
    for (const name of Object.keys(request.headers ?? {})) {
      if (/^list-unsubscribe(-post)?$/i.test(name)) {
        errors.push(`headers.${name}: is written from unsubscribe; give one or the other`)
      }
    }
  }
  return errors
}
