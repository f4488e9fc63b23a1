// Turns core's OutboundEmail into the SES v2 SendEmail request: Simple content with attachments (inline
// parts too), custom headers and tags, a From header SES accepts (7-bit ASCII, RFC 2047 display
// name), punycoded domains and UTF-8 parts; and says what of a message SES would refuse.
import { domainToASCII } from "node:url"
import type { Attachment, MessageHeader, SendEmailCommandInput } from "@aws-sdk/client-sesv2"
import type { EmailProvider } from "@mailroom/core"
import * as Adapter from "@mailroom/core/adapter"

const asciiOnly = /^[\x00-\x7f]*$/
const printableAscii = /^[\x20-\x7e]*$/

/**
 * SES does not speak SMTPUTF8: a Unicode domain must be punycoded (its local part cannot be, and SES
 * refuses it, which is left to SES to say).
 */
export const asciiAddress = (address: string): string => {
  const at = address.lastIndexOf("@")
  if (at < 0) return address
  const domain = address.slice(at + 1)
  if (asciiOnly.test(domain)) return address
  const ascii = domainToASCII(domain)
  return ascii === "" ? address : `${address.slice(0, at)}@${ascii}`
}

/**
 * The display name as a header phrase. A printable ASCII name is always quoted, so a comma or an `@`
 * in it can never split the address; anything else is encoded, since an encoded-word must not sit
 * inside quotes. A name that would itself read as an encoded-word is encoded too: parsers decode
 * one even inside quotes.
 */
export const displayName = (name: string): string =>
  printableAscii.test(name) && Adapter.headerText(name) === name
    ? `"${name.replace(/(["\\])/g, "\\$1")}"`
    : Adapter.encodedWords(name)

export const fromAddress = (from: EmailProvider.Sender): string => {
  const address = asciiAddress(from.address)
  return from.name === undefined || from.name === "" ? address : `${displayName(from.name)} <${address}>`
}

// SES caps ContentType at 78 characters; the parameters are what can be dropped.
const contentTypeOf = (contentType: string): string =>
  contentType.length <= 78 ? contentType : (contentType.split(";")[0]?.trim() ?? contentType)

const attachmentOf = (attachment: EmailProvider.OutboundAttachment): Attachment => ({
  FileName: Adapter.headerText(attachment.filename),
  RawContent: attachment.content,
  ContentType: contentTypeOf(attachment.contentType),
  ...(attachment.contentId === undefined
    ? { ContentDisposition: "ATTACHMENT" }
    : { ContentDisposition: "INLINE", ContentId: attachment.contentId }),
  // SES's default is SEVEN_BIT, which would mangle binary files.
  ContentTransferEncoding: "BASE64"
})

/** At most 15 custom headers a message (SES's `MessageHeader` list). */
export const maxCustomHeaders = 15

/**
 * What SES sets itself and refuses as a custom header of Simple content (the "Amazon SES header
 * fields" page of its developer guide).
 */
export const forbiddenHeaders = Adapter.structuralHeaders
const forbidden = new Set(forbiddenHeaders.map((name) => name.toLowerCase()))

// SES's MessageHeader (API reference): a name of printable ASCII without ":", at most 126 characters;
// a value of printable ASCII, at most 870 characters as written. So `Name: value` always fits RFC
// 5322's 998 on one line; SES folds and signs (DKIM) what it writes.
const headerName = /^[\x21-\x39\x3b-\x7e]{1,126}$/
const maxHeaderValue = 870
// SES's Attachment.ContentId; MessageTag names and values.
const maxContentIdLength = 78
const tagName = /^[A-Za-z0-9_-]{1,256}$/
const tagValue = /^[A-Za-z0-9_-]{0,256}$/

/**
 * A custom header's value as SES takes it: printable ASCII as it is (encoded when it would read as
 * an encoded-word), anything else as RFC 2047 encoded-words, as unstructured text is.
 */
const headerValue = (value: string): string =>
  printableAscii.test(value) ? Adapter.headerText(value) : Adapter.encodedWords(value)

