// The embedded EmailProvider: every message becomes a real RFC 5322 file `{dir}/{message_id}.eml`
// instead of leaving the machine; it reports delivery events, and can act out a sandbox, a suppression
// list or a paused account.
import { mkdir, rm } from "node:fs/promises"
import * as path from "node:path"
import { EmailProvider, MailEvent, MailEvents, MessageLog, ProviderError } from "@mailroom/core"
import * as Adapter from "@mailroom/core/adapter"
import { Clock, Config, Effect, Layer, Option } from "effect"
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
  /** Directory the messages are written to, created when needed: `{dir}/{message_id}.eml` and `{dir}/{message_id}.json`. */
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
}

/** What `make` and `layer` take: with a `MailEvents` to publish to, which `Config` cannot give. */
export interface Options extends ConfigOptions {
  /**
   * Where each accepted message's events go (`delivered`, `rejected`), once its file is written.
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

/** What `{dir}/{message_id}.json` holds beside the message: who it went to, blind copies included. */
export interface Sidecar {
  readonly messageId: string
  readonly envelope: { readonly from: string; readonly to: ReadonlyArray<string> }
  readonly bcc: ReadonlyArray<string>
  /** The message's tags exactly as sent (the `X-Mailroom-Tag-*` headers name them without case). */
  readonly tags: ReadonlyArray<EmailProvider.Tag>
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
    const clock = yield* Clock.Clock
    return build(
      { ...options, dir: path.resolve(dir), limits: accepted },
      () => new Date(clock.currentTimeMillisUnsafe())
    )
  })

