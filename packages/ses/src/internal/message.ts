// Turns core's OutboundEmail into the SES v2 SendEmail request: Simple content with attachments, a
// From header SES accepts (7-bit ASCII, RFC 2047 display name), punycoded domains and UTF-8 parts.
import { domainToASCII } from "node:url"
import type { Attachment, SendEmailCommandInput } from "@aws-sdk/client-sesv2"
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
  ContentDisposition: "ATTACHMENT",
  // SES's default is SEVEN_BIT, which would mangle binary files.
  ContentTransferEncoding: "BASE64"
})

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
        ...(email.attachments.length === 0 ? {} : { Attachments: email.attachments.map(attachmentOf) })
      }
    },
    ...(configurationSetName === undefined ? {} : { ConfigurationSetName: configurationSetName }),
    // SES returns them in each event's `mail.tags`, which is how an event finds its organisation.
    ...(email.metadata === undefined || Object.keys(email.metadata).length === 0
      ? {}
      : { EmailTags: Object.entries(email.metadata).map(([Name, Value]) => ({ Name, Value })) })
  }
}
