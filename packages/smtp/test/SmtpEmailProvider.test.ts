// The provider against two SMTP servers that share no code: core's conformance suite on smtp-server and
// on aiosmtpd, then what the message carries (custom headers, tags, inline parts, the envelope, DKIM).
import { assert, describe, layer } from "@effect/vitest"
import { EmailProvider } from "@mailroom/core"
import { EmailProviderSuite, outboundEmail } from "@mailroom/core/testing"
import { Effect, Layer, Redacted } from "effect"
import { SmtpEmailProvider } from "../src/index.js"
import { AiosmtpdPeer } from "./support/Aiosmtpd.js"
import { dkimTestKey, headerValues, parseReceived, toReceivedEmail, verifyDkim } from "./support/received.js"
import { SmtpPeer } from "./support/SmtpPeer.js"

const key = dkimTestKey()

const onSmtpPeer = (options: Partial<SmtpEmailProvider.ConfigOptions> = {}) =>
  Layer.effect(
    EmailProvider.EmailProvider,
    SmtpPeer.use((peer) =>
      SmtpEmailProvider.make({ host: "127.0.0.1", port: peer.port, socketTimeout: "10 seconds", ...options })
    )
  ).pipe(Layer.provideMerge(SmtpPeer.layer({ hideSTARTTLS: true })))

const onAiosmtpd = Layer.effect(
  EmailProvider.EmailProvider,
  AiosmtpdPeer.use((peer) =>
    SmtpEmailProvider.make({
      host: "127.0.0.1",
      port: peer.port,
      dkim: { ...key, privateKey: Redacted.make(key.privateKey) }
    })
  )
).pipe(Layer.provideMerge(AiosmtpdPeer.layer()))

EmailProviderSuite("smtp on smtp-server", {
  tagsNotVisible:
    "SMTP carries no metadata (it would only be read back by events, which SMTP has none of); tags travel as X-Mailroom-Tag headers, tested in this file",
  layer: onSmtpPeer(),
  read: (messageId) =>
    SmtpPeer.use((peer) => Effect.promise(async () => toReceivedEmail(await peer.byMessageId(messageId))))
})

EmailProviderSuite("smtp on aiosmtpd", {
  tagsNotVisible:
    "SMTP carries no metadata (it would only be read back by events, which SMTP has none of); tags travel as X-Mailroom-Tag headers, tested in this file",
  layer: onAiosmtpd,
  read: (messageId) =>
    AiosmtpdPeer.use((peer) => Effect.promise(async () => toReceivedEmail(await peer.byMessageId(messageId))))
})

const message = (parts: Partial<EmailProvider.OutboundEmail> = {}) =>
  outboundEmail({ from: { address: "billing@acme.example", name: "Acme Billing" }, ...parts })

const unsubscribe = [
  {
    name: "List-Unsubscribe",
    value: "<https://acme.example/unsubscribe/4f2a?list=receipts>, <mailto:unsubscribe@acme.example?subject=4f2a>"
  },
  { name: "List-Unsubscribe-Post", value: "List-Unsubscribe=One-Click" }
]

