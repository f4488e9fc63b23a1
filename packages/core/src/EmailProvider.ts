// The sending interface: one normalised message in, the provider's message id out. Adapters (SES,
// Postmark, the local outbox) implement it; this module also holds the memory provider.
import { randomUUID } from "node:crypto"
import { Context, Effect, Layer, Option } from "effect"
import * as MailEvent from "./MailEvent.js"
import { MailEvents } from "./MailEvents.js"
import type { ProviderError } from "./ProviderError.js"

export interface Sender {
  readonly address: string
  readonly name?: string
}

export interface OutboundAttachment {
  readonly filename: string
  readonly contentType: string
  readonly content: Uint8Array
}

/** A message ready to send: addresses validated, attachments loaded. */
export interface OutboundEmail {
  readonly from: Sender
  readonly to: ReadonlyArray<string>
  readonly cc: ReadonlyArray<string>
  readonly bcc: ReadonlyArray<string>
  readonly replyTo: ReadonlyArray<string>
  readonly subject: string
  readonly html?: string
  readonly text?: string
  readonly attachments: ReadonlyArray<OutboundAttachment>
  /**
   * Name -> value pairs the provider carries with the message and hands back on each of its delivery
   * events (SES `EmailTags`, Postmark `Metadata`, the outbox's `X-Mailroom-*` headers), so an event finds
   * its way home without a database. Core's Mailer sets `MailEvent.organizationKey` to the sending
   * organisation. Names are letters, digits, `_` and `-` (at most 20); values are printable ASCII (at most 80).
   */
  readonly metadata?: Readonly<Record<string, string>>
}

/** What a provider accepts, so core can refuse a message with a clear 400 before calling the vendor. */
export interface Limits {
  /** to + cc + bcc. */
  readonly maxRecipients: number
  /** The whole message with its attachments base64-encoded. */
  readonly maxMessageBytes: number
  /** Lower-case, without the dot: `["exe", "bat"]`. */
  readonly forbiddenExtensions: ReadonlyArray<string>
}

/**
 * The extension a recipient's system will see, lower-case and without the dot: `"exe"` for
 * `"Setup.EXE"`, and for `"setup.exe."` or `"setup.exe "` too, since Windows drops trailing dots and
 * spaces. What `Limits.forbiddenExtensions` is checked against.
 */
export const attachmentExtension = (filename: string): string => {
  const name = filename.normalize("NFC").replace(/[.\s]+$/u, "")
  const dot = name.lastIndexOf(".")
  return dot >= 0 ? name.slice(dot + 1).toLowerCase() : ""
}

// What MIME parsers (mailparser's libmime among them) decode as an RFC 2047 encoded-word, in a
// header or, as many mail clients do, in a file name parameter.
const encodedWordLike = /=\?[^?]+\?[BbQq]\?[^?]*\?=/

// "=?UTF-8?B?" and "?=" leave 63 of the 75 characters RFC 2047 allows to base64, which holds 45 bytes.
const maxBytesPerWord = 45

/**
 * Header text (a subject, a display name, a file name) that a recipient's parser must read back
 * exactly: unchanged, unless some of it would be decoded as an encoded-word (`=?utf-8?q?x?=` shows
 * as `x`), in which case all of it is written as UTF-8 encoded-words, which decode to the original.
 * Adapters that write text the vendor does not encode itself call this on each such value.
 */
export const headerText = (text: string): string => (encodedWordLike.test(text) ? encodedWords(text) : text)

/** RFC 2047 base64 encoded-words, at most 75 characters each, never splitting a character. */
export const encodedWords = (text: string): string => {
  const words: Array<string> = []
  let word = ""
  let bytes = 0
  for (const character of text) {
    const size = Buffer.byteLength(character, "utf8")
    if (bytes + size > maxBytesPerWord && word !== "") {
      words.push(word)
      word = ""
      bytes = 0
    }
    word += character
    bytes += size
  }
  if (word !== "") words.push(word)
  return words.map((w) => `=?UTF-8?B?${Buffer.from(w, "utf8").toString("base64")}?=`).join(" ")
}

export interface SendResult {
  readonly messageId: string
}

export interface EmailProvider {
  /** Short vendor name, used in logs and in ProviderError.provider. */
  readonly name: string
  readonly limits: Limits
  readonly send: (email: OutboundEmail) => Effect.Effect<SendResult, ProviderError>
}

export const EmailProvider: Context.Service<EmailProvider, EmailProvider> =
  Context.Service("@mailroom/core/EmailProvider")

// --- memory -------------------------------------------------------------------------------------

export interface SentEmail {
  readonly messageId: string
  readonly email: OutboundEmail
}

/** A memory provider, and the messages it accepted, in order. */
export interface MemoryEmailProvider extends EmailProvider {
  readonly sent: ReadonlyArray<SentEmail>
}

export const defaultMemoryLimits: Limits = {
  maxRecipients: 50,
  maxMessageBytes: 10 * 1024 * 1024,
  forbiddenExtensions: ["exe", "bat", "cmd", "com", "scr", "vbs", "js", "jar", "msi"]
}

export interface MemoryOptions {
  readonly limits?: Limits
  /** Where the `delivered` event of each recipient goes. Default: none; `layerMemory` uses `MailEvents` when provided. */
  readonly events?: MailEvents
}

/** Accepts every message and keeps a copy of it, attachments' bytes included. */
export const makeMemory = (options: MemoryOptions = {}): MemoryEmailProvider => {
  const sent: Array<SentEmail> = []
  return {
    name: "memory",
    limits: options.limits ?? defaultMemoryLimits,
    sent,
    send: (email) =>
      Effect.gen(function* () {
        const messageId = randomUUID()
        // A deep copy: the record stays what was sent when the caller reuses its arrays or buffers.
        sent.push({ messageId, email: structuredClone(email) })
        if (options.events !== undefined) {
          yield* publishAccepted(
            options.events,
            MailEvent.accepted({ provider: "memory", messageId, email, at: new Date() })
          )
        }
        return { messageId }
      })
  }
}

/**
 * Publishes the events of a message a local provider accepted. The message is sent whatever happens
 * to its events, so a failure to queue them is logged, not returned.
 */
export const publishAccepted = (events: MailEvents, accepted: ReadonlyArray<MailEvent.Unrouted>): Effect.Effect<void> =>
  events.publish(accepted).pipe(
    Effect.catchTag("MailEventsError", (error) =>
      Effect.logError(`[mailroom] the events of message ${accepted[0]?.message_id} were lost: ${error.message}`)
    ),
    Effect.asVoid
  )

/** The memory provider; its events go to `MailEvents` when that service is provided (as `Mailroom.layer` does). */
export const layerMemory = (options: { readonly limits?: Limits } = {}): Layer.Layer<EmailProvider> =>
  Layer.effect(
    EmailProvider,
    Effect.map(Effect.serviceOption(MailEvents), (events) =>
      makeMemory({ ...options, ...(Option.isSome(events) ? { events: events.value } : {}) })
    )
  )
