// Builds the JSON body of Postmark's `POST /email` from core's normalised message: the sender with its
// display name, comma-separated recipient lists, the bodies, custom headers, tags as Tag and Metadata,
// and base64 attachments (inline parts with their ContentID); and says what Postmark could not carry.
import type { EmailProvider } from "@mailroom/core"
import * as Adapter from "@mailroom/core/adapter"
import type { Message } from "postmark"

/**
 * `"Name" <address>`, the form Postmark documents, with the name as UTF-8 (Postmark encodes the header
 * itself). Postmark's parser does not read backslash escapes inside a quoted name: a `"` or `\` there is
 * refused ("Unclosed quoted string"), so such a name, or one with a control character, goes as
 * RFC 2047 encoded-words instead, which are plain ASCII atoms to any parser. So does a name that
 * would itself read as an encoded-word: parsers decode one even inside quotes.
 */
export const formatSender = ({ address, name }: EmailProvider.Sender): string => {
  if (name === undefined || name === "") return address
  return /["\\\p{Cc}]/u.test(name) || Adapter.headerText(name) !== name
    ? `${Adapter.encodedWords(name)} <${address}>`
    : `"${name}" <${address}>`
}

const list = (addresses: ReadonlyArray<string>) => addresses.join(", ")

/** Each file's base64 as one string, as a client of the caller's is given it. */
export const base64Of =
  (files: ReadonlyArray<Uint8Array>) =>
  (i: number): string => {
    const bytes = files[i] ?? new Uint8Array()
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64")
  }

/** Postmark's Metadata: at most 10 fields, names of at most 20 characters, values of at most 80. */
export const maxMetadataFields = 10
const maxMetadataName = 20
const maxMetadataValue = 80

/**
 * "TextBody and HtmlBody can each be up to 5 MB" (Postmark's support article 1056), read as UTF-8 bytes,
 * as core counts bodies, and as 5,000,000 of them, the stricter megabyte, as for the whole message.
 */
const maxBodyBytes = 5_000_000

/** The first body over Postmark's limit, named by core's field, or undefined. */
const bodyRefusal = (email: EmailProvider.OutboundEmail): string | undefined => {
  for (const [field, body] of [
    ["html", email.html],
    ["text", email.text]
  ] as const) {
    const bytes = body === undefined ? 0 : Buffer.byteLength(body, "utf8")
    if (bytes > maxBodyBytes) {
      return `${field}: Postmark takes a body of at most 5,000,000 bytes (5 MB); this one is ${bytes} bytes`
    }
  }
  return undefined
}

/**
 * What of the message Postmark could not carry, named by field, or undefined when it carries all of
 * it: a body over 5 MB; and each tag is a Metadata field beside core's own, so names and values must
 * fit Metadata's limits, and no two names may be equal without case (Postmark refuses that too).
 */
export const refusal = (email: EmailProvider.OutboundEmail): string | undefined => {
  const body = bodyRefusal(email)
  if (body !== undefined) return body
  const tags = email.tags ?? []
  const own = Object.keys(email.metadata ?? {})
  const names = new Set(own.map((name) => name.toLowerCase()))
  for (const { name, value } of tags) {
    if (name.length > maxMetadataName || value.length > maxMetadataValue) {
      return `tags: ${name}: Postmark keeps tags as Metadata, whose names are at most ${maxMetadataName} characters and values at most ${maxMetadataValue}`
    }
    if (names.has(name.toLowerCase())) {
      return `tags: ${name} is given twice (Postmark compares names without case), or is a name mailroom uses itself`
    }
    names.add(name.toLowerCase())
  }
  return own.length + tags.length > maxMetadataFields
    ? `tags: Postmark keeps at most ${maxMetadataFields} Metadata fields, ${own.length} of them mailroom's own; the message has ${tags.length} tags`
    : undefined
}

/** The message as the client takes it, each file's `Content` the string `content(i)`. */
export const toPostmarkMessage = (
  email: EmailProvider.OutboundEmail,
  messageStream: string,
  tagFrom: string,
  content: (i: number) => string
): Message => {
  const tags = email.tags ?? []
  const tag = tags.find((t) => t.name === tagFrom && t.value !== "")
  const metadata = { ...email.metadata, ...Object.fromEntries(tags.map((t) => [t.name, t.value])) }
  const headers = email.headers ?? []
  return {
    ...fields(email, messageStream, content),
    ...(headers.length > 0
      ? { Headers: headers.map((h) => ({ Name: h.name, Value: Adapter.headerText(h.value) })) }
      : {}),
    // Postmark's one Tag groups its statistics and message search; every tag is also Metadata.
    ...(tag === undefined ? {} : { Tag: tag.value }),
    // Postmark returns it in every webhook's `Metadata`, which is how an event finds its organisation
    // and its message, and what carries the caller's tags back.
    ...(Object.keys(metadata).length > 0 ? { Metadata: metadata } : {})
  }
}

const fields = (
  email: EmailProvider.OutboundEmail,
  messageStream: string,
  content: (i: number) => string
): Message => ({
  From: formatSender(email.from),
  To: list(email.to),
  ...(email.cc.length > 0 ? { Cc: list(email.cc) } : {}),
  ...(email.bcc.length > 0 ? { Bcc: list(email.bcc) } : {}),
  ...(email.replyTo.length > 0 ? { ReplyTo: list(email.replyTo) } : {}),
  // Postmark encodes only what is not ASCII: text that reads as an encoded-word is encoded first.
  Subject: Adapter.headerText(email.subject),
  ...(email.html !== undefined ? { HtmlBody: email.html } : {}),
  ...(email.text !== undefined ? { TextBody: email.text } : {}),
  MessageStream: messageStream,
  ...(email.attachments.length > 0
    ? {
        Attachments: email.attachments.map((attachment, i) => ({
          Name: Adapter.headerText(attachment.filename),
          Content: content(i),
          ContentType: attachment.contentType,
          // Postmark makes a part with a ContentID inline, written as its documentation shows it.
          ContentID: attachment.contentId === undefined ? null : `cid:${attachment.contentId}`
        }))
      }
    : {})
})
