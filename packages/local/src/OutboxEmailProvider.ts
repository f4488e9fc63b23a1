// The embedded EmailProvider: every message becomes a real RFC 5322 file `{dir}/{message_id}.eml`
// instead of leaving the machine; it reports delivery events, and can act out a sandbox, a suppression
// list or a paused account.
import { mkdir } from "node:fs/promises"
import * as path from "node:path"
import { Readable } from "node:stream"
import { EmailProvider, MailEvent, MailEvents, MessageLog, ProviderError, Simulator } from "@mailroom/core"
import * as Adapter from "@mailroom/core/adapter"
import * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import type MailComposerClass from "nodemailer/lib/mail-composer"
import * as Errors from "./internal/errors.js"
import * as Headers from "./internal/headers.js"
import * as Check from "./internal/options.js"
import * as Storage from "./internal/storage.js"

/** A provider's sandbox, acted out: only verified recipients receive mail. */
export interface Sandbox {
  /** Acts out a provider account in its sandbox: only `verifiedRecipients` may receive mail. */
  readonly enabled: boolean
  /** Addresses that may receive mail while `enabled`, compared case-insensitively. */
  readonly verifiedRecipients: ReadonlyArray<string>
}

/** What `layerConfig` reads: where messages are written and the provider behaviour acted out. */
export interface ConfigOptions {
  /** Directory the messages are written to, created when needed: one `{dir}/{message_id}.eml` each. */
  readonly dir: string
  /** Default: disabled; every recipient receives mail. */
  readonly sandbox?: Sandbox
  /**
   * Acts out a provider's suppression list (SES's account-level list, Postmark's inactive recipients):
   * a message to these addresses is accepted, and each of them gets a `rejected` event instead of
   * `delivered`; a message to nobody else fails with `RecipientSuppressed`. Compared case-insensitively.
   * Default: none.
   */
  readonly suppressedRecipients?: ReadonlyArray<string>
  /** Acts out an account whose sending is paused: every send fails with `SendingPaused`. Default false. */
  readonly paused?: boolean
  /** What the outbox accepts. Default `limits`, the strictest of the supported vendors. */
  readonly limits?: EmailProvider.Limits
  /**
   * How long a `delayed@simulator.mailroom.test` recipient waits between its `deferred` event and its
   * `delivered` one: a duration Effect reads (`"5 seconds"`, or milliseconds). Default 1 second.
   */
  readonly simulatedDelay?: Duration.Input
}

/** What `make` and `layer` take: with a `MailEvents` to publish to, which `Config` cannot give. */
export interface Options extends ConfigOptions {
  /**
   * Where each accepted message's events go (`delivered`, `rejected`, and what a simulator address
   * acts out: see `Simulator`), once its file is written.
   * Default: none; `layer` uses core's `MailEvents` when it is provided (as `Mailroom.layer` does).
   */
  readonly events?: MailEvents.MailEvents
}

/**
 * The strictest of the vendors mailroom supports, so a message the outbox accepts is one SES and
 * Postmark accept too: 50 recipients (both), 10 MB after base64 (Postmark; SES takes 40 MB), 15
 * custom headers and none of those SES sets itself (SES), 8 tags (Postmark's 10 Metadata fields less
 * core's two), and every attachment extension either vendor refuses (Postmark's forbidden list and
 * SES's unsupported attachment types).
 */
export const limits: EmailProvider.Limits = {
  maxRecipients: 50,
  maxMessageBytes: 10_000_000,
  maxCustomHeaders: 15,
  maxTags: 8,
  forbiddenHeaders: Headers.forbiddenHeaders,
  forbiddenExtensions: [
    ...new Set([
      // Postmark
      ..."vbs exe bin bat chm com cpl crt hlp hta inf ins isp jse lnk mdb pcd pif reg scr sct shs vbe vba wsf wsh wsl msc msi msp mst".split(
        " "
      ),
      // SES
      ..."ade adp app asp bas bat cer chm cmd com cpl crt csh der exe fxp gadget hlp hta inf ins isp its js jse ksh lib lnk mad maf mag mam maq mar mas mat mau mav maw mda mdb mde mdt mdw mdz msc msh msh1 msh2 mshxml msh1xml msh2xml msi msp mst ops pcd pif plg prf prg reg scf scr sct shb shs sys ps1 ps1xml ps2 ps2xml psc1 psc2 tmp url vb vbe vbs vps vsmacros vss vst vsw vxd ws wsc wsf wsh xnk".split(
        " "
      )
    ])
  ].sort()
}

