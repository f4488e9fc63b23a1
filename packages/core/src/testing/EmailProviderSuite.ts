// The conformance suite every EmailProvider runs against its real peer. Each case sends through the
// provider, overwrites the message it handed over, then reads what the peer received (emulator store,
// parsed .eml, stand-in log, the memory provider's inbox), not what the adapter says it sent.
import { randomBytes } from "node:crypto"
import { assert, describe, layer } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import { EmailProvider, type OutboundEmail } from "../EmailProvider.js"

/** A message as the peer received it. */
export interface ReceivedEmail {
  readonly from: { readonly address: string; readonly name?: string | undefined }
  readonly to: ReadonlyArray<string>
  readonly cc: ReadonlyArray<string>
  /** The envelope's blind copies; a peer that keeps them apart from the headers reports them here. */
  readonly bcc: ReadonlyArray<string>
  readonly replyTo: ReadonlyArray<string>
  readonly subject: string
  readonly text?: string | undefined
  readonly html?: string | undefined
  readonly attachments: ReadonlyArray<{
    readonly filename: string
    readonly contentType: string
    readonly content: Uint8Array
  }>
}

export interface EmailProviderSuiteOptions<R = never> {
  readonly layer: Layer.Layer<EmailProvider | R, unknown>
  /** Reads back from the peer the message the provider sent under `messageId`. */
  readonly read: (messageId: string) => Effect.Effect<ReceivedEmail, unknown, R>
  /** The sender address to use; its domain must be one the peer accepts. Default `sender@acme.example`. */
  readonly from?: string
}

const normalize = (text: string | undefined) => text?.replace(/\r\n/g, "\n").trimEnd()
const baseType = (contentType: string) => contentType.split(";")[0]?.trim().toLowerCase()

type Writable<T> = { -readonly [K in keyof T]: T[K] }

/**
 * Overwrites every part of a message once the provider has taken it, so what `read` returns is what
 * reached the peer then, not the caller's objects still held by reference (an in-memory peer could).
 */
const overwrite = (email: OutboundEmail) => {
  const message = email as Writable<OutboundEmail>
  const from = email.from as Writable<OutboundEmail["from"]>
  from.address = "overwritten@example.invalid"
  if (from.name !== undefined) from.name = "overwritten"
  const lists = [email.to, email.cc, email.bcc, email.replyTo] as Array<Array<string>>
  for (const list of lists) list.fill("overwritten@example.invalid")
  message.subject = "overwritten"
  if (message.text !== undefined) message.text = "overwritten"
  if (message.html !== undefined) message.html = "<p>overwritten</p>"
  for (const attachment of email.attachments as Array<Writable<OutboundEmail["attachments"][number]>>) {
    attachment.filename = "overwritten.bin"
    attachment.contentType = "application/x-overwritten"
    attachment.content.fill(0)
  }
}

