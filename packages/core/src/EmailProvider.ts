// The sending interface: one normalised message in, the provider's message id out. Adapters (SES,
// Postmark, the local outbox) implement it; this module also holds the memory provider.
import { randomUUID } from "node:crypto"
import * as Clock from "effect/Clock"
import type * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import { type FailoverOptions, failover } from "./internal/failover.js"
import { publishAccepted } from "./internal/publish.js"
import * as MailEvent from "./MailEvent.js"
import { MailEvents } from "./MailEvents.js"
import { InvalidRequest, ProviderError } from "./ProviderError.js"
import * as Simulator from "./Simulator.js"

export {
  /** When a failover's provider stops being called after failures, and when it is tried again. */
  type CircuitOptions,
  /** Options of `failover`: the circuit each of its providers has. */
  type FailoverOptions,
  /**
   * One provider made of several, tried in order: the next has the message only when the current one
   * certainly did not take it (unreachable, throttled, paused, or skipped while its circuit is open),
   * never after an answer that may hide an accepted message, nor after a rejection of the message
   * itself. Its `limits` are the strictest of each. Scoped: its circuits live as long as the scope.
   */
  failover
} from "./internal/failover.js"

/** The `from` of a message: an address and a display name. */
export interface Sender {
  readonly address: string
  readonly name?: string
}

/** An attachment as a provider sends it: its bytes, name and type. */
export interface OutboundAttachment {
  readonly filename: string
  readonly contentType: string
  readonly content: Uint8Array
  /**
   * Set for an inline part that the HTML references as `cid:{contentId}`: it is sent with this
   * `Content-ID` and `Content-Disposition: inline`, not as a download.
   */
  readonly contentId?: string
}

/** A custom header, already checked by core: a name it does not own, a value without line breaks. */
export interface Header {
  readonly name: string
  readonly value: string
}

/** A tag of the message: ASCII letters, digits, `_` and `-` in both, at most 256 characters each. */
export interface Tag {
  readonly name: string
  readonly value: string
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
   * Custom headers, in order, written as given (`List-Unsubscribe` and `List-Unsubscribe-Post` among
   * them), inside the DKIM signature where the provider signs. Core refuses the headers it owns
   * (From, To, Subject, Message-ID, MIME-*, Content-*...) before a provider sees them.
   */
  readonly headers?: ReadonlyArray<Header>
  /** The caller's tags, passed to the vendor where it has them (SES `EmailTags`, Postmark `Tag` and `Metadata`). */
  readonly tags?: ReadonlyArray<Tag>
  /**
   * Name -> value pairs the provider carries with the message and hands back on each of its delivery
   * events (SES `EmailTags`, Postmark `Metadata`, the outbox's `X-Mailroom-*` headers), so an event finds
   * its way home without a database. Core's Mailer sets `MailEvent.organizationKey` to the sending
   * organisation. Names are letters, digits, `_` and `-` (at most 20); values are printable ASCII (at most 80).
   */
  readonly metadata?: Readonly<Record<string, string>>
  /**
   * The same for every attempt at this message, never the same for two messages: core's Mailer
   * derives it from the organisation and the caller's `Idempotency-Key` when one was sent, else from
   * the message's own id. A provider whose vendor de-duplicates sends by key (Resend's
   * `Idempotency-Key` header) passes it on, so the vendor too takes a retried attempt once. 1 to 256
   * visible ASCII characters.
   */
  readonly idempotencyKey?: string
}

/** What a provider accepts, so core can refuse a message with a clear 400 before calling the vendor. */
export interface Limits {
  /** to + cc + bcc. */
  readonly maxRecipients: number
  /** The whole message with its attachments base64-encoded. */
  readonly maxMessageBytes: number
  /** Lower-case, without the dot: `["exe", "bat"]`. */
  readonly forbiddenExtensions: ReadonlyArray<string>
  /** The most custom headers (`OutboundEmail.headers`) a message may carry. Default: no limit of the provider's own. */
  readonly maxCustomHeaders?: number
  /** The most caller's tags (`OutboundEmail.tags`, not core's metadata) a message may carry. Default: no limit of the provider's own. */
  readonly maxTags?: number
  /**
   * Custom header names the vendor writes itself and refuses from the caller, compared without case
   * (SES: `Reply-To`, `Return-Path`...). Default: none beyond those core owns.
   */
  readonly forbiddenHeaders?: ReadonlyArray<string>
  /**
   * What a send through the provider holds in memory per byte of its attachments while the provider
   * has it, those bytes included (at least 1): 1 for one that streams them out, about 2.4 for one that
   * composes the whole message in memory. Core's `attachmentBytesInFlight` budget counts each file as
   * its size times this. Default: the file's bytes and their base64, about 2.33.
   */
  readonly heldPerAttachmentByte?: number
}

/** What a provider answers for a message it accepted: its own id. */
export interface SendResult {
  readonly messageId: string
  /**
   * The provider that sent the message, when it is not the one called: a failover names the one of its
   * providers that took it, which the message log records. Default: the provider's own `name`.
   */
  readonly provider?: string
}

