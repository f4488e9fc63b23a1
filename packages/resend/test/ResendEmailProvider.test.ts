// The Resend provider against the stand-in: core's conformance suite, then what reaches Resend for each
// part of a message (headers, tags, metadata, inline parts, the Idempotency-Key) and each option check.
import { assert, describe, it, layer } from "@effect/vitest"
import { EmailProvider } from "@mailroom/core"
import { EmailProviderSuite, expectConfigError, outboundEmail } from "@mailroom/core/testing"
import { Config, ConfigProvider, Effect, Layer, Redacted } from "effect"
import { ResendEmailProvider } from "../src/index.js"
import * as StandIn from "./ResendStandIn.js"
import { ResendStandIn } from "./ResendStandIn.js"

const providerFor = (standIn: StandIn.StandIn) =>
  ResendEmailProvider.make({ apiKey: Redacted.make(standIn.apiKey), baseUrl: standIn.url, timeout: "5 seconds" })

const ProviderLive = Layer.effect(EmailProvider.EmailProvider, ResendStandIn.use(providerFor)).pipe(
  Layer.provideMerge(ResendStandIn.layer())
)

EmailProviderSuite("resend", {
  layer: ProviderLive,
  read: (messageId) => ResendStandIn.use((standIn) => Effect.sync(() => standIn.received(messageId)))
})

const message = (parts: Partial<EmailProvider.OutboundEmail> = {}) =>
  outboundEmail({ from: { address: "billing@acme.example", name: "Acme Billing" }, ...parts })

const lastBody = (standIn: StandIn.StandIn) =>
  JSON.parse(standIn.requests.at(-1)?.body ?? "null") as Record<string, unknown>

