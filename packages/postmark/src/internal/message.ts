// Builds the JSON body of Postmark's `POST /email` from core's normalised message: the sender with its
// display name, comma-separated recipient lists, the bodies, and base64 attachments.
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

const base64 = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64")

export const toPostmarkMessage = (email: EmailProvider.OutboundEmail, messageStream: string): Message => ({
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
  // Postmark returns it in every webhook's `Metadata`, which is how an event finds its organisation.
  ...(email.metadata !== undefined && Object.keys(email.metadata).length > 0
    ? { Metadata: { ...email.metadata } }
    : {}),
  ...(email.attachments.length > 0
    ? {
        Attachments: email.attachments.map((attachment) => ({
          Name: Adapter.headerText(attachment.filename),
          Content: base64(attachment.content),
          ContentType: attachment.contentType,
          ContentID: null
        }))
      }
    : {})
})
