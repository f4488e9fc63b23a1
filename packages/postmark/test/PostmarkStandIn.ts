// A local stand-in for Postmark's email API (`POST /email`) on 127.0.0.1: it checks what Postmark checks,
// answers as Postmark documents, and keeps every request so tests read back what Postmark would have got.
//
// Sources for the answers: postmarkapp.com/developer/api/overview (HTTP statuses, the ErrorCode table),
// the send-email API page (fields, 50 recipients, forbidden file types), support article 1056 (10 MB after
// base64, 5 MB for each body), and Postmark's messages as captured in public bug reports (400, 406, 412, the 401 token text).
// Where Postmark documents the code but not the wording, the wording here is the table's and says so.
import { randomUUID } from "node:crypto"
import type { ReceivedEmail } from "@mailroom/core/testing"
import { type Answer, type RecordedRequest, type StandInServer, startStandIn } from "@mailroom/test-support"
import { Context, Effect, Layer, type Scope } from "effect"

export interface StandInOptions {
  /** The server token it accepts. Default: a random one, readable as `standIn.token`. */
  readonly token?: string
  /** Domains with a verified signature (DKIM or Return-Path): any From on them is accepted. Default `["acme.example"]`. */
  readonly senderDomains?: ReadonlyArray<string>
  /** Addresses whose sender signature exists but is not confirmed (ErrorCode 401). */
  readonly unconfirmedSenders?: ReadonlyArray<string>
  /** Addresses on the stream's suppression list (ErrorCode 406). */
  readonly inactiveRecipients?: ReadonlyArray<string>
  /** `"pending"`: recipients only on the From domain (412). `"not-approved"`: may not send (413). Default `"approved"`. */
  readonly account?: "approved" | "pending" | "not-approved"
  /** The server's message streams. Default `["outbound"]`. */
  readonly streams?: ReadonlyArray<string>
}

export type { RecordedRequest, StandInFault as Fault } from "@mailroom/test-support"

/** A message Postmark accepted: the JSON fields as received, and the MessageID it answered. */
export interface AcceptedMessage {
  readonly messageId: string
  readonly fields: Readonly<Record<string, unknown>>
}

/** The server (`host` is for the client's `requestHost`, with `useHttps: false`) and what Postmark took. */
export interface StandIn extends StandInServer {
  readonly token: string
  readonly accepted: ReadonlyArray<AcceptedMessage>
  /** The message accepted under `messageId`, as its recipients would see it; throws when there is none. */
  readonly received: (messageId: string) => ReceivedEmail
}

/** Postmark's documented forbidden attachment extensions. */
export const forbiddenExtensions = new Set(
  "vbs exe bin bat chm com cpl crt hlp hta inf ins isp jse lnk mdb pcd pif reg scr sct shs vbe vba wsf wsh wsl msc msi msp mst".split(
    " "
  )
)

/**
 * "10 MB" for the whole request: Postmark does not say which megabyte, so the stand-in refuses only what
 * Postmark certainly refuses (over 10 MiB), while the adapter declares the stricter 10,000,000 bytes.
 */
export const maxRequestBytes = 10 * 1024 * 1024
/** "TextBody and HtmlBody can each be up to 5 MB": the stand-in refuses only what is certainly over. */
export const maxBodyBytes = 5 * 1024 * 1024

const rejected = (ErrorCode: number, Message: string): Answer => ({ status: 422, body: { ErrorCode, Message } })

// --- addresses ------------------------------------------------------------------------------------

interface Mailbox {
  readonly address: string
  readonly name?: string
}

const addrSpec = /^[^\s@<>",;()[\]\\]+@[^\s@<>",;()[\]\\]+\.[^\s@<>",;()[\]\\]+$/u

/** RFC 2047 encoded-words back to text; the space between two adjacent words is not part of the text. */
const decodeWords = (text: string): string =>
  text
    .replace(/(\?=)\s+(=\?)/g, "$1$2")
    .replace(/=\?([^?]+)\?([BbQq])\?([^?]*)\?=/g, (_, _charset: string, encoding: string, data: string) =>
      encoding.toUpperCase() === "B"
        ? Buffer.from(data, "base64").toString("utf8")
        : Buffer.from(
            data
              .replace(/_/g, " ")
              .replace(/=([0-9A-Fa-f]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16))),
            "latin1"
          ).toString("utf8")
    )