describe("ResendEmailProvider", () => {
  layer(ProviderLive)((it) => {
    it.effect("sends POST /emails with the bearer key and Resend's field names; the message id is Resend's id", () =>
      Effect.gen(function* () {
        const standIn = yield* ResendStandIn
        const provider = yield* EmailProvider.EmailProvider
        const pdf = new Uint8Array([37, 80, 68, 70, 0, 255, 1])
        const logo = new Uint8Array([137, 80, 78, 71])
        const { messageId } = yield* provider.send(
          message({
            to: ["alice@example.com", "bob@example.com"],
            cc: ["carol@example.com"],
            bcc: ["dave@example.com"],
            replyTo: ["help@acme.example"],
            html: '<p>See attached.</p><img src="cid:logo">',
            attachments: [
              { filename: "invoice.pdf", contentType: "application/pdf", content: pdf },
              { filename: "logo.png", contentType: "image/png", content: logo, contentId: "logo" }
            ],
            headers: [
              { name: "List-Unsubscribe", value: "<https://acme.example/u/1>" },
              { name: "List-Unsubscribe-Post", value: "List-Unsubscribe=One-Click" }
            ],
            tags: [{ name: "category", value: "invoice" }],
            metadata: { "mailroom-org": "org_acme" }
          })
        )
        const request = standIn.requests.at(-1)
        assert.strictEqual(request?.method, "POST")
        assert.strictEqual(request?.path, "/emails")
        assert.strictEqual(request?.headers.authorization, `Bearer ${standIn.apiKey}`)
        assert.strictEqual(request?.headers["content-type"], "application/json")
        assert.isUndefined(request?.headers["idempotency-key"])
        assert.strictEqual(request?.status, 200)
        assert.deepStrictEqual(lastBody(standIn), {
          from: '"Acme Billing" <billing@acme.example>',
          to: ["alice@example.com", "bob@example.com"],
          cc: ["carol@example.com"],
          bcc: ["dave@example.com"],
          reply_to: ["help@acme.example"],
          subject: "Your invoice",
          html: '<p>See attached.</p><img src="cid:logo">',
          text: "See attached.",
          headers: {
            "List-Unsubscribe": "<https://acme.example/u/1>",
            "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"
          },
          tags: [
            { name: "category", value: "invoice" },
            { name: "mailroom-org", value: "org_acme" }
          ],
          attachments: [
            { filename: "invoice.pdf", content: "JVBERgD/AQ==", content_type: "application/pdf" },
            { filename: "logo.png", content: "iVBORw==", content_type: "image/png", content_id: "logo" }
          ]
        })
        assert.strictEqual(messageId, standIn.accepted.at(-1)?.id)
      })
    )

    it.effect(
      "an organisation id Resend would refuse as a tag travels as base64url, and wins over a caller's tag",
      () =>
        Effect.gen(function* () {
          const standIn = yield* ResendStandIn
          const provider = yield* EmailProvider.EmailProvider
          yield* provider.send(
            message({
              tags: [{ name: "mailroom-org", value: "forged" }],
              metadata: { "mailroom-org": "acme.example/eu" }
            })
          )
          assert.deepStrictEqual(lastBody(standIn).tags, [
            { name: "mailroom-org", value: `b64_${Buffer.from("acme.example/eu").toString("base64url")}` }
          ])
        })
    )

    it.effect(
      "the idempotency key core derives goes as Idempotency-Key, and Resend replays instead of sending twice",
      () =>
        Effect.gen(function* () {
          const standIn = yield* ResendStandIn
          const provider = yield* EmailProvider.EmailProvider
          const before = standIn.accepted.length
          const email = message({ idempotencyKey: "mailroom-0123abcd" })
          const first = yield* provider.send(email)
          const second = yield* provider.send(email)
          assert.strictEqual(standIn.requests.at(-1)?.headers["idempotency-key"], "mailroom-0123abcd")
          assert.strictEqual(second.messageId, first.messageId)
          assert.strictEqual(standIn.accepted.length, before + 1)
        })
    )

    it.effect("two headers of one name are refused before anything is sent", () =>
      Effect.gen(function* () {
        const standIn = yield* ResendStandIn
        const provider = yield* EmailProvider.EmailProvider
        const requests = standIn.requests.length
        const error = yield* Effect.flip(
          provider.send(
            message({
              headers: [
                { name: "X-Entity-Ref", value: "1" },
                { name: "x-entity-ref", value: "2" }
              ]
            })
          )
        )
        assert.strictEqual(error.reason._tag, "InvalidRequest")
        assert.include(error.message, "x-entity-ref")
        assert.strictEqual(standIn.requests.length, requests)
      })
    )

    it.effect("a sender name with quotes or backslashes goes as encoded-words and arrives intact", () =>
      Effect.gen(function* () {
        const standIn = yield* ResendStandIn
        const provider = yield* EmailProvider.EmailProvider
        const name = 'Acme "Billing" \\ Team'
        const { messageId } = yield* provider.send(message({ from: { address: "billing@acme.example", name } }))
        assert.match(String(lastBody(standIn).from), /^=\?UTF-8\?B\?.+\?= <billing@acme\.example>$/)
        assert.strictEqual(standIn.received(messageId).from.name, name)
      })
    )
  })

  it("declares Resend's limits", () => {
    assert.strictEqual(ResendEmailProvider.limits.maxRecipients, 50)
    assert.strictEqual(ResendEmailProvider.limits.maxMessageBytes, 40_000_000)
    for (const extension of ["exe", "js", "vbs", "ps1", "msh1xml", "bat"]) {
      assert.include(ResendEmailProvider.limits.forbiddenExtensions, extension)
    }
    assert.notInclude(ResendEmailProvider.limits.forbiddenExtensions, "pdf")
  })

  it.effect("declares what a send holds, its body a Blob with the files' base64 in it (pnpm bench memory)", () =>
    Effect.gen(function* () {
      const standIn = yield* StandIn.make()
      const bodies: Array<unknown> = []
      const provider = yield* ResendEmailProvider.make({
        apiKey: standIn.apiKey,
        baseUrl: standIn.url,
        client: (input, init) => {
          bodies.push(init?.body)
          return fetch(input, init)
        }
      })
      // Measured with the body a Blob: a string body is kept whole beside fetch's UTF-8 copy of it.
      assert.strictEqual(provider.limits.heldPerAttachmentByte, 5)
      const files = [new Uint8Array([0, 1, 2, 253, 254]), new Uint8Array(0), new Uint8Array(70_000).fill(9)]
      const { messageId } = yield* provider.send(
        message({
          subject: 'A "quoted" subject',
          attachments: files.map((content, i) => ({ filename: `f${i}.pdf`, contentType: "application/pdf", content }))
        })
      )
      assert.instanceOf(bodies[0], Blob)
      const sent = lastBody(standIn).attachments as Array<{ content: string }>
      assert.deepStrictEqual(
        sent.map((a) => a.content),
        files.map((f) => Buffer.from(f).toString("base64"))
      )
      assert.deepStrictEqual(
        standIn.received(messageId).attachments.map((a) => a.content),
        files
      )
    }).pipe(Effect.scoped)
  )
})

