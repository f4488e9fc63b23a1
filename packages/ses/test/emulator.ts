// The SES v2 emulator (aws-ses-v2-local) started in-process on a free port, and reads of what it
// received, taken from its own store rather than from anything the adapter reports.

import { createRequire } from "node:module"
import type { AddressInfo } from "node:net"
import type { EmailProvider } from "@mailroom/core"
import type { ReceivedEmail } from "@mailroom/core/testing"
import emulatorModule from "aws-ses-v2-local"
import { type Config, Context, Effect, Layer, Redacted } from "effect"
import { SesEmailProvider } from "../src/index.js"

/** One message as the emulator's `GET /store` reports it. */
export interface StoredEmail {
  readonly messageId: string
  readonly from: string
  readonly replyTo: ReadonlyArray<string>
  readonly destination: {
    readonly to: ReadonlyArray<string>
    readonly cc: ReadonlyArray<string>
    readonly bcc: ReadonlyArray<string>
  }
  readonly subject: string
  readonly body: { readonly text?: string; readonly html?: string }
  readonly attachments: ReadonlyArray<{
    readonly filename: string
    readonly contentType: string
    readonly content: string
    readonly contentDisposition?: string
  }>
}

interface ParsedMail {
  readonly from?: { readonly value: ReadonlyArray<{ readonly address?: string; readonly name: string }> }
  readonly subject?: string
  readonly attachments: ReadonlyArray<{ readonly filename?: string }>
}

// mailparser is the emulator's own dependency (pinned to 3.9.12); it is reached through the emulator
// so that decoding the From header does not rely on this package's encoder.
const { simpleParser } = createRequire(createRequire(import.meta.url).resolve("aws-ses-v2-local"))("mailparser") as {
  readonly simpleParser: (source: Buffer) => Promise<ParsedMail>
}

// The package is CommonJS with `exports.default`; depending on the loader's interop the default
// import is the function itself or the exports object.
const startServer: typeof emulatorModule.default =
  typeof emulatorModule === "function" ? emulatorModule : emulatorModule.default

export class Emulator extends Context.Service<Emulator, { readonly url: string }>()("test/SesEmulator") {}

export const EmulatorLive: Layer.Layer<Emulator> = Layer.effect(
  Emulator,
  Effect.map(
    Effect.acquireRelease(
      Effect.promise(() => startServer({ host: "127.0.0.1", port: 0 })),
      (server) =>
        Effect.promise(
          () =>
            new Promise<void>((resolve) => {
              server.closeAllConnections()
              server.close(() => resolve())
            })
        )
    ),
    (server) => ({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })
  )
)

export const credentials = {
  accessKeyId: Redacted.make("AKIDEMULATOR"),
  secretAccessKey: Redacted.make("emulator-secret-key")
}

/** The adapter pointed at the emulator, built from options as a user would. */
export const ProviderLive = (
  options: SesEmailProvider.ConfigOptions = {}
): Layer.Layer<EmailProvider.EmailProvider | Emulator, Config.ConfigError> =>
  Layer.unwrap(
    Effect.map(Emulator, ({ url }) =>
      SesEmailProvider.layer({ region: "us-east-1", endpoint: url, ...credentials, ...options })
    )
  ).pipe(Layer.provideMerge(EmulatorLive))

export const stored = (messageId: string) =>
  Effect.gen(function* () {
    const { url } = yield* Emulator
    const store = yield* Effect.promise(async () => {
      const response = await fetch(`${url}/store`)
      return (await response.json()) as { readonly emails: ReadonlyArray<StoredEmail> }
    })
    const email = store.emails.find((e) => e.messageId === messageId)
    if (email === undefined) return yield* Effect.die(new Error(`the emulator holds no message ${messageId}`))
    return email
  })

/**
 * The emulator keeps FromEmailAddress as SES received it, which SES turns into the From header; a MIME
 * parser reads the address and the decoded display name out of it.
 */
export const parseFrom = (from: string) =>
  Effect.promise(async () => {
    const parsed = await simpleParser(Buffer.from(`From: ${from}\r\n\r\n`, "utf8"))
    const first = parsed.from?.value[0]
    if (first?.address === undefined) throw new Error(`no address in From: ${from}`)
    return {
      address: first.address,
      ...(first.name === "" ? {} : { name: first.name }),
      count: parsed.from?.value.length
    }
  })

/**
 * SES writes the Subject and each attachment's file name into the message it sends, ASCII as it is;
 * what a recipient sees is what a MIME parser reads out of them there.
 */
const asReceived = (subject: string, filenames: ReadonlyArray<string>) =>
  Effect.promise(async () => {
    const parts = filenames.map((name) => `--b\r\nContent-Disposition: attachment; filename="${name}"\r\n\r\nx\r\n`)
    const parsed = await simpleParser(
      Buffer.from(
        `Subject: ${subject}\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n${parts.join("")}--b--\r\n`,
        "utf8"
      )
    )
    return { subject: parsed.subject ?? "", filenames: parsed.attachments.map((a) => a.filename ?? "") }
  })

export const read = (messageId: string): Effect.Effect<ReceivedEmail, never, Emulator> =>
  Effect.gen(function* () {
    const email = yield* stored(messageId)
    const { address, name } = yield* parseFrom(email.from)
    const seen = yield* asReceived(
      email.subject,
      email.attachments.map((a) => a.filename)
    )
    return {
      from: name === undefined ? { address } : { address, name },
      to: email.destination.to,
      cc: email.destination.cc,
      bcc: email.destination.bcc,
      replyTo: email.replyTo,
      subject: seen.subject,
      text: email.body.text,
      html: email.body.html,
      attachments: email.attachments.map((a, i) => ({
        filename: seen.filenames[i] ?? "",
        contentType: a.contentType,
        content: new Uint8Array(Buffer.from(a.content, "base64"))
      }))
    }
  })