class ParseError extends Error {}

/** Splits an address list on the commas outside quoted names and angle brackets. */
const splitList = (value: string): Array<string> => {
  const parts: Array<string> = []
  let current = ""
  let quoted = false
  let angle = false
  for (const char of value) {
    if (char === '"' && !angle) quoted = !quoted
    else if (char === "<" && !quoted) angle = true
    else if (char === ">" && !quoted) angle = false
    if (char === "," && !quoted && !angle) {
      parts.push(current)
      current = ""
    } else current += char
  }
  if (quoted) throw new ParseError("Unclosed quoted string")
  parts.push(current)
  return parts
}

/** `address`, `Name <address>` or `"Name" <address>`; undefined when it is not a mailbox. */
const parseMailbox = (raw: string): Mailbox | undefined => {
  const text = raw.trim()
  const named = /^(.*?)\s*<([^<>]+)>$/su.exec(text)
  if (named === null) return addrSpec.test(text) ? { address: text } : undefined
  const [, phrase = "", address = ""] = named
  if (!addrSpec.test(address)) return undefined
  if (phrase.startsWith('"')) {
    // Postmark's parser does not read quoted-pairs: a backslash inside a quoted name is refused
    // (reported as "Unclosed quoted string" in postmark-gem#95 and PostmarkBundle#22).
    if (!phrase.endsWith('"') || phrase.length < 2 || /[\\]/.test(phrase) || phrase.slice(1, -1).includes('"')) {
      throw new ParseError("Unclosed quoted string")
    }
    return { address, name: phrase.slice(1, -1) }
  }
  return phrase === "" ? { address } : { address, name: decodeWords(phrase) }
}

/** A field's mailboxes, or Postmark's ErrorCode 300 answer naming the field. */
const mailboxes = (field: string, value: unknown): Array<Mailbox> | Answer => {
  const raw = typeof value === "string" ? value : ""
  try {
    const list = splitList(raw).map(parseMailbox)
    if (raw.trim() === "" || list.some((m) => m === undefined)) {
      return rejected(300, `Invalid '${field}' address: '${raw}'.`)
    }
    return list as Array<Mailbox>
  } catch (error) {
    if (error instanceof ParseError) return rejected(300, `Error parsing '${field}': ${error.message}.`)
    throw error
  }
}

const isAnswer = (u: unknown): u is Answer => typeof u === "object" && u !== null && "status" in u
const domainOf = (address: string) => address.slice(address.lastIndexOf("@") + 1).toLowerCase()
const optional = (fields: Record<string, unknown>, key: string) => fields[key] !== undefined && fields[key] !== null

/**
 * Postmark's Metadata rules: string values, at most 10 fields, names of at most 20 characters and
 * values of at most 80 (its message for those is the one Postmark answers, as quoted in
 * dittofeed/dittofeed#1759; the wording for too many fields and for names equal without case, which
 * its custom metadata FAQ forbids, is not documented and is the stand-in's).
 */
const metadataRefusal = (metadata: unknown): Answer | undefined => {
  if (metadata === undefined || metadata === null) return undefined
  if (typeof metadata !== "object" || Array.isArray(metadata)) {
    return rejected(403, "Invalid request field(s): 'Metadata'.")
  }
  const entries = Object.entries(metadata)
  if (entries.some(([, value]) => typeof value !== "string"))
    return rejected(403, "Invalid request field(s): 'Metadata'.")
  const tooLong = entries.find(([name, value]) => name.length > 20 || (value as string).length > 80)
  if (tooLong !== undefined) {
    return rejected(
      300,
      `Invalid metadata content. Field names are limited to 20 characters and field values are limited to 80 characters in length. The '${tooLong[0]}' field in your metadata content exceeds these limits.`
    )
  }
  if (entries.length > 10)
    return rejected(300, "Invalid metadata content. A message may have at most 10 metadata fields.")
  if (new Set(entries.map(([name]) => name.toLowerCase())).size < entries.length) {
    return rejected(300, "Invalid metadata content. Duplicate metadata field names are not allowed.")
  }
  return undefined
}