describe("ResendEmailProvider options", () => {
  const fromConfig = (values: Record<string, unknown>) =>
    ResendEmailProvider.layerConfig({
      apiKey: Config.Redacted("RESEND_API_KEY"),
      baseUrl: Config.String("RESEND_BASE_URL").pipe(Config.withDefault(undefined)),
      timeout: Config.String("RESEND_TIMEOUT").pipe(Config.withDefault(undefined)) as Config.Config<
        ResendEmailProvider.ConfigOptions["timeout"]
      >
    }).pipe(Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown(values))))

  const cases: ReadonlyArray<readonly [string, Record<string, unknown>, string]> = [
    ["an empty apiKey", { RESEND_API_KEY: " " }, "apiKey"],
    ["an apiKey with a line break", { RESEND_API_KEY: "re_abc\nx" }, "apiKey"],
    ["an apiKey with a character no HTTP header carries", { RESEND_API_KEY: "re_abc\u2026" }, "apiKey"],
    ["a baseUrl that is not http(s)", { RESEND_API_KEY: "re_abc", RESEND_BASE_URL: "ftp://api.resend.com" }, "baseUrl"],
    ["a baseUrl with a query", { RESEND_API_KEY: "re_abc", RESEND_BASE_URL: "https://api.resend.com?x=1" }, "baseUrl"],
    ["a timeout of zero", { RESEND_API_KEY: "re_abc", RESEND_TIMEOUT: "0 seconds" }, "timeout"]
  ]
  for (const [what, values, option] of cases) {
    it.effect(`${what} fails layerConfig with a ConfigError naming ${option}, never the value`, () =>
      Effect.gen(function* () {
        yield* expectConfigError(fromConfig(values), option, { secrets: ["re_abc"] })
      })
    )
  }

  it.effect("a missing RESEND_API_KEY fails layerConfig with a ConfigError naming it", () =>
    Effect.gen(function* () {
      yield* expectConfigError(fromConfig({}), "RESEND_API_KEY")
    })
  )

  it.effect("layer fails alike for an option it refuses; a client that is no function is refused", () =>
    Effect.gen(function* () {
      yield* expectConfigError(ResendEmailProvider.layer({ apiKey: "" }), "apiKey")
      yield* expectConfigError(
        ResendEmailProvider.make({ apiKey: "re_abc", client: "fetch" as unknown as typeof fetch }),
        "client"
      )
    })
  )

  it.effect("a client sends every request, with the key added", () =>
    Effect.gen(function* () {
      const standIn = yield* StandIn.make()
      const seen: Array<string> = []
      const provider = yield* ResendEmailProvider.make({
        apiKey: standIn.apiKey,
        baseUrl: `${standIn.url}/`,
        client: (input, init) => {
          seen.push(String(input))
          return fetch(input, init)
        }
      })
      const { messageId } = yield* provider.send(message())
      assert.deepStrictEqual(seen, [`${standIn.url}/emails`])
      assert.strictEqual(standIn.received(messageId).subject, "Your invoice")
    }).pipe(Effect.scoped)
  )
})
