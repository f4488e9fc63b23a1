import { assert, describe, it, layer } from "@effect/vitest"
import { EmailProvider, MailEvent } from "@mailroom/core"
import { EmailProviderSuite, expectConfigError, outboundEmail } from "@mailroom/core/testing"
import { Config, ConfigProvider, Effect, Layer, Redacted } from "effect"
import { ServerClient } from "postmark"
import { PostmarkEmailProvider } from "../src/index.js"
import * as StandIn from "./PostmarkStandIn.js"
import { PostmarkStandIn } from "./PostmarkStandIn.js"

const providerFor = (
  standIn: StandIn.StandIn,
  options: { readonly messageStream?: string; readonly tagFrom?: string; readonly simulator?: boolean } = {}
) =>
  PostmarkEmailProvider.make({
    serverToken: Redacted.make(standIn.token),
    requestHost: standIn.host,
    useHttps: false,
    timeout: "5 seconds",
    ...options
  })

const ProviderLive = Layer.effect(EmailProvider.EmailProvider, PostmarkStandIn.use(providerFor)).pipe(
  Layer.provideMerge(PostmarkStandIn.layer())
)

EmailProviderSuite("postmark", {
  layer: ProviderLive,
  read: (messageId) =>
    Effect.gen(function* () {
      return (yield* PostmarkStandIn).received(messageId)
    })
})

const message = (parts: Partial<EmailProvider.OutboundEmail> = {}) =>
  outboundEmail({ from: { address: "billing@acme.example", name: "Acme Billing" }, ...parts })

const lastBody = (standIn: StandIn.StandIn) =>
  JSON.parse(standIn.requests.at(-1)?.body ?? "null") as Record<string, unknown>

/** A stand-in for one test, closed when the test ends. */
const withStandIn = <A, E>(
  options: StandIn.StandInOptions,
  f: (standIn: StandIn.StandIn) => Effect.Effect<A, E>
): Effect.Effect<A, E> => Effect.scoped(Effect.flatMap(StandIn.make(options), f))

