// The embedded EmailProvider: every message becomes a real RFC 5322 file `{dir}/{message_id}.eml`
// instead of leaving the machine, and the provider can act out a sandbox or a paused account.
import { mkdir, rm } from "node:fs/promises"
import * as path from "node:path"
import { EmailProvider, ProviderError } from "@mailroom/core"
import { Config, Effect, Layer } from "effect"
import MailComposer from "nodemailer/lib/mail-composer"
import * as Errors from "./internal/errors.js"
import * as Storage from "./internal/storage.js"
import * as Uuid from "./internal/uuid.js"

export interface Sandbox {
  /** Acts out a provider account in its sandbox: only `verifiedRecipients` may receive mail. */
  readonly enabled: boolean
  /** Addresses that may receive mail while `enabled`, compared case-insensitively. */
  readonly verifiedRecipients: ReadonlyArray<string>
}

export interface Options {
  /** Directory the messages are written to, created when needed: `{dir}/{message_id}.eml` and `{dir}/{message_id}.json`. */
  readonly dir: string
  /** Default: disabled; every recipient receives mail. */
  readonly sandbox?: Sandbox
  /** Acts out an account whose sending is paused: every send fails with `SendingPaused`. Default false. */
  readonly paused?: boolean
  /** What the outbox accepts. Default `defaultLimits`, the strictest of the supported vendors. */
  readonly limits?: EmailProvider.Limits
}

/**
 * The strictest of the vendors mailroom supports, so a message the outbox accepts is one SES and
 * Postmark accept too: 50 recipients (both), 10 MB after base64 (Postmark; SES takes 40 MB), and
 * every attachment extension either vendor refuses (Postmark's forbidden list and SES's
 * unsupported attachment types).
 */
export const defaultLimits: EmailProvider.Limits = {
  maxRecipients: 50,
  maxMessageBytes: 10_000_000,
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

/** The `Message-ID` header of a message: `<{message_id}@outbox.mailroom>`. */
export const messageIdHeader = (messageId: string): string => `<${messageId}@outbox.mailroom>`

/** What `{dir}/{message_id}.json` holds beside the message: who it went to, blind copies included. */
export interface Sidecar {
  readonly messageId: string
  readonly envelope: { readonly from: string; readonly to: ReadonlyArray<string> }
  readonly bcc: ReadonlyArray<string>
}

const fail = (reason: ProviderError.Reason) =>
  Effect.fail(new ProviderError.ProviderError({ provider: "outbox", reason }))

export const make = (options: Options): EmailProvider.EmailProvider => {
  const dir = path.resolve(options.dir)
  const limits = options.limits ?? defaultLimits
  const forbidden = new Set(limits.forbiddenExtensions.map((e) => e.toLowerCase()))
  const sandbox = options.sandbox?.enabled === true ? options.sandbox : undefined
  const verified = new Set(sandbox?.verifiedRecipients.map((r) => r.toLowerCase()) ?? [])

  const render = (email: EmailProvider.OutboundEmail, messageId: string) =>
    Effect.tryPromise({
      try: async (): Promise<{ readonly raw: Uint8Array; readonly sidecar: Sidecar }> => {
        const composer = new MailComposer({
          from:
            email.from.name === undefined ? email.from.address : { name: email.from.name, address: email.from.address },
          to: [...email.to],
          cc: [...email.cc],
          bcc: [...email.bcc],
          replyTo: [...email.replyTo],
          subject: email.subject,
          messageId: messageIdHeader(messageId),
          date: new Date(),
          ...(email.text === undefined ? {} : { text: email.text }),
          ...(email.html === undefined ? {} : { html: email.html }),
          attachments: email.attachments.map((a) => ({
            filename: a.filename,
            contentType: a.contentType,
            content: Buffer.from(a.content.buffer, a.content.byteOffset, a.content.byteLength)
          })),
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
            bcc: [...email.bcc]
          }
        }
      },
      catch: Errors.outboxError
    })

  // The sidecar lands first, so whoever sees the .eml can read who it went to.
  const write = (messageId: string, raw: Uint8Array, sidecar: Sidecar) =>
    Effect.tryPromise({
      try: async () => {
        await mkdir(dir, { recursive: true })
        const sidecarFile = path.join(dir, `${messageId}.json`)
        await Storage.writeFileAtomic(dir, sidecarFile, Buffer.from(`${JSON.stringify(sidecar, null, 2)}\n`))
        try {
          await Storage.writeFileAtomic(dir, path.join(dir, `${messageId}.eml`), raw)
        } catch (error) {
          await rm(sidecarFile, { force: true })
          throw error
        }
      },
      catch: Errors.outboxError
    })

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
      if (email.to.length + email.cc.length + email.bcc.length > limits.maxRecipients) {
        return yield* fail(
          new ProviderError.InvalidRequest({ message: `a message may have at most ${limits.maxRecipients} recipients` })
        )
      }
      const refused = email.attachments.filter((a) => forbidden.has(EmailProvider.attachmentExtension(a.filename)))
      if (refused.length > 0) {
        return yield* fail(
          new ProviderError.InvalidRequest({
            message: `attachments of this type are not accepted: ${refused.map((a) => a.filename).join(", ")}`
          })
        )
      }
      const messageId = Uuid.v7()
      const { raw, sidecar } = yield* render(email, messageId)
      if (raw.byteLength > limits.maxMessageBytes) {
        return yield* fail(
          new ProviderError.MessageTooLarge({
            message: `the message is ${raw.byteLength} bytes, over the limit of ${limits.maxMessageBytes}`
          })
        )
      }
      yield* write(messageId, raw, sidecar)
      return { messageId }
    })

  return { name: "outbox", limits, send }
}

/** Provides core's `EmailProvider` (the server's `"provider": { "kind": "outbox", ... }`). */
export const layer = (options: Options): Layer.Layer<EmailProvider.EmailProvider> =>
  Layer.sync(EmailProvider.EmailProvider, () => make(options))

/**
 * As `layer`, with the options read from `Config`, e.g.
 * `layerConfig({ dir: Config.String("OUTBOX_DIR"), paused: Config.Boolean("OUTBOX_PAUSED") })`.
 */
export const layerConfig = (
  options: Config.Wrap<Options>
): Layer.Layer<EmailProvider.EmailProvider, Config.ConfigError> =>
  Layer.effect(EmailProvider.EmailProvider, Effect.map(Config.unwrap(options), make))