// --- the API ---------------------------------------------------------------------------------------

const answerTo = (
  options: Required<StandInOptions>,
  request: RecordedRequest,
  accept: (fields: Record<string, unknown>) => string
): Answer => {
  const getServer = request.method === "GET" && request.path === "/server"
  if (!getServer && (request.method !== "POST" || request.path !== "/email")) return { status: 404 }
  if (request.headers["x-postmark-server-token"] !== options.token) {
    return {
      status: 401,
      body: {
        ErrorCode: 10,
        Message:
          "The Server Token you provided in the X-Postmark-Server-Token request header was invalid. Please verify that you are using a valid token."
      }
    }
  }
  // Server API, "Get the server": the server's settings (a few of its documented fields).
  if (getServer) {
    return {
      status: 200,
      body: {
        ID: 1,
        Name: "mailroom stand-in",
        ServerLink: "https://account.postmarkapp.com/servers/1/streams",
        Color: "blue",
        DeliveryType: "Live"
      }
    }
  }
  // "HTTP error 415: Unsupported Media Type. Check that the documented request headers are being passed
  // (Content-Type and Accept)" — Postmark's API validation notice of November 2023. Body undocumented.
  const contentType = request.headers["content-type"]?.split(";")[0]?.trim().toLowerCase()
  if (contentType !== "application/json" || !request.headers.accept?.toLowerCase().includes("application/json")) {
    return { status: 415 }
  }
  // The 413 body is not documented either.
  if (request.body === undefined) return { status: 413 }

  let fields: Record<string, unknown>
  try {
    const parsed: unknown = JSON.parse(request.body)
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error("not an object")
    fields = parsed as Record<string, unknown>
  } catch {
    return rejected(402, "Invalid JSON.")
  }

  for (const key of ["From", "To", "Cc", "Bcc", "ReplyTo", "Subject", "HtmlBody", "TextBody", "MessageStream"]) {
    if (optional(fields, key) && typeof fields[key] !== "string") {
      return rejected(403, `Invalid request field(s): '${key}'.`)
    }
  }
  // Required as a string here: mailroom always sends one, and an absent subject would be a bug.
  if (typeof fields.Subject !== "string") return rejected(403, "Invalid request field(s): 'Subject'.")
  const attachments = fields.Attachments ?? []
  const validAttachment = (a: unknown) => {
    const { Name, Content, ContentType } = (a ?? {}) as Record<string, unknown>
    return (
      typeof Name === "string" &&
      typeof ContentType === "string" &&
      typeof Content === "string" &&
      // Canonical base64 only: what decodes and encodes back to the same text.
      Buffer.from(Content, "base64").toString("base64") === Content
    )
  }
  if (!Array.isArray(attachments) || !attachments.every(validAttachment)) {
    return rejected(403, "Invalid request field(s): 'Attachments'.")
  }
  const headers = fields.Headers ?? []
  const validHeader = (h: unknown) => {
    const { Name, Value } = (h ?? {}) as Record<string, unknown>
    return typeof Name === "string" && Name !== "" && typeof Value === "string"
  }
  if (!Array.isArray(headers) || !headers.every(validHeader)) {
    return rejected(403, "Invalid request field(s): 'Headers'.")
  }
  if (optional(fields, "Tag") && typeof fields.Tag !== "string")
    return rejected(403, "Invalid request field(s): 'Tag'.")
  const metadataProblem = metadataRefusal(fields.Metadata)
  if (metadataProblem !== undefined) return metadataProblem

  // ErrorCode 300, "Invalid email request": addresses, recipients and bodies.
  const from = mailboxes("From", fields.From)
  if (isAnswer(from)) return from
  if (from.length !== 1) return rejected(300, `Invalid 'From' address: '${String(fields.From)}'.`)
  const lists: Record<string, Array<Mailbox>> = {}
  for (const field of ["To", "Cc", "Bcc", "ReplyTo"]) {
    if (field !== "To" && !optional(fields, field)) {
      lists[field] = []
      continue
    }
    const parsed = mailboxes(field, fields[field])
    if (isAnswer(parsed)) return parsed
    lists[field] = parsed
  }
  const recipients = [...(lists.To ?? []), ...(lists.Cc ?? []), ...(lists.Bcc ?? [])].map((m) => m.address)
  if (recipients.length > 50) {
    // Postmark files this under ErrorCode 300; its exact wording is not documented.
    return rejected(300, "You may not send to more than 50 recipients (To, Cc and Bcc together).")
  }
  if (!optional(fields, "HtmlBody") && !optional(fields, "TextBody")) {
    return rejected(300, "Provide either email TextBody or HtmlBody or both.")
  }
  // Article 1056: each body "up to 5 MB ... rejected" past it; the answer is undocumented (300 here).
  const overlong = ["HtmlBody", "TextBody"].find(
    (f) => Buffer.byteLength(String(fields[f] ?? ""), "utf8") > maxBodyBytes
  )
  if (overlong !== undefined) return rejected(300, `${overlong} can be up to 5 MB.`)
  for (const attachment of attachments as Array<{ Name: string }>) {
    const dot = attachment.Name.lastIndexOf(".")
    if (dot >= 0 && forbiddenExtensions.has(attachment.Name.slice(dot + 1).toLowerCase())) {
      return rejected(411, "Attachment file type not allowed.")
    }
  }
  const stream = typeof fields.MessageStream === "string" ? fields.MessageStream : "outbound"
  if (!options.streams.includes(stream)) {
    return rejected(1235, `The stream provided: '${stream}' does not exist on this server.`)
  }

  // The account and the sender.
  if (options.account === "not-approved") return rejected(413, "This account is not approved to send email.")
  const sender = from[0] as Mailbox
  if (options.unconfirmedSenders.some((address) => address.toLowerCase() === sender.address.toLowerCase())) {
    return rejected(401, "Sender signature not confirmed.")
  }
  if (!options.senderDomains.includes(domainOf(sender.address))) {
    return rejected(
      400,
      `The 'From' address you supplied (${String(fields.From)}) is not a Sender Signature on your account. Please add and confirm this address in order to be able to use it in the 'From' field of your messages.`
    )
  }
  if (options.account === "pending") {
    const own = domainOf(sender.address)
    const others = [...new Set(recipients.map(domainOf).filter((domain) => domain !== own))]
    if (others.length > 0) {
      return rejected(
        412,
        `While your account is pending approval, all recipient addresses must share the same domain as the 'From' address. The domain of the 'From' address is '${own}', but you are attempting to send email to the following domain(s): ${others.map((d) => `'${d}'`).join(", ")}.`
      )
    }
  }
  const inactive = recipients.filter((address) =>
    options.inactiveRecipients.some((suppressed) => suppressed.toLowerCase() === address.toLowerCase())
  )
  if (inactive.length > 0) {
    return rejected(
      406,
      `You tried to send to recipient(s) that have been marked as inactive. Found inactive addresses: ${inactive.join(", ")}. Inactive recipients are ones that have generated a hard bounce, a spam complaint, or a manual suppression.`
    )
  }

  const messageId = accept(fields)
  return {
    status: 200,
    body: { To: fields.To, SubmittedAt: new Date().toISOString(), MessageID: messageId, ErrorCode: 0, Message: "OK" }
  }
}

