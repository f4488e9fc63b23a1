// Builds the JSON body of Resend's `POST /emails` from core's normalised message, and carries the
// message's metadata as Resend tags, which Resend hands back in every webhook.
import type { EmailProvider } from "@mailroom/core"
import * as Adapter from "@mailroom/core/adapter"

/** What Resend takes in a tag's name and value. */
const tagCharacters = /^[A-Za-z0-9_-]{1,256}$/

// A metadata value Resend would refuse as a tag (an organisation id with a dot or an `@`) goes as
// base64url, which is made of tag characters, behind a prefix; so does a value that starts with it.
const encodedPrefix = "b64_"

/** A metadata value as a tag value. */
export const encodeTagValue = (value: string): string =>
  tagCharacters.test(value) && !value.startsWith(encodedPrefix)
    ? value
    : `${encodedPrefix}${Buffer.from(value, "utf8").toString("base64url")}`

/** A tag value back as the metadata value it carries. */
export const decodeTagValue = (value: string): string =>
  value.startsWith(encodedPrefix) ? Buffer.from(value.slice(encodedPrefix.length), "base64url").toString("utf8") : value

/**
 * The display name as Resend's `from` takes it: quoted when it is printable ASCII without `"` or `\`,
 * otherwise as RFC 2047 encoded-words, which every address parser reads as plain atoms; so is a name
 * that would itself read as an encoded-word, since parsers decode one even inside quotes.
 */
export const formatSender = ({ address, name }: EmailProvider.Sender): string => {
  if (name === undefined || name === "") return address
  return /^[\x20-\x7e]*$/.test(name) && !/["\\]/.test(name) && Adapter.headerText(name) === name
    ? `"${name}" <${address}>`
    : `${Adapter.encodedWords(name)} <${address}>`
}

/** Resend's tags: the caller's, then the metadata, which wins a name both use (an event must find its way home). */
const tagsOf = (email: EmailProvider.OutboundEmail) => {
  const metadata = Object.entries(email.metadata ?? {}).map(([name, value]) => ({
    name,
    value: encodeTagValue(value)
  }))
  const taken = new Set(metadata.map((tag) => tag.name))
  const tags = [...(email.tags ?? []).filter((tag) => !taken.has(tag.name)), ...metadata]
  return tags.length === 0 ? {} : { tags }
}

/**
 * Resend takes headers as one object: two headers of one name cannot both go, so the message is
 * refused before it is sent rather than sent without one of them.
 */
export const repeatedHeader = (email: EmailProvider.OutboundEmail): string | undefined => {
  const seen = new Set<string>()
  for (const { name } of email.headers ?? []) {
    const key = name.toLowerCase()
    if (seen.has(key)) return name
    seen.add(key)
  }
  return undefined
}

/**
 * The JSON body of `POST /emails` as a Blob, each file's base64 written into it piece by piece: a send
 * holds the file and the body's bytes, about 2.33 times the file, and no string as large as either.
 */
export const requestBody = (email: EmailProvider.OutboundEmail): Blob => {
  const files = Adapter.jsonFiles(email.attachments.map((attachment) => attachment.content))
  return files.body(JSON.stringify(toResendBody(email, files.placeholder)))
}

/** The body's fields, each file's `content` the string `content(i)` (`requestBody` puts its base64 there). */
const toResendBody = (email: EmailProvider.OutboundEmail, content: (i: number) => string): Record<string, unknown> => ({
  from: formatSender(email.from),
  to: email.to,
  ...(email.cc.length > 0 ? { cc: email.cc } : {}),
  ...(email.bcc.length > 0 ? { bcc: email.bcc } : {}),
  ...(email.replyTo.length > 0 ? { reply_to: email.replyTo } : {}),
  // Resend writes ASCII header text as it is: text that reads as an encoded-word is encoded first.
  subject: Adapter.headerText(email.subject),
  ...(email.html !== undefined ? { html: email.html } : {}),
  ...(email.text !== undefined ? { text: email.text } : {}),
  ...(email.headers !== undefined && email.headers.length > 0
    ? { headers: Object.fromEntries(email.headers.map((header) => [header.name, header.value])) }
    : {}),
  ...tagsOf(email),
  ...(email.attachments.length > 0
    ? {
        attachments: email.attachments.map((attachment, i) => ({
          filename: Adapter.headerText(attachment.filename),
          content: content(i),
          content_type: attachment.contentType,
          ...(attachment.contentId === undefined ? {} : { content_id: attachment.contentId })
        }))
      }
    : {})
})