describe("SmtpEmailProvider on smtp-server", () => {
  layer(onSmtpPeer({ dkim: { ...key, privateKey: key.privateKey } }))((it) => {
    it.effect("the envelope: MAIL FROM is the sender; every recipient once; Bcc in no header", () =>
      Effect.gen(function* () {
        const peer = yield* SmtpPeer
        const provider = yield* EmailProvider.EmailProvider
        const { messageId } = yield* provider.send(
          message({
            to: ["alice@example.com", "ALICE@example.com"],
            cc: ["carol@example.com"],
            bcc: ["audit@acme.example"]
          })
        )
        const received = yield* Effect.promise(() => peer.byMessageId(messageId))
        assert.strictEqual(received.mailFrom, "billing@acme.example")
        assert.deepStrictEqual(received.rcptTo, ["alice@example.com", "carol@example.com", "audit@acme.example"])
        assert.notMatch(received.raw.toString("latin1"), /^bcc:/im)
        assert.notInclude(received.raw.toString("latin1"), "audit@acme.example")
      })
    )

    it.effect("the message id is the Message-ID it set, on the sender's domain", () =>
      Effect.gen(function* () {
        const peer = yield* SmtpPeer
        const { messageId } = yield* (yield* EmailProvider.EmailProvider).send(message())
        assert.match(messageId, /^[0-9a-f-]{36}@acme\.example$/)
        const parsed = yield* Effect.promise(async () => parseReceived(await peer.byMessageId(messageId)))
        assert.strictEqual(parsed.messageId, `<${messageId}>`)
      })
    )

    it.effect("custom headers arrive as given, in order, and inside the DKIM signature, which verifies", () =>
      Effect.gen(function* () {
        const peer = yield* SmtpPeer
        const { messageId } = yield* (yield* EmailProvider.EmailProvider).send(
          message({ headers: [...unsubscribe, { name: "X-Campaign", value: "spring-2026" }] })
        )
        const received = yield* Effect.promise(() => peer.byMessageId(messageId))
        const parsed = yield* Effect.promise(() => parseReceived(received))
        const lines = parsed.headerLines.map((h) => h.key)
        assert.deepStrictEqual(
          lines.filter((k) => ["list-unsubscribe", "list-unsubscribe-post", "x-campaign"].includes(k)),
          ["list-unsubscribe", "list-unsubscribe-post", "x-campaign"]
        )
        for (const header of unsubscribe) assert.deepStrictEqual(headerValues(parsed, header.name), [header.value])
        const [signature] = yield* Effect.promise(() => verifyDkim(received.raw, key))
        assert.strictEqual(signature?.result, "pass")
        assert.strictEqual(signature?.domain, "acme.example")
        assert.strictEqual(signature?.selector, "mr1")
        for (const name of [
          "from",
          "subject",
          "message-id",
          "list-unsubscribe",
          "list-unsubscribe-post",
          "x-campaign"
        ]) {
          assert.include(signature?.headers ?? [], name)
        }
      })
    )

    it.effect("a header changed on the way fails the DKIM check (the signature covers it)", () =>
      Effect.gen(function* () {
        const peer = yield* SmtpPeer
        const { messageId } = yield* (yield* EmailProvider.EmailProvider).send(message({ headers: unsubscribe }))
        const received = yield* Effect.promise(() => peer.byMessageId(messageId))
        const tampered = Buffer.from(received.raw.toString("latin1").replace("One-Click", "One-Clack"), "latin1")
        const [signature] = yield* Effect.promise(() => verifyDkim(tampered, key))
        assert.strictEqual(signature?.result, "fail")
      })
    )

    it.effect("tags go as X-Mailroom-Tag-{name} headers, signed", () =>
      Effect.gen(function* () {
        const peer = yield* SmtpPeer
        const { messageId } = yield* (yield* EmailProvider.EmailProvider).send(
          message({
            tags: [
              { name: "category", value: "receipt" },
              { name: "tier_2", value: "gold-1" }
            ]
          })
        )
        const received = yield* Effect.promise(() => peer.byMessageId(messageId))
        const parsed = yield* Effect.promise(() => parseReceived(received))
        assert.deepStrictEqual(headerValues(parsed, "X-Mailroom-Tag-category"), ["receipt"])
        assert.deepStrictEqual(headerValues(parsed, "X-Mailroom-Tag-tier_2"), ["gold-1"])
        const [signature] = yield* Effect.promise(() => verifyDkim(received.raw, key))
        assert.strictEqual(signature?.result, "pass")
        assert.include(signature?.headers ?? [], "x-mailroom-tag-category")
      })
    )

    it.effect("metadata (the organisation) is never written into the message", () =>
      Effect.gen(function* () {
        const peer = yield* SmtpPeer
        const { messageId } = yield* (yield* EmailProvider.EmailProvider).send(
          message({ metadata: { "mailroom-org": "org_secret_acme" } })
        )
        const received = yield* Effect.promise(() => peer.byMessageId(messageId))
        assert.notInclude(received.raw.toString("latin1"), "org_secret_acme")
      })
    )

    it.effect("an attachment with a contentId is an inline part the HTML references", () =>
      Effect.gen(function* () {
        const peer = yield* SmtpPeer
        const logo = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 255])
        const pdf = new Uint8Array([37, 80, 68, 70, 0, 7])
        const { messageId } = yield* (yield* EmailProvider.EmailProvider).send(
          message({
            html: '<p><img src="cid:logo@acme"> Thanks</p>',
            attachments: [
              { filename: "logo.png", contentType: "image/png", content: logo, contentId: "logo@acme" },
              { filename: "invoice.pdf", contentType: "application/pdf", content: pdf }
            ]
          })
        )
        const received = yield* Effect.promise(() => peer.byMessageId(messageId))
        const parsed = yield* Effect.promise(() => parseReceived(received))
        const inline = parsed.attachments.find((a) => a.filename === "logo.png")
        const attached = parsed.attachments.find((a) => a.filename === "invoice.pdf")
        assert.strictEqual(inline?.contentDisposition, "inline")
        assert.strictEqual(inline?.contentId, "<logo@acme>")
        assert.isTrue(inline?.related)
        assert.deepStrictEqual(new Uint8Array(inline?.content ?? []), logo)
        assert.strictEqual(attached?.contentDisposition, "attachment")
        assert.deepStrictEqual(new Uint8Array(attached?.content ?? []), pdf)
        assert.match(received.raw.toString("latin1"), /Content-Type: multipart\/related/i)
        const [signature] = yield* Effect.promise(() => verifyDkim(received.raw, key))
        assert.strictEqual(signature?.result, "pass")
      })
    )

    it.effect("a message over the declared limit is refused before any connection", () =>
      Effect.gen(function* () {
        const peer = yield* SmtpPeer
        const before = peer.connections()
        const small = yield* SmtpEmailProvider.make({
          host: "127.0.0.1",
          port: peer.port,
          limits: { maxMessageBytes: 2_000 }
        })
        const error = yield* Effect.flip(small.send(message({ text: "x".repeat(3_000) })))
        assert.strictEqual(error.reason._tag, "MessageTooLarge")
        assert.isFalse(error.isRetryable)
        assert.strictEqual(peer.connections(), before)
        assert.strictEqual(small.limits.maxMessageBytes, 2_000)
      })
    )
  })

  layer(onSmtpPeer({ tagHeaders: false }))((it) => {
    it.effect("tagHeaders: false leaves tags out", () =>
      Effect.gen(function* () {
        const peer = yield* SmtpPeer
        const { messageId } = yield* (yield* EmailProvider.EmailProvider).send(
          message({ tags: [{ name: "category", value: "receipt" }] })
        )
        const received = yield* Effect.promise(() => peer.byMessageId(messageId))
        assert.notMatch(received.raw.toString("latin1"), /x-mailroom-tag/i)
      })
    )
  })
})