/** A vendor that sends mail: its name, its limits, `send` and `verify`. */
export interface EmailProvider {
  /** Short vendor name, used in logs and in ProviderError.provider. */
  readonly name: string
  readonly limits: Limits
  readonly send: (email: OutboundEmail) => Effect.Effect<SendResult, ProviderError>
  /**
   * True when two sends with one `idempotencyKey` make one message (Resend's `Idempotency-Key`; the
   * outbox, which writes one file per message id). A scheduled message whose instance stopped mid-send
   * is then sent again under its key; with any other provider it is left `unknown`. Default false.
   */
  readonly deduplicatesByKey?: boolean
  /**
   * Checks, sending nothing, that sends can work now: the credentials resolve, the vendor answers and
   * accepts them (as Nodemailer's `transporter.verify()`). Readiness probes and the server's start-up
   * call it. Optional: a provider without it is taken as ready.
   */
  readonly verify?: Effect.Effect<void, ProviderError>
  /** For a provider made of others (a failover): each of them, in order, so readiness can show each. */
  readonly members?: ReadonlyArray<EmailProvider>
}

export const EmailProvider: Context.Service<EmailProvider, EmailProvider> =
  Context.Service("@mailroom/core/EmailProvider")

// --- memory -------------------------------------------------------------------------------------

/** A message the memory provider took, with the id it answered. */
export interface SentEmail {
  readonly messageId: string
  readonly email: OutboundEmail
}

/** A memory provider, and the messages it accepted, in order. */
export interface MemoryEmailProvider extends EmailProvider {
  readonly sent: ReadonlyArray<SentEmail>
}

/** What the memory provider accepts by default: its `limits` unless `MemoryOptions.limits` says otherwise. */
export const memoryLimits: Limits = {
  maxRecipients: 50,
  maxMessageBytes: 10 * 1024 * 1024,
  forbiddenExtensions: ["exe", "bat", "cmd", "com", "scr", "vbs", "js", "jar", "msi"]
}

/** The memory provider's limits and where its events go. */
export interface MemoryOptions {
  readonly limits?: Limits
  /**
   * Where each recipient's events go: `delivered`, or what its simulator address acts out
   * (`Simulator`). Default: none; `layerMemory` uses `MailEvents` when provided.
   */
  readonly events?: MailEvents
  /** How long `delayed@simulator.mailroom.test` waits between `deferred` and `delivered`. Default 1 second. */
  readonly simulatedDelay?: Duration.Duration
}

/**
 * Accepts every message and keeps a copy of it, attachments' bytes included; refuses a simulator
 * address whose mailbox does not exist (`InvalidRequest`). Events for later (a `delayed@` delivery)
 * run in `scope` when given, as `layerMemory` gives its own.
 */
export const makeMemory = (options: MemoryOptions = {}, scope?: Scope.Scope): MemoryEmailProvider => {
  const sent: Array<SentEmail> = []
  return {
    name: "memory",
    limits: options.limits ?? memoryLimits,
    sent,
    send: (email) =>
      Effect.gen(function* () {
        const unknown = Simulator.unknownMailboxes(MailEvent.recipientsOf(email))
        if (unknown.length > 0) {
          return yield* new ProviderError({
            provider: "memory",
            reason: new InvalidRequest({ message: Simulator.unknownMailboxMessage(unknown) })
          })
        }
        // Mailroom's id when core gave one, so the record and the API answer name the same message.
        const messageId = email.metadata?.[MailEvent.messageKey] ?? randomUUID()
        // A deep copy: the record stays what was sent when the caller reuses its arrays or buffers.
        sent.push({ messageId, email: structuredClone(email) })
        if (options.events !== undefined) {
          const delay = options.simulatedDelay ?? Duration.seconds(1)
          const at = new Date(yield* Clock.currentTimeMillis)
          yield* publishAccepted(
            options.events,
            Simulator.accepted({ provider: "memory", messageId, email, at, delayMillis: Duration.toMillis(delay) }),
            { delay, scope }
          )
        }
        return { messageId }
      })
  }
}

/** The memory provider; its events go to `MailEvents` when that service is provided (as `Mailroom.layer` does). */
export const layerMemory = (
  options: { readonly limits?: Limits; readonly simulatedDelay?: Duration.Duration } = {}
): Layer.Layer<EmailProvider> =>
  Layer.effect(
    EmailProvider,
    Effect.gen(function* () {
      const events = yield* Effect.serviceOption(MailEvents)
      return makeMemory({ ...options, ...(Option.isSome(events) ? { events: events.value } : {}) }, yield* Effect.scope)
    })
  )

// --- failover -----------------------------------------------------------------------------------

/** A provider's layer in `layerFailover`, with the name the chain gives it (default: the provider's own). */
export type FailoverLayer<E, R> =
  | Layer.Layer<EmailProvider, E, R>
  | { readonly name: string; readonly layer: Layer.Layer<EmailProvider, E, R> }

/**
 * `failover` of the providers these layers give (`SmtpEmailProvider.layer(...)`,
 * `{ name: "smtp-backup", layer: ... }`), in order, each built once with the failover.
 */
export const layerFailover = <E, R>(
  providers: readonly [FailoverLayer<E, R>, ...Array<FailoverLayer<E, R>>],
  options: FailoverOptions = {}
): Layer.Layer<EmailProvider, E | Config.ConfigError, R> =>
  Layer.effect(
    EmailProvider,
    Effect.gen(function* () {
      const [first, ...rest] = yield* Effect.forEach(providers, (entry) => {
        const named = "layer" in entry ? entry : undefined
        return Effect.map(Layer.build(named?.layer ?? (entry as Layer.Layer<EmailProvider, E, R>)), (context) => {
          const provider = Context.get(context, EmailProvider)
          return named === undefined ? provider : { ...provider, name: named.name }
        })
      })
      return yield* failover([first as EmailProvider, ...rest], options)
    })
  )
