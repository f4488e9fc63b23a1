import { createHash } from "node:crypto"
import { SESv2Client } from "@aws-sdk/client-sesv2"
import { assert, describe, it, layer } from "@effect/vitest"
import { EmailProvider, MailEvent, ProviderError } from "@mailroom/core"
import { EmailProviderSuite, expectConfigError, outboundEmail } from "@mailroom/core/testing"
import { Config, ConfigProvider, Effect, Exit, Layer, Redacted } from "effect"
import { SesEmailProvider } from "../src/index.js"
import { Emulator, EmulatorLive, ProviderLive, parseFrom, parseHeader, read, sentRequest, stored } from "./emulator.js"

EmailProviderSuite("SES v2 on aws-ses-v2-local", { layer: ProviderLive(), read })

const message = (parts: Partial<EmailProvider.OutboundEmail> = {}) =>
  outboundEmail({ from: { address: "sender@acme.example" }, subject: "Your receipt", text: "Thanks.", ...parts })

const send = (email: EmailProvider.OutboundEmail) =>
  Effect.gen(function* () {
    const provider = yield* EmailProvider.EmailProvider
    const { messageId } = yield* provider.send(email)
    return yield* stored(messageId)
  })

const encodedWord = /^=\?UTF-8\?B\?[A-Za-z0-9+/]+={0,2}\?=$/