const toReceived = (fields: Readonly<Record<string, unknown>>): ReceivedEmail => {
  const list = (field: string): Array<Mailbox> => {
    if (typeof fields[field] !== "string") return []
    const parsed = mailboxes(field, fields[field])
    if (isAnswer(parsed)) throw new Error(`the stand-in accepted an invalid ${field}`)
    return parsed
  }
  const from = list("From")[0]
  if (from === undefined) throw new Error("the stand-in accepted a message without From")
  const text = (field: string) => (typeof fields[field] === "string" ? (fields[field] as string) : undefined)
  const attachments = (fields.Attachments ?? []) as Array<{
    Name: string
    Content: string
    ContentType: string
    ContentID?: string | null
  }>
  const headers = (fields.Headers ?? []) as Array<{ Name: string; Value: string }>
  const metadata = (fields.Metadata ?? {}) as Record<string, string>
  return {
    from: from.name === undefined ? { address: from.address } : { address: from.address, name: from.name },
    to: list("To").map((m) => m.address),
    cc: list("Cc").map((m) => m.address),
    bcc: list("Bcc").map((m) => m.address),
    replyTo: list("ReplyTo").map((m) => m.address),
    // Postmark writes an ASCII Subject and file name as they are; a recipient's parser decodes them.
    subject: decodeWords(fields.Subject as string),
    text: text("TextBody"),
    html: text("HtmlBody"),
    attachments: attachments.map((a) => ({
      filename: decodeWords(a.Name),
      contentType: a.ContentType,
      content: new Uint8Array(Buffer.from(a.Content, "base64")),
      // Postmark writes a part with a ContentID inline, its Content-ID the id without "cid:".
      ...(typeof a.ContentID === "string" && a.ContentID !== ""
        ? { contentId: a.ContentID.replace(/^cid:/i, ""), disposition: "inline" as const }
        : { disposition: "attachment" as const })
    })),
    // Postmark writes the message itself: there are no bytes of it to read here.
    headers: headers.map((h) => ({ name: h.Name, value: decodeWords(h.Value) })),
    // Postmark keeps the caller's tags, and core's metadata, as Metadata, and hands it back on every webhook.
    tags: Object.entries(metadata).map(([name, value]) => ({ name, value })),
    metadata
  }
}