export const EmailProviderSuite = <R = never>(name: string, options: EmailProviderSuiteOptions<R>): void => {
  const from = options.from ?? "sender@acme.example"
  const message = (parts: Partial<OutboundEmail>): OutboundEmail => ({
    from: { address: from },
    to: ["alice@example.com"],
    cc: [],
    bcc: [],
    replyTo: [],
    subject: "Your receipt",
    attachments: [],
    ...parts
  })
  const roundTrip = (email: OutboundEmail) =>
    Effect.gen(function* () {
      const provider = yield* EmailProvider
      // The provider gets a copy, overwritten once sent; the cases compare with the original.
      const handed = structuredClone(email)
      const { messageId } = yield* provider.send(handed)
      overwrite(handed)
      assert.isString(messageId)
      assert.isAbove(messageId.length, 0)
      return yield* options.read(messageId)
    })

  describe(`EmailProviderSuite: ${name}`, () => {
    layer(options.layer, { timeout: 30_000, excludeTestServices: true })((it) => {
      it.effect("text only", () =>
        Effect.gen(function* () {
          const received = yield* roundTrip(message({ text: "Thanks for your order.\nTotal: 12 EUR" }))
          assert.strictEqual(received.from.address, from)
          assert.deepStrictEqual(received.to, ["alice@example.com"])
          assert.strictEqual(received.subject, "Your receipt")
          assert.strictEqual(normalize(received.text), "Thanks for your order.\nTotal: 12 EUR")
          assert.isUndefined(received.html)
          assert.deepStrictEqual(received.attachments, [])
        })
      )

      it.effect("html only", () =>
        Effect.gen(function* () {
          const received = yield* roundTrip(message({ html: "<p>Thanks for your <b>order</b>.</p>" }))
          assert.strictEqual(normalize(received.html), "<p>Thanks for your <b>order</b>.</p>")
          // A provider may derive a text part from the HTML; it must not invent other content.
          if (received.text !== undefined) assert.include(received.text, "order")
        })
      )

      it.effect("html and text", () =>
        Effect.gen(function* () {
          const received = yield* roundTrip(message({ html: "<h1>Hello</h1>", text: "Hello" }))
          assert.strictEqual(normalize(received.html), "<h1>Hello</h1>")
          assert.strictEqual(normalize(received.text), "Hello")
        })
      )

      it.effect("several recipients, cc, bcc and reply-to", () =>
        Effect.gen(function* () {
          const received = yield* roundTrip(
            message({
              to: ["alice@example.com", "bob@example.com"],
              cc: ["carol@example.com"],
              bcc: ["dave@example.com", "erin@example.com"],
              replyTo: ["support@acme.example"],
              text: "copies"
            })
          )
          assert.deepStrictEqual(received.to, ["alice@example.com", "bob@example.com"])
          assert.deepStrictEqual(received.cc, ["carol@example.com"])
          assert.deepStrictEqual([...received.bcc].sort(), ["dave@example.com", "erin@example.com"])
          assert.deepStrictEqual(received.replyTo, ["support@acme.example"])
        })
      )

      it.effect("non-ASCII subject and sender name", () =>
        Effect.gen(function* () {
          const received = yield* roundTrip(
            message({
              from: { address: from, name: "Zoë Ångström — Açme, Inc." },
              subject: "Votre reçu n° 42 ✔ — 日本語",
              text: "Merci, à bientôt !"
            })
          )
          assert.strictEqual(received.from.name, "Zoë Ångström — Açme, Inc.")
          assert.strictEqual(received.subject, "Votre reçu n° 42 ✔ — 日本語")
          assert.strictEqual(normalize(received.text), "Merci, à bientôt !")
        })
      )

      it.effect("text that reads as an RFC 2047 encoded-word arrives exactly as sent", () =>
        Effect.gen(function* () {
          // A parser shows "=?utf-8?q?x?=" as "x" unless the provider encodes it.
          const received = yield* roundTrip(
            message({
              from: { address: from, name: "=?utf-8?q?Support?=" },
              subject: "Re: =?utf-8?q?x?= and =?UTF-8?B?eQ==?=",
              text: "x",
              attachments: [
                { filename: "=?utf-8?q?a?=.pdf", contentType: "application/pdf", content: new Uint8Array([1]) }
              ]
            })
          )
          assert.strictEqual(received.from.name, "=?utf-8?q?Support?=")
          assert.strictEqual(received.subject, "Re: =?utf-8?q?x?= and =?UTF-8?B?eQ==?=")
          assert.deepStrictEqual(
            received.attachments.map((a) => a.filename),
            ["=?utf-8?q?a?=.pdf"]
          )
        })
      )

      it.effect("several attachments keep their names, types and exact bytes", () =>
        Effect.gen(function* () {
          const pdf = new Uint8Array(randomBytes(48_123))
          const csv = new TextEncoder().encode("id;amount\n1;12,50 €\n")
          const png = new Uint8Array(randomBytes(1_000))
          const received = yield* roundTrip(
            message({
              text: "attached",
              attachments: [
                { filename: "facture été.pdf", contentType: "application/pdf", content: pdf },
                { filename: "lines.csv", contentType: "text/csv", content: csv },
                { filename: "logo.png", contentType: "image/png", content: png }
              ]
            })
          )
          assert.strictEqual(received.attachments.length, 3)
          const byName = new Map(received.attachments.map((a) => [a.filename, a]))
          for (const [filename, type, content] of [
            ["facture été.pdf", "application/pdf", pdf],
            ["lines.csv", "text/csv", csv],
            ["logo.png", "image/png", png]
          ] as const) {
            const attachment = byName.get(filename)
            assert.isDefined(attachment, `${filename} was not received`)
            assert.strictEqual(baseType(attachment?.contentType ?? ""), type)
            assert.deepStrictEqual(attachment?.content, content)
          }
        })
      )

      it.effect("declares its limits", () =>
        Effect.gen(function* () {
          const { limits } = yield* EmailProvider
          assert.isTrue(Number.isInteger(limits.maxRecipients) && limits.maxRecipients > 0)
          assert.isTrue(Number.isInteger(limits.maxMessageBytes) && limits.maxMessageBytes > 0)
          for (const extension of limits.forbiddenExtensions) assert.match(extension, /^[a-z0-9]+$/)
        })
      )
    })
  })
}