describe("SesEmailProvider on the emulator", () => {
  layer(ProviderLive(), { timeout: 30_000, excludeTestServices: true })((it) => {
    it.effect("a non-ASCII name reaches SES as 7-bit encoded-words outside quotes, each within 75 characters", () =>
      Effect.gen(function* () {
        for (const name of ["Zoë Ångström — Açme, Inc.", `${"é".repeat(40)} 📎 ${"日本語".repeat(12)}`]) {
          const email = yield* send(message({ from: { address: "sender@acme.example", name } }))
          assert.match(email.from, /^[\x20-\x7e]+$/, "the From SES receives must be 7-bit ASCII")
          assert.isTrue(email.from.endsWith(" <sender@acme.example>"))
          const words = email.from.slice(0, -" <sender@acme.example>".length).split(" ")
          for (const word of words) {
            assert.match(word, encodedWord)
            assert.isAtMost(word.length, 75)
          }
          const parsed = yield* parseFrom(email.from)
          assert.deepStrictEqual(parsed, { address: "sender@acme.example", name, count: 1 })
        }
      })
    )

    it.effect("an ASCII name with specials stays one quoted name of one address", () =>
      Effect.gen(function* () {
        const name = 'Acme, Inc. "Billing" <billing@other.example> \\ support'
        const email = yield* send(message({ from: { address: "sender@acme.example", name } }))
        assert.isTrue(email.from.startsWith('"'))
        assert.deepStrictEqual(yield* parseFrom(email.from), { address: "sender@acme.example", name, count: 1 })
      })
    )

    it.effect("without a name the From is the bare address", () =>
      Effect.gen(function* () {
        const email = yield* send(message({ from: { address: "sender@acme.example", name: "" } }))
        assert.strictEqual(email.from, "sender@acme.example")
      })
    )

    it.effect("a Unicode domain is punycoded, as SES requires", () =>
      Effect.gen(function* () {
        const email = yield* send(message({ to: ["anna@bücher.example"], cc: ["carol@example.com"] }))
        assert.deepStrictEqual(email.destination.to, ["anna@xn--bcher-kva.example"])
        assert.deepStrictEqual(email.destination.cc, ["carol@example.com"])
      })
    )

    it.effect("attachments are sent as attachments, not inline", () =>
      Effect.gen(function* () {
        const email = yield* send(
          message({
            attachments: [{ filename: "a.pdf", contentType: "application/pdf", content: new Uint8Array([0, 255]) }]
          })
        )
        assert.strictEqual(email.attachments[0]?.contentDisposition, "ATTACHMENT")
        assert.strictEqual(email.attachments[0]?.content, "AP8=")
      })
    )

    it.effect("the body is the SDK's own, byte for byte, signed over what is sent", () =>
      Effect.gen(function* () {
        const { url } = yield* Emulator
        const bytes = new Uint8Array(300_002)
        for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 2654435761) >>> 24
        // A view into a larger buffer, of a length that is no multiple of 3; an empty file; an inline part.
        const email = message({
          html: '<p>"RawContent":"" <img src="cid:logo"></p>',
          attachments: [
            { filename: "scan.pdf", contentType: "application/pdf", content: bytes.subarray(1) },
            { filename: "empty.txt", contentType: "text/plain", content: new Uint8Array(0) },
            {
              filename: "logo.png",
              contentType: "image/png",
              content: new Uint8Array([137, 80, 78, 71]),
              contentId: "logo"
            }
          ]
        })
        const provider = yield* EmailProvider.EmailProvider
        const streamed = yield* sentRequest((yield* provider.send(email)).messageId)
        const client = new SESv2Client({
          region: "us-east-1",
          endpoint: url,
          credentials: { accessKeyId: "AKIDEMULATOR", secretAccessKey: "emulator-secret-key" },
          maxAttempts: 1
        })
        const own = yield* SesEmailProvider.make({ client }).pipe(Effect.scoped)
        const sdk = yield* sentRequest((yield* own.send(email)).messageId)
        client.destroy()
        assert.isTrue(streamed.raw.equals(sdk.raw), "the streamed body differs from the SDK's")
        assert.strictEqual(streamed.headers["content-length"], String(streamed.raw.byteLength))
        assert.strictEqual(
          streamed.headers["x-amz-content-sha256"],
          createHash("sha256").update(streamed.raw).digest("hex")
        )
        const received = yield* stored((yield* provider.send(email)).messageId)
        assert.isTrue(Buffer.from(received.attachments[0]?.content ?? "", "base64").equals(bytes.subarray(1)))
      })
    )

    it.effect("sent again (a retry), the same message goes again, byte for byte", () =>
      Effect.gen(function* () {
        const content = new Uint8Array(100_000).fill(7)
        const email = message({
          attachments: [{ filename: "a.bin", contentType: "application/octet-stream", content }]
        })
        const provider = yield* EmailProvider.EmailProvider
        const first = yield* sentRequest((yield* provider.send(email)).messageId)
        const again = yield* sentRequest((yield* provider.send(email)).messageId)
        assert.isTrue(first.raw.equals(again.raw))
        assert.deepStrictEqual(content, new Uint8Array(100_000).fill(7), "the attachment's bytes are left as they were")
      })
    )

    it.effect("custom headers go in Simple content; a non-ASCII value as encoded-words that decode back", () =>
      Effect.gen(function* () {
        const provider = yield* EmailProvider.EmailProvider
        const { messageId } = yield* provider.send(
          message({
            headers: [
              { name: "X-Campaign", value: "Soldes d'été — 日本語" },
              { name: "X-Plain", value: "=?utf-8?q?x?= stays text" },
              { name: "List-Unsubscribe-Post", value: "List-Unsubscribe=One-Click" }
            ]
          })
        )
        const { headers = [] } = yield* stored(messageId)
        assert.deepStrictEqual(
          headers.map((h) => h.name),
          ["X-Campaign", "X-Plain", "List-Unsubscribe-Post"]
        )
        for (const header of headers) assert.match(header.value, /^[\x20-\x7e]+$/, "SES takes printable ASCII only")
        // What a recipient's parser reads back out of each line SES writes.
        assert.strictEqual(yield* parseHeader(headers[0] ?? { name: "", value: "" }), "Soldes d'été — 日本語")
        assert.strictEqual(yield* parseHeader(headers[1] ?? { name: "", value: "" }), "=?utf-8?q?x?= stays text")
        assert.strictEqual(headers[2]?.value, "List-Unsubscribe=One-Click")
      })
    )

    it.effect("refuses, before calling SES, what SES would refuse of headers, tags and content ids", () =>
      Effect.gen(function* () {
        const provider = yield* EmailProvider.EmailProvider
        const { refused, sent } = yield* Emulator
        const before = sent.length
        const header = (name: string, value = "x") => ({ name, value })
        const cases: ReadonlyArray<readonly [Partial<EmailProvider.OutboundEmail>, string]> = [
          [{ headers: [header("Return-Path", "<bounce@acme.example>")] }, "Return-Path"],
          [{ headers: [header("reply-to", "other@acme.example")] }, "reply-to"],
          [{ headers: Array.from({ length: 16 }, (_, i) => header(`X-Header-${i}`)) }, "at most 15"],
          // SES's MessageHeader takes a value of at most 870 characters (as written, encoded-words included).
          [{ headers: [header("X-Long", "a".repeat(871))] }, "X-Long"],
          // 270 characters, written as 904 of encoded-words.
          [{ headers: [header("X-Long", "é".repeat(270))] }, "X-Long"],
          [{ tags: [{ name: "campaign", value: "spring sale" }] }, "campaign"],
          [
            {
              tags: [{ name: MailEvent.organizationKey, value: "org_other" }],
              metadata: { [MailEvent.organizationKey]: "org_acme" }
            },
            MailEvent.organizationKey
          ],
          [
            {
              attachments: [
                {
                  filename: "logo.png",
                  contentType: "image/png",
                  content: new Uint8Array([1]),
                  contentId: `${"c".repeat(79)}`
                }
              ]
            },
            "logo.png"
          ]
        ]
        for (const [parts, named] of cases) {
          const error = yield* Effect.flip(provider.send(message(parts)))
          assert.strictEqual(error.reason._tag, "InvalidRequest")
          assert.include(error.message, named)
        }
        assert.strictEqual(sent.length, before, "a refused message reached SES")
        assert.strictEqual(refused.length, 0, "SES was left to refuse a message")
        // At the limits, SES takes it.
        yield* provider.send(
          message({
            headers: [
              ...Array.from({ length: 14 }, (_, i) => header(`X-Header-${i}`)),
              header("X-Long", "a".repeat(870))
            ]
          })
        )
        assert.strictEqual(sent.length, before + 1)
      })
    )

    it.effect("the caller's tags go in EmailTags beside core's metadata, as SES hands them back in events", () =>
      Effect.gen(function* () {
        const provider = yield* EmailProvider.EmailProvider
        const { messageId } = yield* provider.send(
          message({
            metadata: {
              [MailEvent.organizationKey]: "org_acme",
              [MailEvent.messageKey]: "0195f0c8-7d3e-7c41-9d2b-5b1e2f3a4c5d"
            },
            tags: [
              { name: "category", value: "receipt" },
              { name: "order_id", value: "ord-42" }
            ]
          })
        )
        const { body } = yield* sentRequest(messageId)
        assert.deepStrictEqual(body.EmailTags, [
          { Name: MailEvent.organizationKey, Value: "org_acme" },
          { Name: MailEvent.messageKey, Value: "0195f0c8-7d3e-7c41-9d2b-5b1e2f3a4c5d" },
          { Name: "category", Value: "receipt" },
          { Name: "order_id", Value: "ord-42" }
        ])
      })
    )

    it.effect("an inline part is sent INLINE with its ContentId; a plain attachment has none", () =>
      Effect.gen(function* () {
        const email = yield* send(
          message({
            html: '<img src="cid:logo">',
            attachments: [
              { filename: "logo.png", contentType: "image/png", content: new Uint8Array([137, 80]), contentId: "logo" },
              { filename: "a.pdf", contentType: "application/pdf", content: new Uint8Array([37]) }
            ]
          })
        )
        assert.deepStrictEqual(
          email.attachments.map((a) => [a.filename, a.contentDisposition, a.contentId]),
          [
            ["logo.png", "INLINE", "logo"],
            ["a.pdf", "ATTACHMENT", undefined]
          ]
        )
      })
    )

    it.effect("declares SES's limits", () =>
      Effect.gen(function* () {
        const { name, limits } = yield* EmailProvider.EmailProvider
        assert.strictEqual(name, "ses")
        assert.strictEqual(limits.maxRecipients, 50)
        assert.strictEqual(limits.maxMessageBytes, 41_943_040)
        assert.strictEqual(limits.maxCustomHeaders, 15)
        for (const header of ["Reply-To", "Return-Path", "From", "Message-ID"]) {
          assert.include(limits.forbiddenHeaders ?? [], header)
        }
        for (const extension of ["exe", "bat", "js", "ps1", "msi", "vbs", "scr", "lnk"]) {
          assert.include(limits.forbiddenExtensions, extension)
        }
        for (const extension of ["pdf", "csv", "png", "zip", "docx", "txt"]) {
          assert.notInclude(limits.forbiddenExtensions, extension)
        }
      })
    )

    it.effect("holds only the attachments' bytes with a client built here; the SDK's body with one of your own", () =>
      Effect.gen(function* () {
        const { url } = yield* Emulator
        assert.strictEqual((yield* EmailProvider.EmailProvider).limits.heldPerAttachmentByte, 1)
        const client = new SESv2Client({ region: "us-east-1", endpoint: url, maxAttempts: 1 })
        const own = yield* SesEmailProvider.make({ client }).pipe(Effect.scoped)
        client.destroy()
        assert.isUndefined(
          own.limits.heldPerAttachmentByte,
          "the SDK's body: core's default, the bytes and their base64"
        )
      })
    )
  })
})