/** Starts a stand-in on 127.0.0.1 with a free port. */
export const start = async (options: StandInOptions = {}): Promise<StandIn> => {
  const settings: Required<StandInOptions> = {
    token: options.token ?? `pm-server-token-${randomUUID()}`,
    senderDomains: options.senderDomains ?? ["acme.example"],
    unconfirmedSenders: options.unconfirmedSenders ?? [],
    inactiveRecipients: options.inactiveRecipients ?? [],
    account: options.account ?? "approved",
    streams: options.streams ?? ["outbound"]
  }
  const accepted: Array<AcceptedMessage> = []
  const server = await startStandIn({
    name: "PostmarkStandIn",
    maxRequestBytes,
    answer: (record) =>
      answerTo(settings, record, (fields) => {
        const messageId = randomUUID()
        accepted.push({ messageId, fields })
        return messageId
      }),
    headers: (answer) => {
      const errorCode = (answer.body as { ErrorCode?: unknown } | undefined)?.ErrorCode
      return typeof errorCode === "number" && errorCode !== 0 ? { "x-pm-apierrorcode": String(errorCode) } : {}
    }
  })
  return {
    ...server,
    token: settings.token,
    accepted,
    received: (messageId) => {
      const message = accepted.find((m) => m.messageId === messageId)
      if (message === undefined) throw new Error(`the stand-in accepted no message ${messageId}`)
      return toReceived(message.fields)
    }
  }
}

/** A stand-in closed when the scope closes. */
export const make = (options: StandInOptions = {}): Effect.Effect<StandIn, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.promise(() => start(options)),
    (standIn) => Effect.promise(() => standIn.close())
  )

export class PostmarkStandIn extends Context.Service<PostmarkStandIn, StandIn>()("test/PostmarkStandIn") {
  static readonly layer = (options: StandInOptions = {}): Layer.Layer<PostmarkStandIn> =>
    Layer.effect(PostmarkStandIn, make(options))
}