const build = (
  options: Options & { readonly limits: EmailProvider.Limits },
  now: () => Date
): EmailProvider.EmailProvider => {
  const { dir, limits } = options
  const forbidden = new Set(limits.forbiddenExtensions.map((e) => e.toLowerCase()))
  const sandbox = options.sandbox?.enabled === true ? options.sandbox : undefined
  const verified = new Set(sandbox?.verifiedRecipients.map((r) => r.toLowerCase()) ?? [])
  const suppressed = new Set(options.suppressedRecipients?.map((r) => r.toLowerCase()) ?? [])
  const isSuppressed = (recipient: string) => suppressed.has(recipient.toLowerCase())

  const render = (email: EmailProvider.OutboundEmail, messageId: string) =>
    Effect.tryPromise({
      try: async (): Promise<{ readonly raw: Uint8Array; readonly sidecar: Sidecar }> => {
        const MailComposer = await mailComposer()
        const headers = [...Headers.fieldsOf(email), ...metadataHeaders(email.metadata)]
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
          date: now(),
          ...(email.text === undefined ? {} : { text: email.text }),
          ...(email.html === undefined ? {} : { html: email.html }),
          attachments: email.attachments.map((a) => ({
            filename: Adapter.headerText(a.filename),
            contentType: a.contentType,
            content: Buffer.from(a.content.buffer, a.content.byteOffset, a.content.byteLength),
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
        const node = composer.compile()
        // MailComposer leaves Bcc out of the headers; the envelope still names every recipient.
        const envelope = node.getEnvelope()
        return {
          raw: await node.build(),
          sidecar: {
            messageId,
            envelope: { from: typeof envelope.from === "string" ? envelope.from : "", to: envelope.to },
            bcc: [...email.bcc],
            tags: (email.tags ?? []).map(({ name, value }) => ({ name, value }))
          }
        }
      },
      catch: Errors.toProviderError
    })

  // The directory is made once; one removed later is made again when a write finds it missing.
  let dirReady: Promise<unknown> | undefined
  const ensureDir = (again = false) => {
    if (dirReady === undefined || again) dirReady = mkdir(dir, { recursive: true })
    return dirReady
  }

  // Both files are made durable together, then renamed sidecar first, so whoever sees the .eml can
  // read who it went to. A sidecar whose .eml failed to land is removed.
  const write = (messageId: string, raw: Uint8Array, sidecar: Sidecar) =>
    Effect.tryPromise({
      try: async () => {
        const sidecarFile = path.join(dir, `${messageId}.json`)
        const files = [
          { target: sidecarFile, content: Buffer.from(`${JSON.stringify(sidecar, null, 2)}\n`) },
          { target: path.join(dir, `${messageId}.eml`), content: raw }
        ]
        await ensureDir()
        try {
          await Storage.writeFilesAtomic(dir, files)
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== "ENOENT") {
            await rm(sidecarFile, { force: true })
            throw error
          }
          await ensureDir(true)
          await Storage.writeFilesAtomic(dir, files).catch(async (again: unknown) => {
            await rm(sidecarFile, { force: true })
            throw again
          })
        }
      },
      catch: Errors.toProviderError
    })

  // The caller learns the code and that nothing was sent; whoever runs the server reads the cause.
  const logFailure = (what: string) => (error: ProviderError.ProviderError) =>
    Effect.logError(`[mailroom] outbox: a message could not be ${what} in ${dir}: ${String(error.cause)}`)

  const send = (email: EmailProvider.OutboundEmail) =>
    Effect.gen(function* () {
      if (options.paused === true) {
        return yield* fail(
          new ProviderError.SendingPaused({
            message: "sending is paused on this outbox (paused: true)",
            permanent: false
          })
        )
      }
      const recipients = [...new Set([...email.to, ...email.cc, ...email.bcc])]
      if (sandbox !== undefined) {
        const unverified = recipients.filter((r) => !verified.has(r.toLowerCase()))
        if (unverified.length > 0) {
          return yield* fail(
            new ProviderError.RecipientNotVerified({
              message: `the outbox is in its sandbox and these recipients are not verified: ${unverified.join(", ")}`,
              recipients: unverified
            })
          )
        }
      }
      if (recipients.every(isSuppressed)) {
        return yield* fail(
          new ProviderError.RecipientSuppressed({
            message: `every recipient is on the outbox's suppression list: ${recipients.join(", ")}`,
            recipients
          })
        )
      }
      const notWritable = Headers.refusal(email, limits)
      if (notWritable !== undefined) return yield* fail(new ProviderError.InvalidRequest({ message: notWritable }))
      if (badMetadata(email.metadata).length > 0) {
        return yield* fail(
          new ProviderError.InvalidRequest({
            message: `metadata names must be 1-20 letters, digits, "_" or "-", and values at most 80 visible ASCII characters: ${badMetadata(
              email.metadata
            )
              .map(([name]) => name)
              .join(", ")}`
          })
        )
      }
      if (email.to.length + email.cc.length + email.bcc.length > limits.maxRecipients) {
        return yield* fail(
          new ProviderError.InvalidRequest({ message: `a message may have at most ${limits.maxRecipients} recipients` })
        )
      }
      const refused = email.attachments.filter((a) =>
        Adapter.attachmentExtensions(a.filename).some((extension) => forbidden.has(extension))
      )
      if (refused.length > 0) {
        return yield* fail(
          new ProviderError.InvalidRequest({
            message: `attachments of this type are not accepted: ${refused.map((a) => a.filename).join(", ")}`
          })
        )
      }
      // Mailroom's own id when core gave one (the file is then named as the API answered), else a new one.
      const messageId = email.metadata?.[MailEvent.messageKey] ?? MessageLog.makeId()
      const { raw, sidecar } = yield* render(email, messageId).pipe(Effect.tapError(logFailure("rendered")))
      if (raw.byteLength > limits.maxMessageBytes) {
        return yield* fail(
          new ProviderError.MessageTooLarge({
            message: `the message is ${raw.byteLength} bytes, over the limit of ${limits.maxMessageBytes}`
          })
        )
      }
      yield* write(messageId, raw, sidecar).pipe(Effect.tapError(logFailure("written")))
      if (options.events !== undefined) {
        yield* Adapter.publishAccepted(
          options.events,
          MailEvent.accepted({ provider: "outbox", messageId, email, at: now(), isRejected: isSuppressed })
        )
      }
      return { messageId }
    })

  return { name: "outbox", limits, send }
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