describe("SesEmailProvider with mailroom's simulator addresses", () => {
  it.effect("simulator: true sends each to SES's mailbox simulator, labelled so SES's events map back", () =>
    Effect.gen(function* () {
      const email = yield* send(
        message({
          to: ["bounced+alice@simulator.mailroom.test", "carol@example.com"],
          cc: ["delivered@simulator.mailroom.test"],
          bcc: ["complained@simulator.mailroom.test", "suppressed@simulator.mailroom.test"]
        })
      )
      assert.deepStrictEqual(email.destination, {
        to: ["bounce+mailroom-alice@simulator.amazonses.com", "carol@example.com"],
        cc: ["success+mailroom@simulator.amazonses.com"],
        bcc: ["complaint+mailroom@simulator.amazonses.com", "suppressionlist+mailroom@simulator.amazonses.com"]
      })
    }).pipe(Effect.provide(ProviderLive({ simulator: true })))
  )

  it.effect("refuses, before calling SES, what SES cannot simulate, and any simulator address without the option", () =>
    Effect.gen(function* () {
      for (const [layer, to, says] of [
        [ProviderLive({ simulator: true }), "delayed@simulator.mailroom.test", "no soft bounce and no delay"],
        [ProviderLive({ simulator: true }), "bounce@simulator.mailroom.test", "no mailbox bounce@"],
        [ProviderLive(), "bounced@simulator.mailroom.test", "which SES would bounce for real"]
      ] as const) {
        const error = yield* Effect.flip(
          Effect.flatMap(EmailProvider.EmailProvider, (p) => p.send(message({ to: [to] }))).pipe(Effect.provide(layer))
        )
        assert.isTrue(ProviderError.isProviderError(error) && error.reason._tag === "InvalidRequest")
        assert.include(error.message, says)
        const store = yield* Effect.flatMap(Emulator, ({ url }) =>
          Effect.promise(async () => (await (await fetch(`${url}/store`)).json()) as { emails: Array<unknown> })
        )
        assert.notInclude(JSON.stringify(store), "simulator.mailroom.test", "nothing reached SES")
      }
    }).pipe(Effect.provide(EmulatorLive))
  )
})