describe("PostmarkEmailProvider", () => {
  layer(ProviderLive)((it) => {
    it.effect("sends POST /email with the server token, JSON headers and Postmark's field names", () =>
      Effect.gen(function* () {
        const standIn = yield* PostmarkStandIn
        const provider = yield* EmailProvider.EmailProvider
        const pdf = new Uint8Array([37, 80, 68, 70, 0, 255, 1])
        const { messageId } = yield* provider.send(
          message({
            to: ["alice@example.com", "bob@example.com"],
            replyTo: ["help@acme.example"],
            html: "<p>See attached.</p>",
            attachments: [{ filename: "invoice.pdf", contentType: "application/pdf", content: pdf }],
            metadata: { "mailroom-org": "org_acme" }
          })
        )
        const request = standIn.requests.at(-1)
        assert.strictEqual(request?.method, "POST")
        assert.strictEqual(request?.path, "/email")
        assert.strictEqual(request?.headers["x-postmark-server-token"], standIn.token)
        assert.strictEqual(request?.status, 200)
        assert.deepStrictEqual(lastBody(standIn), {
          From: '"Acme Billing" <billing@acme.example>',
          To: "alice@example.com, bob@example.com",
          ReplyTo: "help@acme.example",
          Subject: "Your invoice",
          HtmlBody: "<p>See attached.</p>",
          TextBody: "See attached.",
          MessageStream: "outbound",
          // Postmark hands Metadata back in every webhook: how an event finds its organisation.
          Metadata: { "mailroom-org": "org_acme" },
          Attachments: [
            {
              Name: "invoice.pdf",
              Content: Buffer.from(pdf).toString("base64"),
              ContentType: "application/pdf",
              ContentID: null
            }
          ]
        })
        // message_id is the MessageID Postmark answered.
        assert.strictEqual(standIn.accepted.at(-1)?.messageId, messageId)
      })
    )

    it.effect("sends custom headers as Headers, tags as Tag and Metadata, an inline part with its ContentID", () =>
      Effect.gen(function* () {
        const standIn = yield* PostmarkStandIn
        const provider = yield* EmailProvider.EmailProvider
        const { messageId } = yield* provider.send(
          message({
            html: '<img src="cid:logo@acme.example">',
            headers: [
              { name: "List-Unsubscribe", value: "<https://acme.example/u/1>" },
              { name: "List-Unsubscribe-Post", value: "List-Unsubscribe=One-Click" }
            ],
            tags: [
              { name: "category", value: "receipt" },
              { name: "order_id", value: "ord-42" }
            ],
            metadata: { [MailEvent.organizationKey]: "org_acme", [MailEvent.messageKey]: "0195f0c8-7d3e-7c41" },
            attachments: [
              {
                filename: "logo.png",
                contentType: "image/png",
                content: new Uint8Array([137, 80]),
                contentId: "logo@acme.example"
              }
            ]
          })
        )
        const fields: Readonly<Record<string, unknown>> =
          standIn.accepted.find((m) => m.messageId === messageId)?.fields ?? {}
        assert.deepStrictEqual(fields.Headers, [
          { Name: "List-Unsubscribe", Value: "<https://acme.example/u/1>" },
          { Name: "List-Unsubscribe-Post", Value: "List-Unsubscribe=One-Click" }
        ])
        // The tag named "category" is Postmark's one Tag; every tag is Metadata beside core's own.
        assert.strictEqual(fields.Tag, "receipt")
        assert.deepStrictEqual(fields.Metadata, {
          [MailEvent.organizationKey]: "org_acme",
          [MailEvent.messageKey]: "0195f0c8-7d3e-7c41",
          category: "receipt",
          order_id: "ord-42"
        })
        assert.deepStrictEqual(
          (fields.Attachments as Array<Record<string, unknown>>).map((a) => a.ContentID),
          ["cid:logo@acme.example"]
        )
      })
    )

    it.effect("refuses, before calling Postmark, tags its Metadata cannot carry", () =>
      Effect.gen(function* () {
        const standIn = yield* PostmarkStandIn
        const provider = yield* EmailProvider.EmailProvider
        const before = standIn.requests.length
        const metadata = { [MailEvent.organizationKey]: "org_acme", [MailEvent.messageKey]: "0195f0c8-7d3e-7c41" }
        const tags = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `tag${i}`, value: "v" }))
        const cases: ReadonlyArray<readonly [ReadonlyArray<EmailProvider.Tag>, string]> = [
          [[{ name: "n".repeat(21), value: "v" }], "n".repeat(21)],
          [[{ name: "campaign", value: "v".repeat(81) }], "campaign"],
          [tags(9), "at most 10 Metadata fields"],
          [[{ name: MailEvent.organizationKey, value: "org_other" }], MailEvent.organizationKey],
          [
            [
              { name: "Env", value: "prod" },
              { name: "env", value: "test" }
            ],
            "env"
          ]
        ]
        for (const [refused, named] of cases) {
          const error = yield* Effect.flip(provider.send(message({ metadata, tags: refused })))
          assert.strictEqual(error.reason._tag, "InvalidRequest")
          assert.include(error.message, named)
        }
        assert.strictEqual(standIn.requests.length, before, "a refused message reached Postmark")
        // The limit it declares, with core's two fields, fits Postmark's ten.
        const { messageId } = yield* provider.send(message({ metadata, tags: tags(provider.limits.maxTags ?? 0) }))
        assert.strictEqual(Object.keys(standIn.received(messageId).metadata ?? {}).length, 10)
      })
    )

    it.effect("refuses, before calling Postmark, a body over its 5 MB, and sends one at the limit", () =>
      Effect.gen(function* () {
        const standIn = yield* PostmarkStandIn
        const provider = yield* EmailProvider.EmailProvider
        const before = standIn.requests.length
        // Past 5 MiB, the stand-in refuses it as Postmark does (support article 1056).
        const cases: ReadonlyArray<readonly [Partial<EmailProvider.OutboundEmail>, string]> = [
          [{ html: "a".repeat(5_000_001) }, "html"],
          [{ text: "é".repeat(2_500_001) }, "text"],
          [{ html: "a".repeat(StandIn.maxBodyBytes + 1) }, "html"]
        ]
        for (const [parts, named] of cases) {
          const error = yield* Effect.flip(provider.send(message(parts)))
          assert.strictEqual(error.reason._tag, "InvalidRequest")
          assert.include(error.message, `${named}:`)
          assert.include(error.message, "5,000,000 bytes")
        }
        assert.strictEqual(standIn.requests.length, before, "a refused message reached Postmark")
        const { messageId } = yield* provider.send(
          message({ html: "a".repeat(5_000_000), text: "b".repeat(5_000_000) })
        )
        assert.strictEqual(standIn.received(messageId).html?.length, 5_000_000)
      })
    )

    it.effect("keeps a sender name with quotes, a backslash and a comma intact", () =>
      Effect.gen(function* () {
        const standIn = yield* PostmarkStandIn
        const provider = yield* EmailProvider.EmailProvider
        const name = 'Acme "Best" \\ Billing, Inc. — Zoë'
        const { messageId } = yield* provider.send(message({ from: { address: "billing@acme.example", name } }))
        assert.deepStrictEqual(standIn.received(messageId).from, { address: "billing@acme.example", name })
      })
    )

    it.effect("sends a sender without a name as the bare address", () =>
      Effect.gen(function* () {
        const standIn = yield* PostmarkStandIn
        const provider = yield* EmailProvider.EmailProvider
        const { messageId } = yield* provider.send(message({ from: { address: "billing@acme.example" } }))
        assert.strictEqual(lastBody(standIn).From, "billing@acme.example")
        assert.deepStrictEqual(standIn.received(messageId).from, { address: "billing@acme.example" })
      })
    )

    it.effect("sends 50 recipients across To, Cc and Bcc, the limit it declares", () =>
      Effect.gen(function* () {
        const standIn = yield* PostmarkStandIn
        const provider = yield* EmailProvider.EmailProvider
        const addresses = (n: number, prefix: string) =>
          Array.from({ length: n }, (_, i) => `${prefix}${i}@example.com`)
        const { maxRecipients } = provider.limits
        const to = addresses(maxRecipients - 20, "t")
        const { messageId } = yield* provider.send(message({ to, cc: addresses(10, "c"), bcc: addresses(10, "b") }))
        const received = standIn.received(messageId)
        assert.strictEqual(received.to.length + received.cc.length + received.bcc.length, maxRecipients)
        const error = yield* Effect.flip(
          provider.send(
            message({ to: [...to, "one-more@example.com"], cc: addresses(10, "c"), bcc: addresses(10, "b") })
          )
        )
        assert.strictEqual(error.reason._tag, "InvalidRequest")
      })
    )

    it.effect("sends a message of the declared maximum size, counted after base64", () =>
      Effect.gen(function* () {
        const standIn = yield* PostmarkStandIn
        const provider = yield* EmailProvider.EmailProvider
        const text = "See attached."
        // Raw bytes whose base64 plus the text is exactly the declared maximum.
        const raw = Math.floor((provider.limits.maxMessageBytes - text.length) / 4) * 3
        const content = new Uint8Array(raw).fill(7)
        const { messageId } = yield* provider.send(
          message({ text, attachments: [{ filename: "big.pdf", contentType: "application/pdf", content }] })
        )
        assert.deepStrictEqual(standIn.received(messageId).attachments[0]?.content, content)
      })
    )

    it.effect("refuses every extension it declares forbidden, as Postmark does", () =>
      Effect.gen(function* () {
        const provider = yield* EmailProvider.EmailProvider
        for (const extension of provider.limits.forbiddenExtensions) {
          const filename = `file.${extension.toUpperCase()}`
          const error = yield* Effect.flip(
            provider.send(
              message({
                attachments: [{ filename, contentType: "application/octet-stream", content: new Uint8Array([1]) }]
              })
            )
          )
          assert.strictEqual(error.reason._tag, "InvalidRequest")
          assert.include(error.message, filename)
        }
        assert.isAtLeast(provider.limits.forbiddenExtensions.length, StandIn.forbiddenExtensions.size)
      })
    )
  })

  it.effect("sends on the configured message stream", () =>
    withStandIn({ streams: ["outbound", "receipts"] }, (standIn) =>
      Effect.gen(function* () {
        const provider = yield* providerFor(standIn, { messageStream: "receipts" })
        const { messageId } = yield* provider.send(message())
        assert.strictEqual(standIn.accepted.find((m) => m.messageId === messageId)?.fields.MessageStream, "receipts")
      })
    )
  )

  it.effect(
    "simulator: true sends to Postmark's bounce-testing domain with the bounce type; refuses what it cannot",
    () =>
      withStandIn({}, (standIn) =>
        Effect.gen(function* () {
          const provider = yield* providerFor(standIn, { simulator: true })
          const { messageId } = yield* provider.send(
            message({ to: ["bounced+alice@simulator.mailroom.test", "carol@example.com"] })
          )
          const fields = standIn.accepted.find((m) => m.messageId === messageId)?.fields ?? {}
          assert.strictEqual(fields.To, "bounced+alice@bounce-testing.postmarkapp.com, carol@example.com")
          assert.deepStrictEqual(fields.Headers, [{ Name: "X-PM-Bounce-Type", Value: "HardBounce" }])
          const requests = standIn.requests.length
          for (const [to, says] of [
            [["delivered@simulator.mailroom.test"], "sandbox server"],
            [["bounced@simulator.mailroom.test", "complained@simulator.mailroom.test"], "one bounce type per message"]
          ] as const) {
            const error = yield* Effect.flip(provider.send(message({ to: [...to] })))
            assert.strictEqual(error.reason._tag, "InvalidRequest")
            assert.include(error.message, says)
          }
          const off = yield* providerFor(standIn)
          const error = yield* Effect.flip(off.send(message({ to: ["bounced@simulator.mailroom.test"] })))
          assert.include(error.message, "which Postmark would bounce for real")
          assert.strictEqual(standIn.requests.length, requests, "nothing reached Postmark")
        })
      )
  )

  it.effect("tagFrom names the tag that becomes Postmark's Tag; without it no Tag is sent", () =>
    withStandIn({}, (standIn) =>
      Effect.gen(function* () {
        const provider = yield* providerFor(standIn, { tagFrom: "flow" })
        const tags = [
          { name: "category", value: "receipt" },
          { name: "flow", value: "checkout" }
        ]
        const tagged = yield* provider.send(message({ tags }))
        const fieldsOf = (id: string) => standIn.accepted.find((m) => m.messageId === id)?.fields ?? {}
        assert.strictEqual(fieldsOf(tagged.messageId).Tag, "checkout")
        const untagged = yield* provider.send(message({ tags: [{ name: "category", value: "receipt" }] }))
        assert.notProperty(fieldsOf(untagged.messageId), "Tag")
        assert.deepStrictEqual(fieldsOf(untagged.messageId).Metadata, { category: "receipt" })
      })
    )
  )

  it.effect("reports a message stream the server lacks as a configuration error", () =>
    withStandIn({}, (standIn) =>
      Effect.gen(function* () {
        const provider = yield* providerFor(standIn, { messageStream: "receipts" })
        const error = yield* Effect.flip(provider.send(message()))
        assert.strictEqual(error.reason._tag, "Unknown")
        assert.include(error.message, "messageStream")
        assert.isFalse(error.isRetryable)
      })
    )
  )

  it.effect("takes the server token as a plain string too", () =>
    withStandIn({}, (standIn) =>
      Effect.gen(function* () {
        const provider = yield* PostmarkEmailProvider.make({
          serverToken: standIn.token,
          requestHost: standIn.host,
          useHttps: false
        })
        const { messageId } = yield* provider.send(message())
        assert.strictEqual(standIn.received(messageId).subject, "Your invoice")
      })
    )
  )

  it.effect("declares what a send holds: from a token the body goes as a Blob with the files' base64 in it", () =>
    withStandIn({}, (standIn) =>
      Effect.gen(function* () {
        const bodies: Array<unknown> = []
        const original = globalThis.fetch
        const provider = yield* providerFor(standIn)
        // Measured by `pnpm bench memory` with the body a Blob; a string body is kept whole beside
        // fetch's UTF-8 copy of it, and the message's base64 beside both.
        assert.strictEqual(provider.limits.heldPerAttachmentByte, 5)
        const files = [new Uint8Array([0, 1, 2, 253, 254]), new Uint8Array(0), new Uint8Array(70_000).fill(9)]
        globalThis.fetch = (input, init) => {
          bodies.push(init?.body)
          return original(input, init)
        }
        const { messageId } = yield* provider
          .send(
            message({
              subject: 'A "quoted" subject',
              attachments: files.map((content, i) => ({
                filename: `f${i}.pdf`,
                contentType: "application/pdf",
                content
              }))
            })
          )
          .pipe(
            Effect.ensuring(
              Effect.sync(() => {
                globalThis.fetch = original
              })
            )
          )
        assert.instanceOf(bodies[0], Blob)
        assert.deepStrictEqual(
          (lastBody(standIn).Attachments as Array<{ Content: string }>).map((a) => a.Content),
          files.map((f) => Buffer.from(f).toString("base64"))
        )
        assert.deepStrictEqual(
          standIn.received(messageId).attachments.map((a) => a.content),
          files
        )
      })
    )
  )

  it.effect("declares more held through a client of your own, which is given the message's base64", () =>
    withStandIn({}, (standIn) =>
      Effect.gen(function* () {
        const bodies: Array<unknown> = []
        const client = new ServerClient(standIn.token, {
          useHttps: false,
          requestHost: standIn.host,
          timeout: 5,
          fetch: (input, init) => {
            bodies.push(init?.body)
            return fetch(input, init)
          }
        })
        const provider = yield* PostmarkEmailProvider.make({ client })
        assert.strictEqual(provider.limits.heldPerAttachmentByte, 6)
        const pdf = new Uint8Array([37, 80, 68, 70, 0, 255])
        yield* provider.send(
          message({ attachments: [{ filename: "a.pdf", contentType: "application/pdf", content: pdf }] })
        )
        assert.isString(bodies[0])
        assert.strictEqual(
          (lastBody(standIn).Attachments as Array<{ Content: string }>)[0]?.Content,
          Buffer.from(pdf).toString("base64")
        )
      })
    )
  )

  it.effect("sends through an injected client", () =>
    withStandIn({}, (standIn) =>
      Effect.gen(function* () {
        let calls = 0
        const client = new ServerClient(standIn.token, {
          useHttps: false,
          requestHost: standIn.host,
          timeout: 5,
          fetch: (input, init) => {
            calls++
            return fetch(input, init)
          }
        })
        const provider = yield* PostmarkEmailProvider.make({ client })
        const { messageId } = yield* provider.send(message())
        assert.strictEqual(calls, 1)
        assert.strictEqual(standIn.received(messageId).to[0], "alice@example.com")
      })
    )
  )

  it.effect("reads its options from Config with layerConfig", () =>
    withStandIn({}, (standIn) =>
      Effect.gen(function* () {
        const provider = yield* EmailProvider.EmailProvider
        assert.strictEqual(provider.name, "postmark")
        const { messageId } = yield* provider.send(message())
        assert.strictEqual(standIn.received(messageId).from.name, "Acme Billing")
      }).pipe(
        Effect.provide(
          PostmarkEmailProvider.layerConfig({
            serverToken: Config.Redacted("POSTMARK_SERVER_TOKEN"),
            requestHost: Config.String("POSTMARK_REQUEST_HOST"),
            useHttps: Config.Boolean("POSTMARK_USE_HTTPS")
          }).pipe(
            Layer.provide(
              ConfigProvider.layer(
                ConfigProvider.fromUnknown({
                  POSTMARK_SERVER_TOKEN: standIn.token,
                  POSTMARK_REQUEST_HOST: standIn.host,
                  POSTMARK_USE_HTTPS: "false"
                })
              )
            )
          )
        )
      )
    )
  )
})

