// The SES v2 emulator (aws-ses-v2-local) started in-process on a free port behind a recording proxy,
// and reads of what it received, taken from its own store and from the requests that went over the
// wire (the store keeps no EmailTags) rather than from anything the adapter reports.

import { createServer, type Server } from "node:http"
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
    readonly contentId?: string
  }>
  readonly headers?: ReadonlyArray<{ readonly name: string; readonly value: string }>
}

/** A SendEmail request as the proxy saw it go to the emulator, and the MessageId it was answered. */
export interface SentRequest {
  readonly messageId: string
  /** The body's bytes and the headers, as they arrived. */
  readonly raw: Buffer
  readonly headers: Readonly<Record<string, string>>
  readonly body: {
    readonly EmailTags?: ReadonlyArray<{ readonly Name: string; readonly Value: string }>
    readonly Content?: unknown
  }
}

interface ParsedMail {
  readonly from?: { readonly value: ReadonlyArray<{ readonly address?: string; readonly name: string }> }
  readonly subject?: string
  readonly attachments: ReadonlyArray<{ readonly filename?: string }>
}

// mailparser is the emulator's own dependency (pinned to 3.9.12), and libmime (its header decoder)
// mailparser's; both are reached through the emulator so that decoding what SES would write does not
// rely on this package's encoder.
const emulatorRequire = createRequire(createRequire(import.meta.url).resolve("aws-ses-v2-local"))
const { simpleParser } = emulatorRequire("mailparser") as {
  readonly simpleParser: (source: Buffer) => Promise<ParsedMail>
}
const libmime = createRequire(emulatorRequire.resolve("mailparser"))("libmime") as {
  readonly decodeWords: (text: string) => string
}

// The package is CommonJS with `exports.default`; depending on the loader's interop the default
// import is the function itself or the exports object.
const startServer: typeof emulatorModule.default =
  typeof emulatorModule === "function" ? emulatorModule : emulatorModule.default

export class Emulator extends Context.Service<
  Emulator,
  {
    /** The proxy's URL: what clients are pointed at. */
    readonly url: string
    /** Every SendEmail request the emulator accepted, in order. */
    readonly sent: ReadonlyArray<SentRequest>
    /** Every SendEmail body answered with SES's own refusal of it (see `sesRefusal`), in order. */
    readonly refused: ReadonlyArray<Buffer>
  }
>()("test/SesEmulator") {}

const urlOf = (server: Server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`

const closed = (server: Server) =>
  Effect.promise(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  )

/**
 * What SES refuses of a SendEmail body that the emulator takes: the constraints of the API reference's
 * MessageHeader (https://docs.aws.amazon.com/ses/latest/APIReference-V2/API_MessageHeader.html: a name
 * of 1 to 126 characters matching `^[!-9;-@A-~]+$`, a value of 1 to 870 printable ASCII characters).
 * SendEmail documents `BadRequestException` (HTTP 400, "the input you provided is invalid") for them.
 */
const sesRefusal = (body: Buffer): string | undefined => {
  let parsed: { Content?: { Simple?: { Headers?: ReadonlyArray<{ Name?: string; Value?: string }> } } }
  try {
    parsed = JSON.parse(body.toString("utf8")) as typeof parsed
  } catch {
    return undefined
  }
  const headers = parsed.Content?.Simple?.Headers ?? []
  for (const [i, { Name = "", Value = "" }] of headers.entries()) {
    if (!/^[!-9;-@A-~]{1,126}$/.test(Name)) {
      return `1 validation error detected: Value at 'content.simple.headers.${i + 1}.member.name' failed to satisfy constraint: Member must satisfy regular expression pattern: ^[!-9;-@A-~]+$`
    }
    if (!/^[ -~]{1,870}$/.test(Value)) {
      return `1 validation error detected: Value at 'content.simple.headers.${i + 1}.member.value' failed to satisfy constraint: Member must have length less than or equal to 870`
    }
  }
  return undefined
}

/**
 * Passes every request to the emulator unchanged, but for a SendEmail SES itself would refuse (which
 * it answers as SES does and counts in `refused`), and keeps each SendEmail body the emulator
 * accepted, with the MessageId it answered.
 */
const recordingProxy = (target: string, sent: Array<SentRequest>, refused: Array<Buffer>) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const server = createServer((req, res) => {
        const chunks: Array<Buffer> = []
        req.on("data", (chunk: Buffer) => chunks.push(chunk))
        req.on("end", async () => {
          const body = Buffer.concat(chunks)
          const headers = Object.fromEntries(
            Object.entries(req.headers).flatMap(([name, value]) =>
              typeof value === "string" && name !== "host" && name !== "connection" ? [[name, value]] : []
            )
          )
          const refusal =
            req.method === "POST" && req.url === "/v2/email/outbound-emails" ? sesRefusal(body) : undefined
          if (refusal !== undefined) {
            refused.push(body)
            res.writeHead(400, {
              "content-type": "application/json",
              "x-amzn-errortype": "BadRequestException:http://internal.amazon.com/coral/com.amazonaws.sesv2/"
            })
            res.end(JSON.stringify({ message: refusal }))
            return
          }
          const answer = await fetch(`${target}${req.url ?? "/"}`, {
            method: req.method ?? "GET",
            headers,
            ...(body.length === 0 ? {} : { body })
          })
          const text = Buffer.from(await answer.arrayBuffer())
          if (req.method === "POST" && req.url === "/v2/email/outbound-emails" && answer.ok) {
            const { MessageId } = JSON.parse(text.toString("utf8")) as { MessageId: string }
            sent.push({
              messageId: MessageId,
              raw: body,
              headers,
              body: JSON.parse(body.toString("utf8")) as SentRequest["body"]
            })
          }
          res.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "application/json" })
          res.end(text)
        })
      })
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
      return server
    }),
    closed
  )

export const EmulatorLive: Layer.Layer<Emulator> = Layer.effect(
  Emulator,
  Effect.gen(function* () {
    const emulator = yield* Effect.acquireRelease(
      Effect.promise(() => startServer({ host: "127.0.0.1", port: 0 })),
      closed
    )
    const sent: Array<SentRequest> = []
    const refused: Array<Buffer> = []
    const proxy = yield* recordingProxy(urlOf(emulator), sent, refused)
    return { url: urlOf(proxy), sent, refused }
  })
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

/** A custom header's value as a recipient's client decodes the unstructured text SES writes. */
export const parseHeader = (header: { readonly name: string; readonly value: string }) =>
  Effect.sync(() => libmime.decodeWords(header.value))

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

/** The SendEmail request SES answered with `messageId`, as it went over the wire. */
export const sentRequest = (messageId: string) =>
  Effect.gen(function* () {
    const { sent } = yield* Emulator
    const request = sent.find((r) => r.messageId === messageId)
    if (request === undefined) return yield* Effect.die(new Error(`no SendEmail request was answered ${messageId}`))
    return request
  })

export const read = (messageId: string): Effect.Effect<ReceivedEmail, never, Emulator> =>
  Effect.gen(function* () {
    const email = yield* stored(messageId)
    const tags = ((yield* sentRequest(messageId)).body.EmailTags ?? []).map((t) => ({ name: t.Name, value: t.Value }))
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
        content: new Uint8Array(Buffer.from(a.content, "base64")),
        contentId: a.contentId,
        disposition: a.contentDisposition === "INLINE" ? "inline" : "attachment"
      })),
      // SES writes the message itself (folding and signing it): there are no bytes of it to read here.
      headers: email.headers ?? [],
      tags,
      metadata: Object.fromEntries(tags.map((t) => [t.name, t.value]))
    }
  })