const headerOf = (header: EmailProvider.Header): MessageHeader => ({
  Name: header.name,
  Value: headerValue(header.value)
})

/**
 * What of the message SES would refuse as Simple content, named by field, or undefined when it
 * takes all of it. Checked before the call, so nothing is dropped on the way.
 */
export const refusal = (email: EmailProvider.OutboundEmail): string | undefined => {
  const headers = email.headers ?? []
  if (headers.length > maxCustomHeaders) {
    return `headers: SES takes at most ${maxCustomHeaders} custom headers; the message has ${headers.length}`
  }
  for (const { name, value } of headers) {
    if (forbidden.has(name.toLowerCase())) return `headers: SES sets ${name} itself and refuses it as a custom header`
    if (!headerName.test(name)) {
      return `headers: ${JSON.stringify(name)} is not a header name SES takes (printable ASCII without ":", at most 126 characters)`
    }
    const written = headerValue(value)
    if (written.trim() === "" || written.length > maxHeaderValue) {
      return `headers: ${name} must have a value of at most ${maxHeaderValue} characters once encoded (SES's limit)`
    }
  }
  // Core's metadata travels as tags too, so a caller's tag may not take one of its names.
  const names = new Set(Object.keys(email.metadata ?? {}))
  for (const { name, value } of email.tags ?? []) {
    if (!tagName.test(name) || !tagValue.test(value)) {
      return `tags: ${name}: SES takes tag names and values of ASCII letters, digits, "_" and "-", at most 256 characters`
    }
    if (names.has(name)) return `tags: ${name} is given twice, or is a name mailroom uses itself`
    names.add(name)
  }
  const longId = email.attachments.find((a) => a.contentId !== undefined && a.contentId.length > maxContentIdLength)
  return longId === undefined
    ? undefined
    : `attachments: the content id of ${longId.filename} is over SES's ${maxContentIdLength} characters`
}

const addresses = (list: ReadonlyArray<string>): Array<string> | undefined =>
  list.length === 0 ? undefined : list.map(asciiAddress)

const utf8 = (data: string) => ({ Data: data, Charset: "UTF-8" })

export const sendEmailInput = (
  email: EmailProvider.OutboundEmail,
  configurationSetName: string | undefined
): SendEmailCommandInput => {
  const to = addresses(email.to)
  const cc = addresses(email.cc)
  const bcc = addresses(email.bcc)
  const replyTo = addresses(email.replyTo)
  // SES returns them in each event's `mail.tags`: core's metadata is how an event finds its
  // organisation and its message, the caller's tags what the caller filters on.
  const tags = [
    ...Object.entries(email.metadata ?? {}).map(([Name, Value]) => ({ Name, Value })),
    ...(email.tags ?? []).map(({ name, value }) => ({ Name: name, Value: value }))
  ]
  return {
    FromEmailAddress: fromAddress(email.from),
    Destination: {
      ...(to === undefined ? {} : { ToAddresses: to }),
      ...(cc === undefined ? {} : { CcAddresses: cc }),
      ...(bcc === undefined ? {} : { BccAddresses: bcc })
    },
    ...(replyTo === undefined ? {} : { ReplyToAddresses: replyTo }),
    Content: {
      Simple: {
        // SES writes an ASCII subject as it is: one that reads as an encoded-word is encoded first.
        Subject: utf8(Adapter.headerText(email.subject)),
        Body: {
          ...(email.text === undefined ? {} : { Text: utf8(email.text) }),
          ...(email.html === undefined ? {} : { Html: utf8(email.html) })
        },
        ...(email.attachments.length === 0 ? {} : { Attachments: email.attachments.map(attachmentOf) }),
        ...(email.headers === undefined || email.headers.length === 0 ? {} : { Headers: email.headers.map(headerOf) })
      }
    },
    ...(configurationSetName === undefined ? {} : { ConfigurationSetName: configurationSetName }),
    ...(tags.length === 0 ? {} : { EmailTags: tags })
  }
}