describe("SesEmailProvider.layerConfig", () => {
  it.effect("reads its options from Config and sends", () =>
    Effect.gen(function* () {
      const { url } = yield* Emulator
      const provider = SesEmailProvider.layerConfig({
        region: Config.String("AWS_REGION"),
        endpoint: Config.String("SES_ENDPOINT"),
        accessKeyId: Config.Redacted("SES_ACCESS_KEY_ID"),
        secretAccessKey: Config.Redacted("SES_SECRET_ACCESS_KEY"),
        configurationSetName: Config.String("SES_CONFIGURATION_SET").pipe(Config.withDefault(undefined))
      }).pipe(
        Layer.provide(
          ConfigProvider.layer(
            ConfigProvider.fromUnknown({
              AWS_REGION: "eu-west-1",
              SES_ENDPOINT: url,
              SES_ACCESS_KEY_ID: "AKIDCONFIG",
              SES_SECRET_ACCESS_KEY: "config-secret"
            })
          )
        )
      )
      const email = yield* send(message({ subject: "from Config" })).pipe(Effect.provide(provider))
      assert.strictEqual(email.subject, "from Config")
    }).pipe(Effect.provide(EmulatorLive))
  )

  it.effect("fails with a ConfigError when a required option is missing", () =>
    Effect.gen(function* () {
      const exit = yield* Effect.exit(
        Layer.build(SesEmailProvider.layerConfig({ region: Config.String("AWS_REGION") })).pipe(
          Effect.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({}))),
          Effect.scoped
        )
      )
      assert.isTrue(Exit.isFailure(exit))
      assert.include(String(Exit.isFailure(exit) ? exit.cause : ""), "AWS_REGION")
    })
  )
})

