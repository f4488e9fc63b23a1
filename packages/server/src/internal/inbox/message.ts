// One outbox message as the inbox reads it: parsed once from its `.eml` (and its sidecar's blind
// copies), into what the index keeps and what `GET .../messages/{id}` answers, with the links found in
// both bodies and the text each link shows.
import { readFile, stat } from "node:fs/promises"
import { createRequire } from "node:module"
import * as path from "node:path"
import type * as Htmlparser2 from "htmlparser2"
import type { AddressObject, EmailAddress, ParsedMail } from "mailparser"
import { bodyParts } from "../viewer/parts.js"

/** Message ids are the outbox's UUIDs; anything else (a path, a dot file) is never a message. */
export const isMessageId = (id: string): boolean =>
  /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/.test(id) && !id.includes("..")

export interface Address {
  readonly address: string
  readonly name: string | null
}

/** What the index keeps of a message: everything a list answers and a filter or a search reads. */
export interface Indexed {
  readonly id: string
  readonly organization: string | null
  readonly from: Address | null
  readonly to: ReadonlyArray<Address>
  readonly cc: ReadonlyArray<Address>
  readonly bcc: ReadonlyArray<string>
  readonly subject: string
  /** When the outbox wrote it (the file's time), ISO 8601 to the millisecond: what lists sort by. */
  readonly receivedAt: string
  /** The Date header as ISO 8601 (to the second, as the header has it); null without one. */
  readonly date: string | null
  readonly size: number
  readonly attachments: number
  /** What text search reads: the text part, else the HTML's text, bounded. */
  readonly body: string
  /** The links of both bodies. */
  readonly links: ReadonlyArray<Link>
  readonly mtimeMs: number
}

export interface Link {
  readonly url: string
  /** What the reader sees: an anchor's text (or an image's alt), or the URL as a text part writes it. */
  readonly text: string
  readonly source: "html" | "text"
}

export interface Parsed {
  readonly indexed: Indexed
  readonly raw: Buffer
  readonly parsed: ParsedMail
  /** Whether the message really has these parts (mailparser makes a text part from the HTML). */
  readonly parts: { readonly text: boolean; readonly html: boolean }
}

/** The text a search reads of each body is bounded: the index stays small whatever a message holds. */
const searchedChars = 64 * 1024

const addressList = (value: AddressObject | ReadonlyArray<AddressObject> | undefined): ReadonlyArray<Address> =>
  (value === undefined ? [] : Array.isArray(value) ? value : [value as AddressObject]).flatMap((group) =>
    group.value.flatMap((entry: EmailAddress) =>
      entry.address === undefined || entry.address === ""
        ? []
        : [{ address: entry.address, name: entry.name === "" ? null : entry.name }]
    )
  )

/** The blind copies: the outbox's X-Mailroom-Bcc header, else the `.json` sidecar earlier versions wrote. */
export const blindCopies = async (parsed: ParsedMail, sidecarFile: string): Promise<ReadonlyArray<string>> => {
  const listed = headerText(parsed, "x-mailroom-bcc")
  if (listed !== "") return listed.split(",").flatMap((address) => (address.trim() === "" ? [] : [address.trim()]))
  try {
    const sidecar = JSON.parse(await readFile(sidecarFile, "utf8")) as { bcc?: unknown }
    return Array.isArray(sidecar.bcc) ? sidecar.bcc.filter((b): b is string => typeof b === "string") : []
  } catch {
    return []
  }
}

// Loaded on first use, not when the server starts.
let htmlparser2: typeof Htmlparser2 | undefined
const parserModule = () => {
  htmlparser2 ??= createRequire(import.meta.url)("htmlparser2") as typeof Htmlparser2
  return htmlparser2
}

/** The visible text of an HTML body, without scripts and styles, bounded by `limit` characters. */
export const htmlText = (html: string, limit = searchedChars): string => {
  let text = ""
  let hidden = 0
  const parser = new (parserModule().Parser)(
    {
      onopentag(name) {
        if (name === "script" || name === "style" || name === "head") hidden++
      },
      onclosetag(name) {
        if ((name === "script" || name === "style" || name === "head") && hidden > 0) hidden--
      },
      ontext(data) {
        if (hidden === 0 && text.length < limit) text += data
      }
    },
    { decodeEntities: true, lowerCaseTags: true }
  )
  parser.write(html)
  parser.end()
  return text.replace(/\s+/g, " ").trim().slice(0, limit)
}

