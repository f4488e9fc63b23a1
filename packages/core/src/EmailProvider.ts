// The sending interface: one normalised message in, the provider's message id out. Adapters (SES,
// Postmark, the local outbox) implement it; this module also holds the memory provider.
import { randomUUID } from "node:crypto"
import { Context, Effect, Layer } from "effect"
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

/** Accepts every message and keeps it, with a copy of every attachment's bytes. */
export const makeMemory = (options: { readonly limits?: Limits } = {}): MemoryEmailProvider => {
  const sent: Array<SentEmail> = []
  return {
    name: "memory",
    limits: options.limits ?? defaultMemoryLimits,
    sent,
    send: (email) =>
      Effect.sync(() => {
        const messageId = randomUUID()
        sent.push({
          messageId,
          email: { ...email, attachments: email.attachments.map((a) => ({ ...a, content: a.content.slice() })) }
        })
        return { messageId }
      })
  }
}

export const layerMemory = (options: { readonly limits?: Limits } = {}): Layer.Layer<EmailProvider> =>
  Layer.sync(EmailProvider, () => makeMemory(options))