describe("SesEmailProvider options", () => {
  const valid = {
    AWS_REGION: "eu-west-1",
    SES_ENDPOINT: "http://127.0.0.1:1",
    SES_ACCESS_KEY_ID: "AKIDOPTIONS",
    SES_SECRET_ACCESS_KEY: "options-secret-key",
    SES_TIMEOUT: "5 seconds",
    SES_CONFIGURATION_SET: "transactional"
  }
  /** Every option from Config, `unset` ones left out, the others valid unless `env` says otherwise. */
  const fromConfig = (env: Record<string, string>, unset: ReadonlyArray<string> = []) => {
    const read = <A>(name: keyof typeof valid, config: Config.Config<A>) =>
      unset.includes(name) ? Config.succeed(undefined) : config
    return SesEmailProvider.layerConfig({
      region: read("AWS_REGION", Config.String("AWS_REGION")),
      endpoint: read("SES_ENDPOINT", Config.String("SES_ENDPOINT")),
      accessKeyId: read("SES_ACCESS_KEY_ID", Config.Redacted("SES_ACCESS_KEY_ID")),
      secretAccessKey: read("SES_SECRET_ACCESS_KEY", Config.Redacted("SES_SECRET_ACCESS_KEY")),
      timeout: read("SES_TIMEOUT", Config.Duration("SES_TIMEOUT")),
      configurationSetName: read("SES_CONFIGURATION_SET", Config.String("SES_CONFIGURATION_SET"))
    }).pipe(Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({ ...valid, ...env }))))
  }
  const fromOptions = (options: SesEmailProvider.Options) =>
    SesEmailProvider.layer({
      region: valid.AWS_REGION,
      endpoint: valid.SES_ENDPOINT,
      accessKeyId: valid.SES_ACCESS_KEY_ID,
      secretAccessKey: valid.SES_SECRET_ACCESS_KEY,
      ...options
    })
  /** What building the layer fails with: a ConfigError naming `option`, and no credential. */
  const refusal = (layer: Layer.Layer<EmailProvider.EmailProvider, Config.ConfigError>, option: string) =>
    expectConfigError(layer, option, { secrets: [valid.SES_SECRET_ACCESS_KEY, valid.SES_ACCESS_KEY_ID] })

  const cases = [
    { option: "region", env: { AWS_REGION: "eu west 1" }, options: { region: "eu west 1" } },
    { option: "endpoint", env: { SES_ENDPOINT: "127.0.0.1:8005" }, options: { endpoint: "127.0.0.1:8005" } },
    {
      option: "secretAccessKey",
      env: { SES_SECRET_ACCESS_KEY: " " },
      options: { secretAccessKey: Redacted.make(" ") }
    },
    { option: "timeout", env: { SES_TIMEOUT: "0 millis" }, options: { timeout: "0 millis" as const } },
    { option: "configurationSetName", env: { SES_CONFIGURATION_SET: " " }, options: { configurationSetName: " " } }
  ]
  for (const { option, env, options } of cases) {
    it.effect(`a bad ${option} fails layerConfig and layer with a ConfigError naming it`, () =>
      Effect.gen(function* () {
        const configured = yield* refusal(fromConfig(env), option)
        const given = yield* refusal(fromOptions(options), option)
        assert.strictEqual(given, configured)
      })
    )
  }

  it.effect("half a credential is refused instead of silently using another one", () =>
    Effect.gen(function* () {
      const configured = yield* refusal(fromConfig({}, ["SES_SECRET_ACCESS_KEY"]), "secretAccessKey")
      const given = yield* refusal(fromOptions({ secretAccessKey: undefined }), "secretAccessKey")
      assert.strictEqual(given, configured)
      assert.include(given, "accessKeyId and secretAccessKey")
      yield* refusal(fromOptions({ accessKeyId: undefined }), "accessKeyId")
      yield* refusal(
        fromOptions({ sessionToken: "token", accessKeyId: undefined, secretAccessKey: undefined }),
        "sessionToken"
      )
    })
  )
})
