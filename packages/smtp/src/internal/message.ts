// The bytes of one message from core's OutboundEmail, built by nodemailer's MailComposer as the outbox
// builds its .eml, then signed with DKIM when configured; and the envelope that goes with them.
import { randomUUID } from "node:crypto"
import { buffer } from "node:stream/consumers"
import { domainToASCII } from "node:url"
import { type EmailProvider, MailEvent } from "@mailroom/core"
import * as Adapter from "@mailroom/core/adapter"
import DKIM from "nodemailer/lib/dkim"
import MailComposer from "nodemailer/lib/mail-composer"

export interface DkimKey {
  readonly domainName: string
  readonly keySelector: string
  /** The PEM, already checked to be a usable RSA private key. */
  readonly privateKey: string
}

/** The headers nodemailer's DKIM signs by default (RFC 4871 section 5.5), which custom headers join. */
const signedByDefault =
  "From:Sender:Reply-To:Subject:Date:Message-ID:To:Cc:MIME-Version:Content-Type:Content-Transfer-Encoding:" +
  "Content-ID:Content-Description:Resent-Date:Resent-From:Resent-Sender:Resent-To:Resent-Cc:Resent-Message-ID:" +
  "In-Reply-To:References:List-Id:List-Help:List-Unsubscribe:List-Subscribe:List-Post:List-Owner:List-Archive"

/** The header each tag is written as, when tags are written: `X-Mailroom-Tag-{name}: {value}`. */
export const tagHeader = (name: string): string => `X-Mailroom-Tag-${name}`

export interface Composed {
  /** The message as it goes after DATA, signature included. */
  readonly raw: Buffer
  readonly envelope: { readonly from: string; readonly to: Array<string>; readonly size: number }
  /** The `Message-ID` header's value without its angle brackets. */
  readonly messageId: string
}

export interface ComposeOptions {
  readonly dkim: DkimKey | undefined
  readonly tagHeaders: boolean
  readonly date: Date
}

const domainOf = (address: string) => {
  const domain = address.slice(address.lastIndexOf("@") + 1)
  return domainToASCII(domain) || domain
}

const toBuffer = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)

/** Custom headers in order, then the tags; every one of them inside the DKIM signature. */
const extraHeaders = (email: EmailProvider.OutboundEmail, tagHeaders: boolean) => [
  ...(email.headers ?? []).map((header) => ({ key: header.name, value: header.value })),
  ...(tagHeaders ? (email.tags ?? []).map((tag) => ({ key: tagHeader(tag.name), value: tag.value })) : [])
]

const sign = async (key: DkimKey, unsigned: Buffer, headerNames: ReadonlyArray<string>): Promise<Buffer> => {
  const fieldNames = [signedByDefault, ...new Set(headerNames)].join(":")
  const signer = new DKIM({ ...key, headerFieldNames: fieldNames })
  return buffer(signer.sign(unsigned))
}

/** The message and its envelope: every recipient of To, Cc and Bcc once; Bcc appears in no header. */
export const compose = async (email: EmailProvider.OutboundEmail, options: ComposeOptions): Promise<Composed> => {
  const messageId = `${randomUUID()}@${domainOf(email.from.address)}`
  const headers = extraHeaders(email, options.tagHeaders)
  // The composer writes ASCII as it is, so text that reads as an encoded-word is encoded first.
  const node = new MailComposer({
    from:
      email.from.name === undefined || email.from.name === ""
        ? email.from.address
        : { name: Adapter.headerText(email.from.name), address: email.from.address },
    to: [...email.to],
    cc: [...email.cc],
    replyTo: [...email.replyTo],
    subject: Adapter.headerText(email.subject),
    messageId: `<${messageId}>`,
    date: options.date,
    ...(email.text === undefined ? {} : { text: email.text }),
    ...(email.html === undefined ? {} : { html: email.html }),
    attachments: email.attachments.map((attachment) => ({
      filename: Adapter.headerText(attachment.filename),
      contentType: attachment.contentType,
      content: toBuffer(attachment.content),
      ...(attachment.contentId === undefined
        ? {}
        : { cid: attachment.contentId, contentDisposition: "inline" as const })
    })),
    headers,
    // Everything the message holds is given inline; the composer must never read a path or a URL.
    disableFileAccess: true,
    disableUrlAccess: true
  }).compile()
  const unsigned = await node.build()
  const raw =
    options.dkim === undefined
      ? unsigned
      : await sign(
          options.dkim,
          unsigned,
          headers.map((header) => header.key)
        )
  return {
    raw,
    envelope: { from: email.from.address, to: [...MailEvent.recipientsOf(email)], size: raw.byteLength },
    messageId
  }
}