/** The header that names the organisation that sent a message (from `OutboundEmail.metadata`). */
export const organizationHeader = "X-Mailroom-Organization"

/**
 * The header that lists a message's blind copies, the outbox's own: never a `Bcc` header, which a
 * reader would take for one the recipients saw.
 */
export const bccHeader = "X-Mailroom-Bcc"

/** Each other metadata entry is written as `X-Mailroom-Metadata-{name}: {value}`. */
const metadataHeaders = (metadata: Readonly<Record<string, string>> | undefined) =>
  Object.entries(metadata ?? {}).map(([name, value]) => ({
    key: name === MailEvent.organizationKey ? organizationHeader : `X-Mailroom-Metadata-${name}`,
    value
  }))

/** Metadata that could not be a header: names of letters, digits, `_` and `-`, visible ASCII values. */
const badMetadata = (metadata: Readonly<Record<string, string>> | undefined) =>
  Object.entries(metadata ?? {}).filter(
    ([name, value]) => !/^[A-Za-z0-9_-]{1,20}$/.test(name) || !/^[\x20-\x7e]{0,80}$/.test(value)
  )

/** The `Message-ID` header of a message: `<{message_id}@outbox.mailroom>`. */
export const messageIdHeader = (messageId: string): string => `<${messageId}@outbox.mailroom>`

// nodemailer's composer is loaded with the first message, not when the server starts. A failed load
// (EMFILE while the process is short of file handles) is forgotten, so the next message tries again.
let composerModule: Promise<typeof MailComposerClass> | undefined
const mailComposer = () => {
  composerModule ??= import("nodemailer/lib/mail-composer").then(
    (module) => module.default,
    (error: unknown) => {
      composerModule = undefined
      throw error
    }
  )
  return composerModule
}

// A slice is a whole number of base64 lines (57 bytes make 76 characters), so the encoder carries no
// bytes over from one slice to the next.
const sliceBytes = 57 * 1024

/** A file's bytes as a stream of views into them: the composer then encodes a slice at a time. */
const sliced = (content: Uint8Array) =>
  Readable.from(
    (function* () {
      for (let at = 0; at < content.byteLength; at += sliceBytes) {
        yield Buffer.from(content.buffer, content.byteOffset + at, Math.min(sliceBytes, content.byteLength - at))
      }
    })(),
    { objectMode: false }
  )

class TooLarge extends Error {}

/** The chunks of `source`, failing with `TooLarge` at the first that takes them over `maxBytes`. */
async function* limited(source: AsyncIterable<Uint8Array>, maxBytes: number): AsyncGenerator<Uint8Array> {
  let bytes = 0
  for await (const chunk of source) {
    bytes += chunk.byteLength
    if (bytes > maxBytes) throw new TooLarge()
    yield chunk
  }
}

const fail = (reason: ProviderError.Reason) =>
  Effect.fail(new ProviderError.ProviderError({ provider: "outbox", reason }))

/**
 * Builds the provider. Fails with a `ConfigError` naming the option when `dir` is empty or a limit
 * is not a whole number above zero. The `Date` of each message and the time of its events come from
 * the `Clock` it is built with.
 */
export const make = (options: Options): Effect.Effect<EmailProvider.EmailProvider, Config.ConfigError> =>
  Effect.gen(function* () {
    const dir = yield* Check.directory("dir", options.dir)
    const accepted = options.limits ?? limits
    yield* Adapter.positiveInteger(["limits", "maxRecipients"], accepted.maxRecipients)
    yield* Adapter.positiveInteger(["limits", "maxMessageBytes"], accepted.maxMessageBytes)
    for (const limit of ["maxCustomHeaders", "maxTags"] as const) {
      const value = accepted[limit]
      if (value !== undefined) yield* Adapter.positiveInteger(["limits", limit], value)
    }
    const simulatedDelay = yield* Adapter.duration("simulatedDelay", options.simulatedDelay ?? "1 second")
    const clock = yield* Clock.Clock
    // Within a layer, `delayed@`'s later events end with it.
    const scope = Option.getOrUndefined(yield* Effect.serviceOption(Scope.Scope))
    return build(
      { ...options, dir: path.resolve(dir), limits: accepted },
      () => new Date(clock.currentTimeMillisUnsafe()),
      { delay: simulatedDelay, scope }
    )
  })