describe("SmtpEmailProvider on aiosmtpd", () => {
  layer(onAiosmtpd)((it) => {
    it.effect("the DKIM signature verifies after another implementation stored the message", () =>
      Effect.gen(function* () {
        const peer = yield* AiosmtpdPeer
        const { messageId } = yield* (yield* EmailProvider.EmailProvider).send(
          message({
            headers: unsubscribe,
            tags: [{ name: "category", value: "receipt" }],
            html: '<p><img src="cid:logo@acme"></p>',
            attachments: [
              {
                filename: "logo.png",
                contentType: "image/png",
                content: new Uint8Array([1, 2, 3]),
                contentId: "logo@acme"
              }
            ]
          })
        )
        const received = yield* Effect.promise(() => peer.byMessageId(messageId))
        const [signature] = yield* Effect.promise(() => verifyDkim(received.raw, key))
        assert.strictEqual(signature?.result, "pass")
        assert.include(signature?.headers ?? [], "list-unsubscribe-post")
        const parsed = yield* Effect.promise(() => parseReceived(received))
        assert.deepStrictEqual(headerValues(parsed, "List-Unsubscribe-Post"), ["List-Unsubscribe=One-Click"])
        assert.strictEqual(parsed.attachments[0]?.contentId, "<logo@acme>")
      })
    )
  })
})