describe("PostmarkEmailProvider options", () => {
  const valid = {
    POSTMARK_SERVER_TOKEN: "pm-server-token",
    POSTMARK_REQUEST_HOST: "127.0.0.1:1",
    POSTMARK_MESSAGE_STREAM: "outbound",
    POSTMARK_TAG_FROM: "category",
    POSTMARK_TIMEOUT: "5 seconds"
  }
  const fromConfig = (env: Record<string, string>) =>
    PostmarkEmailProvider.layerConfig({
      serverToken: Config.Redacted("POSTMARK_SERVER_TOKEN"),
      requestHost: Config.String("POSTMARK_REQUEST_HOST"),
      messageStream: Config.String("POSTMARK_MESSAGE_STREAM"),
      tagFrom: Config.String("POSTMARK_TAG_FROM"),
      timeout: Config.Duration("POSTMARK_TIMEOUT")
    }).pipe(Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({ ...valid, ...env }))))
  const fromOptions = (options: Partial<PostmarkEmailProvider.ConfigOptions>) =>
    PostmarkEmailProvider.layer({
      serverToken: valid.POSTMARK_SERVER_TOKEN,
      requestHost: valid.POSTMARK_REQUEST_HOST,
      ...options
    })

  const cases = [
    { option: "serverToken", env: { POSTMARK_SERVER_TOKEN: "  " }, options: { serverToken: Redacted.make("  ") } },
    // A character an HTTP header cannot carry: fetch's own error would quote its code, part of the secret.
    {
      option: "serverToken",
      env: { POSTMARK_SERVER_TOKEN: "tok\u2026en" },
      options: { serverToken: Redacted.make("tok\u2026en") }
    },
    {
      option: "requestHost",
      env: { POSTMARK_REQUEST_HOST: "https://api.postmarkapp.com" },
      options: { requestHost: "https://api.postmarkapp.com" }
    },
    { option: "messageStream", env: { POSTMARK_MESSAGE_STREAM: " " }, options: { messageStream: " " } },
    { option: "tagFrom", env: { POSTMARK_TAG_FROM: "a tag" }, options: { tagFrom: "a tag" } },
    { option: "timeout", env: { POSTMARK_TIMEOUT: "0 seconds" }, options: { timeout: "0 seconds" as const } }
  ]
  for (const { option, env, options } of cases) {
    it.effect(`a bad ${option} fails layerConfig and layer with a ConfigError naming it`, () =>
      Effect.gen(function* () {
        const configured = yield* expectConfigError(fromConfig(env), option)
        const given = yield* expectConfigError(fromOptions(options), option)
        assert.strictEqual(given, configured)
      })
    )
  }

  it.effect("the message never holds the refused value, which may carry a secret", () =>
    Effect.gen(function* () {
      yield* expectConfigError(fromOptions({ requestHost: "proxy:pm-proxy-secret@10.0.0.1:8080" }), "requestHost", {
        secrets: ["pm-proxy-secret"]
      })
    })
  )
})
