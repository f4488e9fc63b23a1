// The conformance suite every EmailProvider runs against its real peer. Each case sends through the
// provider, overwrites the message it handed over, then reads what the peer received (emulator store,
// parsed .eml, stand-in log, the memory provider's inbox), not what the adapter says it sent.
import { randomBytes, randomUUID } from "node:crypto"
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import { EmailProvider, type OutboundEmail } from "../EmailProvider.js"
import * as MailEvent from "../MailEvent.js"

/** A header as the peer received it: the name as written, the value unfolded (RFC 5322 2.2.3). */
export interface ReceivedHeader {
  readonly name: string
  readonly value: string
}

/** An attachment as the peer received it. */
export interface ReceivedAttachment {
  readonly filename: string
  readonly contentType: string
  readonly content: Uint8Array
  /** The part's `Content-ID` without its angle brackets; undefined when the part has none. */
  readonly contentId?: string | undefined
  /** `inline` for a part shown inside the HTML, `attachment` for a download. */
  readonly disposition: "attachment" | "inline"
}

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
  readonly attachments: ReadonlyArray<ReceivedAttachment>
  /**
   * The message's headers as the peer shows them, in order: at least every custom header sent
   * (`OutboundEmail.headers`), which the suite looks up by name without case. Values unfolded.
   */
  readonly headers: ReadonlyArray<ReceivedHeader>
  /**
   * The header section as it went over the wire (up to the blank line, CRLF line ends), when the peer
   * holds the message's bytes (an .eml, an SMTP server); undefined when a vendor's API writes the
   * message itself. With it the suite also checks how long headers were folded.
   */
  readonly rawHeaders?: string | undefined
  /**
   * The tags (`OutboundEmail.tags`) as the peer holds them beside the message (SES `EmailTags`,
   * Postmark `Metadata`, the outbox's headers); a peer that keeps them with the metadata may report
   * both here. Required unless the suite is told `tagsNotVisible`.
   */
  readonly tags?: ReadonlyArray<{ readonly name: string; readonly value: string }> | undefined
  /** The metadata (`OutboundEmail.metadata`) as the peer holds it to hand back with its events; as `tags`. */
  readonly metadata?: Readonly<Record<string, string>> | undefined
}

export interface EmailProviderSuiteOptions<R = never> {
  readonly layer: Layer.Layer<EmailProvider | R, unknown>
  /** Reads back from the peer the message the provider sent under `messageId`. */
  readonly read: (messageId: string) => Effect.Effect<ReceivedEmail, unknown, R>
  /** The sender address to use; its domain must be one the peer accepts. Default `sender@acme.example`. */
  readonly from?: string
  /**
   * Why the peer cannot show a message's tags and metadata (an SMTP server receives neither): the case
   * that checks them is then skipped. Default: the peer shows them and `read` returns them.
   */
  readonly tagsNotVisible?: string
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
    if (attachment.contentId !== undefined) attachment.contentId = "overwritten@example.invalid"
  }
  const pairs = [...(email.headers ?? []), ...(email.tags ?? [])] as Array<{ name: string; value: string }>
  for (const pair of pairs) {
    pair.name = "X-Overwritten"
    pair.value = "overwritten"
  }
  const metadata = (email.metadata ?? {}) as Record<string, string>
  for (const name of Object.keys(metadata)) metadata[name] = "overwritten"
}

/**
 * The physical lines of one header field in a header section: its first line and the continuation
 * lines (those starting with a space or a tab) that follow it.
 */
const fieldLines = (rawHeaders: string, name: string): ReadonlyArray<string> => {
  const lines = rawHeaders.split("\r\n")
  const start = lines.findIndex((line) => line.slice(0, line.indexOf(":")).toLowerCase() === name.toLowerCase())
  if (start < 0) return []
  const end = lines.findIndex((line, i) => i > start && !/^[ \t]/.test(line))
  return lines.slice(start, end < 0 ? undefined : end)
}