/** Each `<a href>` (and `<area>`) of the HTML in document order, with the text it shows. */
const htmlLinks = (html: string): ReadonlyArray<Link> => {
  const found: Array<Link> = []
  const open: Array<{ url: string; text: string }> = []
  const parser = new (parserModule().Parser)(
    {
      onopentag(name, attributes) {
        if (name === "a" && attributes.href !== undefined) open.push({ url: attributes.href.trim(), text: "" })
        if (name === "area" && attributes.href !== undefined) {
          found.push({ url: attributes.href.trim(), text: attributes.alt ?? "", source: "html" })
        }
        // An image inside a link is what the reader sees of it.
        if (name === "img" && open.length > 0 && attributes.alt !== undefined) {
          const current = open[open.length - 1]
          if (current !== undefined) current.text += ` ${attributes.alt}`
        }
      },
      ontext(data) {
        for (const link of open) if (link.text.length < 1000) link.text += data
      },
      onclosetag(name) {
        if (name !== "a") return
        const link = open.pop()
        if (link !== undefined)
          found.push({ url: link.url, text: link.text.replace(/\s+/g, " ").trim(), source: "html" })
      }
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true }
  )
  parser.write(html)
  parser.end()
  return found
}

/**
 * The URLs of a text part, as a mail client links them: `http(s)://` up to a space or a bracket, less
 * the punctuation that ends a sentence. One pass, no backtracking.
 */
const textLinks = (text: string): ReadonlyArray<Link> =>
  [...text.matchAll(/\bhttps?:\/\/[^\s<>"'()[\]{}]+/gi)].map((match) => {
    const url = match[0].replace(/[.,;:!?]+$/, "")
    return { url, text: url, source: "text" as const }
  })

/** The links of both bodies: the HTML's first, then the text part's. */
export const linksOf = (html: string | undefined, text: string | undefined): ReadonlyArray<Link> => [
  ...(html === undefined ? [] : htmlLinks(html)),
  ...(text === undefined ? [] : textLinks(text))
]

const headerText = (parsed: ParsedMail, name: string) => {
  const value = parsed.headers.get(name)
  return typeof value === "string" ? value : ""
}

/** Reads and parses `{dir}/{id}.eml`; undefined when it is not there or not a message. */
export const read = async (dir: string, id: string): Promise<Parsed | undefined> => {
  if (!isMessageId(id)) return undefined
  const file = path.join(dir, `${id}.eml`)
  let raw: Buffer
  let mtimeMs: number
  try {
    ;[raw, mtimeMs] = await Promise.all([readFile(file), stat(file).then((s) => s.mtimeMs)])
  } catch {
    return undefined
  }
  let parsed: ParsedMail
  try {
    // Imported on first use: a server whose inbox is never read does not load a MIME parser.
    const { simpleParser } = await import("mailparser")
    // `cid:` references are kept as the message has them, not turned into data URLs.
    parsed = await simpleParser(raw, { skipImageLinks: true })
  } catch {
    return undefined
  }
  const parts = bodyParts(raw)
  const bcc = await blindCopies(parsed, path.join(dir, `${id}.json`))
  const text = parts.text ? (parsed.text ?? "") : ""
  const html = parts.html && parsed.html !== false ? parsed.html : ""
  const organization = headerText(parsed, "x-mailroom-organization")
  return {
    raw,
    parsed,
    parts,
    indexed: {
      id,
      organization: organization === "" ? null : organization,
      from: addressList(parsed.from)[0] ?? null,
      to: addressList(parsed.to),
      cc: addressList(parsed.cc),
      bcc,
      subject: parsed.subject ?? "",
      receivedAt: new Date(mtimeMs).toISOString(),
      date: parsed.date === undefined || Number.isNaN(parsed.date.getTime()) ? null : parsed.date.toISOString(),
      size: raw.byteLength,
      attachments: parsed.attachments.filter((a) => a.related !== true).length,
      body: text !== "" ? text.slice(0, searchedChars) : html === "" ? "" : htmlText(html),
      links: linksOf(html === "" ? undefined : html, text === "" ? undefined : text),
      mtimeMs
    }
  }
}