const build = (
  options: Options & { readonly limits: EmailProvider.Limits },
  now: () => Date,
  later: { readonly delay: Duration.Duration; readonly scope: Scope.Scope | undefined }
): EmailProvider.EmailProvider => {
  const { dir, limits } = options
  const forbidden = new Set(limits.forbiddenExtensions.map((e) => e.toLowerCase()))
  const sandbox = options.sandbox?.enabled === true ? options.sandbox : undefined
  const verified = new Set(sandbox?.verifiedRecipients.map((r) => r.toLowerCase()) ?? [])
  const suppressed = new Set(options.suppressedRecipients?.map((r) => r.toLowerCase()) ?? [])
  const isSuppressed = (recipient: string) => suppressed.has(recipient.toLowerCase())

  // The message as nodemailer composes it, streamed: each file is fed in slices of its bytes (never
  // copied), so the base64 and the message exist only a chunk at a time on their way to the disk.
  const compose = (
    MailComposer: typeof MailComposerClass,
    email: EmailProvider.OutboundEmail,
    messageId: string,
    date: Date
  ) => {
    const headers = [
      ...Headers.fieldsOf(email),
      ...metadataHeaders(email.metadata),
      ...(email.bcc.length === 0 ? [] : [{ key: bccHeader, value: email.bcc.join(", ") }])
    ]
    // The composer writes ASCII as it is, so text that reads as an encoded-word is encoded first.
    const composer = new MailComposer({
      from:
        email.from.name === undefined
          ? email.from.address
          : { name: Adapter.headerText(email.from.name), address: email.from.address },
      to: [...email.to],
      cc: [...email.cc],
      bcc: [...email.bcc],
      replyTo: [...email.replyTo],
      subject: Adapter.headerText(email.subject),
      messageId: messageIdHeader(messageId),
      date,
      ...(email.text === undefined ? {} : { text: email.text }),
      ...(email.html === undefined ? {} : { html: email.html }),
      attachments: email.attachments.map((a) => ({
        filename: Adapter.headerText(a.filename),
        contentType: a.contentType,
        content: sliced(a.content),
        // As the vendors send every file: base64, a download unless the HTML shows it by its cid. The
        // composer would write a message/* part raw (8bit) and inline, where its own boundary lines
        // and bare line ends would read as the outer message's.
        ...(a.contentId === undefined
          ? { contentDisposition: "attachment" as const }
          : { cid: a.contentId, contentDisposition: "inline" as const }),
        contentTransferEncoding: "base64"
      })),
      headers,
      normalizeHeaderKey: Headers.keepCase(headers),
      // Everything the message holds is given inline; the composer must never read a path or a URL.
      disableFileAccess: true,
      disableUrlAccess: true
    })
    // MailComposer leaves Bcc out of the headers: the blind copies are in X-Mailroom-Bcc.
    return composer.compile().createReadStream()
  }

  // The directory is made once; one removed later is made again when a write finds it missing.
  let dirReady: Promise<unknown> | undefined
  const ensureDir = (again = false) => {
    if (dirReady === undefined || again) dirReady = mkdir(dir, { recursive: true })
    return dirReady
  }

  // Composed straight into a temporary file, made durable, then renamed into place: a `.eml` is never
  // seen half-written, and one over the size limit is refused as it passes it, with nothing written.
  const write = (email: EmailProvider.OutboundEmail, messageId: string) =>
    Effect.tryPromise({
      try: async () => {
        const MailComposer = await mailComposer()
        const date = now()
        const target = path.join(dir, `${messageId}.eml`)
        const attempt = () =>
          Storage.writeStreamDurably(
            dir,
            target,
            limited(compose(MailComposer, email, messageId, date), limits.maxMessageBytes)
          )
        await ensureDir()
        try {
          await attempt()
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error
          await ensureDir(true)
          await attempt()
        }
      },
      catch: (error) =>
        error instanceof TooLarge
          ? new ProviderError.ProviderError({
              provider: "outbox",
              reason: new ProviderError.MessageTooLarge({
                message: `the message is over the limit of ${limits.maxMessageBytes} bytes`
              })
            })
          : Errors.toProviderError(error)
    })

  // The caller learns the code and that nothing was sent; whoever runs the server reads the cause.
  const logFailure = (what: string) => (error: ProviderError.ProviderError) =>
    Effect.logError(`[mailroom] outbox: a message could not be ${what} in ${dir}: ${String(error.cause)}`)

  /** Why the outbox refuses a message before writing it, as the vendors it acts out would; undefined when it does not. */
  const refusalOf = (email: EmailProvider.OutboundEmail): ProviderError.Reason | undefined => {
    if (options.paused === true) {
      return new ProviderError.SendingPaused({
        message: "sending is paused on this outbox (paused: true)",
        permanent: false
      })
    }
    const recipients = [...new Set([...email.to, ...email.cc, ...email.bcc])]
    const unknown = Simulator.unknownMailboxes(recipients)
    if (unknown.length > 0) {
      return new ProviderError.InvalidRequest({ message: Simulator.unknownMailboxMessage(unknown) })
    }
    if (sandbox !== undefined) {
      // As SES's mailbox simulator, the simulator's addresses need no verification.
      const unverified = recipients.filter((r) => !verified.has(r.toLowerCase()) && Simulator.parse(r) === undefined)
      if (unverified.length > 0) {
        return new ProviderError.RecipientNotVerified({
          message: `the outbox is in its sandbox and these recipients are not verified: ${unverified.join(", ")}`,
          recipients: unverified
        })
      }
    }
    if (recipients.every(isSuppressed)) {
      return new ProviderError.RecipientSuppressed({
        message: `every recipient is on the outbox's suppression list: ${recipients.join(", ")}`,
        recipients
      })
    }
    const notWritable = Headers.refusal(email, limits)
    if (notWritable !== undefined) return new ProviderError.InvalidRequest({ message: notWritable })
    if (badMetadata(email.metadata).length > 0) {
      return new ProviderError.InvalidRequest({
        message: `metadata names must be 1-20 letters, digits, "_" or "-", and values at most 80 visible ASCII characters: ${badMetadata(
          email.metadata
        )
          .map(([name]) => name)
          .join(", ")}`
      })
    }
    if (email.to.length + email.cc.length + email.bcc.length > limits.maxRecipients) {
      return new ProviderError.InvalidRequest({
        message: `a message may have at most ${limits.maxRecipients} recipients`
      })
    }
    const refused = email.attachments.filter((a) =>
      Adapter.attachmentExtensions(a.filename).some((extension) => forbidden.has(extension))
    )
    if (refused.length > 0) {
      return new ProviderError.InvalidRequest({
        message: `attachments of this type are not accepted: ${refused.map((a) => a.filename).join(", ")}`
      })
    }
    return undefined
  }

  const send = (email: EmailProvider.OutboundEmail) =>
    Effect.gen(function* () {
      const refused = refusalOf(email)
      if (refused !== undefined) return yield* fail(refused)
      // Mailroom's own id when core gave one (the file is then named as the API answered), else a new one.
      const messageId = email.metadata?.[MailEvent.messageKey] ?? MessageLog.makeId()
      yield* write(email, messageId).pipe(
        Effect.tapError((error) =>
          error.reason._tag === "MessageTooLarge" ? Effect.void : logFailure("written")(error)
        )
      )
      if (options.events !== undefined) {
        const acted = Simulator.accepted({
          provider: "outbox",
          messageId,
          email,
          at: now(),
          delayMillis: Duration.toMillis(later.delay),
          isRejected: isSuppressed
        })
        yield* Adapter.publishAccepted(options.events, acted, later)
      }
      return { messageId }
    })

  // One file per message id: a message sent again (a scheduled one recovered after a crash) replaces
  // its own file, as a vendor de-duplicating by key takes it once.
  return { name: "outbox", limits, send, deduplicatesByKey: true }
}

const withEvents = (options: Options) =>
  Effect.flatMap(Effect.serviceOption(MailEvents.MailEvents), (events) =>
    make(Option.isSome(events) && options.events === undefined ? { ...options, events: events.value } : options)
  )

/**
 * Provides core's `EmailProvider` (the server's `"provider": { "kind": "outbox", ... }`); its events go
 * to core's `MailEvents` when that service is provided.
 */
export const layer = (options: Options): Layer.Layer<EmailProvider.EmailProvider, Config.ConfigError> =>
  Layer.effect(EmailProvider.EmailProvider, withEvents(options))

/**
 * As `layer`, with the options read from `Config`, e.g.
 * `layerConfig({ dir: Config.String("OUTBOX_DIR"), paused: Config.Boolean("OUTBOX_PAUSED") })`.
 */
export const layerConfig = (
  config: Config.Wrap<ConfigOptions>
): Layer.Layer<EmailProvider.EmailProvider, Config.ConfigError> =>
  Layer.effect(EmailProvider.EmailProvider, Effect.flatMap(Config.unwrap(config), withEvents))