/** A long List-Unsubscribe (RFC 2369 and 8058), with a URL no writer can fold inside. */
const unsubscribe = [
  `<https://acme.example/unsubscribe/${"0123456789abcdef".repeat(6)}?list=receipts&recipient=alice%40example.com>`,
  `<mailto:unsubscribe@acme.example?subject=unsubscribe-${"0123456789abcdef".repeat(2)}>`
].join(", ")

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

      it.effect("custom headers arrive as written, a long List-Unsubscribe folded and intact", () =>
        Effect.gen(function* () {
          const headers = [
            { name: "List-Unsubscribe", value: unsubscribe },
            { name: "List-Unsubscribe-Post", value: "List-Unsubscribe=One-Click" },
            {
              name: "X-Campaign",
              value: "spring sale 2026, second wave: a value long enough that every writer must fold it across lines"
            }
          ]
          const received = yield* roundTrip(message({ text: "headers", headers }))
          const named = (name: string) => received.headers.filter((h) => h.name.toLowerCase() === name.toLowerCase())
          for (const sent of headers) {
            assert.deepStrictEqual(
              named(sent.name).map((h) => h.value),
              [sent.value],
              `${sent.name} did not arrive once, as written`
            )
          }
          const sentNames = headers.map((h) => h.name.toLowerCase())
          assert.deepStrictEqual(
            received.headers.map((h) => h.name.toLowerCase()).filter((name) => sentNames.includes(name)),
            sentNames,
            "the custom headers are not in the order written"
          )
          if (received.rawHeaders === undefined) return
          assert.notMatch(received.rawHeaders, /(^|[^\r])\n|\r(?!\n)/, "a line does not end with CRLF")
          for (const sent of headers) {
            const lines = fieldLines(received.rawHeaders, sent.name)
            // Unfolding removes each CRLF before whitespace and nothing else (RFC 5322 2.2.3): a fold
            // only where a space was leaves what DKIM's relaxed canonicalization reads unchanged.
            const unfolded = lines.join("")
            assert.strictEqual(unfolded.slice(unfolded.indexOf(":") + 1).replace(/^[ \t]+/, ""), sent.value)
            for (const line of lines) {
              assert.isAtMost(line.length, 998, `${sent.name}: a line over RFC 5322's 998 characters`)
              // Over 78 characters only when there is nowhere to fold: one run without whitespace.
              if (line.length > 78) assert.notMatch(line.replace(/^[ \t]+/, ""), /[ \t]/, `${sent.name}: not folded`)
            }
          }
          assert.isAbove(fieldLines(received.rawHeaders, "List-Unsubscribe").length, 1, "List-Unsubscribe not folded")
        })
      )

      it.effect("an inline image arrives with its Content-ID, inline, and the HTML's cid: reference", () =>
        Effect.gen(function* () {
          const logo = new Uint8Array(randomBytes(3_000))
          const pdf = new Uint8Array(randomBytes(1_000))
          const received = yield* roundTrip(
            message({
              html: '<p>Your receipt</p><img src="cid:logo@acme.example" alt="Acme">',
              text: "Your receipt",
              attachments: [
                { filename: "logo.png", contentType: "image/png", content: logo, contentId: "logo@acme.example" },
                { filename: "receipt.pdf", contentType: "application/pdf", content: pdf }
              ]
            })
          )
          assert.include(received.html ?? "", 'src="cid:logo@acme.example"')
          const byName = new Map(received.attachments.map((a) => [a.filename, a]))
          const inline = byName.get("logo.png")
          assert.strictEqual(inline?.contentId, "logo@acme.example")
          assert.strictEqual(inline?.disposition, "inline")
          assert.strictEqual(baseType(inline?.contentType ?? ""), "image/png")
          assert.deepStrictEqual(inline?.content, logo)
          const download = byName.get("receipt.pdf")
          assert.strictEqual(download?.disposition, "attachment")
          assert.isUndefined(download?.contentId)
          assert.deepStrictEqual(download?.content, pdf)
        })
      )

      it.effect.skipIf(options.tagsNotVisible !== undefined)(
        "tags and metadata travel with the message, as the peer holds them",
        () =>
          Effect.gen(function* () {
            const tags = [
              { name: "category", value: "receipt" },
              { name: "order_id", value: "ord-42" }
            ]
            const metadata = { [MailEvent.organizationKey]: "org_suite", [MailEvent.messageKey]: randomUUID() }
            const received = yield* roundTrip(message({ text: "tagged", tags, metadata }))
            assert.isDefined(received.tags, "read returned no tags; tell the suite tagsNotVisible, and why")
            for (const tag of tags) assert.deepInclude(received.tags ?? [], tag)
            for (const [name, value] of Object.entries(metadata)) assert.strictEqual(received.metadata?.[name], value)
          })
      )

      it.effect("declares its limits", () =>
        Effect.gen(function* () {
          const { limits } = yield* EmailProvider
          assert.isTrue(Number.isInteger(limits.maxRecipients) && limits.maxRecipients > 0)
          assert.isTrue(Number.isInteger(limits.maxMessageBytes) && limits.maxMessageBytes > 0)
          for (const extension of limits.forbiddenExtensions) assert.match(extension, /^[a-z0-9]+$/)
          for (const count of [limits.maxCustomHeaders, limits.maxTags]) {
            if (count !== undefined) assert.isTrue(Number.isInteger(count) && count > 0)
          }
          // Header field names: printable ASCII without the colon (RFC 5322 2.2).
          for (const name of limits.forbiddenHeaders ?? []) assert.match(name, /^[\x21-\x39\x3b-\x7e]+$/)
        })
      )
    })
  })
}
