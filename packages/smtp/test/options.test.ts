// Each option check: the bad value fails `layer` and `layerConfig` alike, with a ConfigError naming the
// option and never quoting a secret; and `layerConfig` reading good values sends through smtp-server.
import { generateKeyPairSync } from "node:crypto"
import { assert, describe, it, layer } from "@effect/vitest"
import { EmailProvider } from "@mailroom/core"
import { expectConfigError } from "@mailroom/core/testing"
import { Config, ConfigProvider, Effect, Layer, Redacted } from "effect"
import { SmtpEmailProvider } from "../src/index.js"
import { dkimTestKey, verifyDkim } from "./support/received.js"
import { SmtpPeer } from "./support/SmtpPeer.js"

const key = dkimTestKey()
const pem = (type: "rsa" | "ec", bits = 2048) =>
  (type === "rsa"
    ? generateKeyPairSync("rsa", { modulusLength: bits })
    : generateKeyPairSync("ec", { namedCurve: "P-256" })
  ).privateKey
    .export({ type: "pkcs8", format: "pem" })
    .toString()

const base = { host: "smtp.acme.example" }

const cases: ReadonlyArray<{
  readonly option: ReadonlyArray<string>
  readonly options: Partial<SmtpEmailProvider.ConfigOptions>
  readonly secret?: string
}> = [
  { option: ["host"], options: { host: "" } },
  { option: ["host"], options: { host: "smtp://smtp.acme.example" } },
  { option: ["host"], options: { host: "smtp.acme.example:587" } },
  { option: ["port"], options: { port: 0 } },
  { option: ["port"], options: { port: 70_000 } },
  { option: ["auth", "user"], options: { auth: { user: " ", pass: "p" } } },
  { option: ["auth", "pass"], options: { auth: { user: "mailer", pass: Redacted.make("") } } },
  { option: ["auth", "method"], options: { auth: { user: "mailer", pass: "p", method: "CRAM-MD5" as "PLAIN" } } },
  { option: ["name"], options: { name: "not a host name" } },
  { option: ["connectionTimeout"], options: { connectionTimeout: 0 } },
  { option: ["greetingTimeout"], options: { greetingTimeout: -5 } },
  { option: ["socketTimeout"], options: { socketTimeout: "0 seconds" } },
  { option: ["maxConnections"], options: { maxConnections: 0 } },
  { option: ["maxMessages"], options: { maxMessages: 1.5 } },
  { option: ["limits", "maxRecipients"], options: { limits: { maxRecipients: 0 } } },
  { option: ["limits", "maxMessageBytes"], options: { limits: { maxMessageBytes: -1 } } },
  { option: ["limits", "forbiddenExtensions"], options: { limits: { forbiddenExtensions: ["e x"] } } },
  { option: ["limits", "heldPerAttachmentByte"], options: { limits: { heldPerAttachmentByte: 0.5 } } },
  { option: ["dkim", "domainName"], options: { dkim: { ...key, domainName: "not a domain" } } },
  { option: ["dkim", "keySelector"], options: { dkim: { ...key, keySelector: "" } } },
  {
    option: ["dkim", "privateKey"],
    options: {
      dkim: { ...key, privateKey: "-----BEGIN PRIVATE KEY-----\nnot-a-key-at-all\n-----END PRIVATE KEY-----" }
    },
    secret: "not-a-key-at-all"
  },
  { option: ["dkim", "privateKey"], options: { dkim: { ...key, privateKey: Redacted.make(pem("rsa", 512)) } } },
  { option: ["dkim", "privateKey"], options: { dkim: { ...key, privateKey: pem("ec") } } }
]

describe("option checks", () => {
  for (const { option, options, secret } of cases) {
    it.effect(`${option.join(".")} = ${JSON.stringify(options).slice(0, 60)}: a ConfigError naming it`, () =>
      Effect.gen(function* () {
        yield* expectConfigError(SmtpEmailProvider.layer({ ...base, ...options }), option, {
          secrets: secret === undefined ? ["PRIVATE KEY"] : [secret, "PRIVATE KEY"]
        })
      })
    )
  }

  it.effect("layerConfig fails as layer does, naming the option", () =>
    Effect.gen(function* () {
      const fromConfig = SmtpEmailProvider.layerConfig({
        host: Config.String("SMTP_HOST"),
        port: Config.Int("SMTP_PORT"),
        dkim: {
          domainName: Config.String("DKIM_DOMAIN"),
          keySelector: Config.String("DKIM_SELECTOR"),
          privateKey: Config.Redacted("DKIM_PRIVATE_KEY")
        }
      }).pipe(
        Layer.provide(
          ConfigProvider.layer(
            ConfigProvider.fromUnknown({
              SMTP_HOST: "smtp.acme.example",
              SMTP_PORT: "587",
              DKIM_DOMAIN: "acme.example",
              DKIM_SELECTOR: "mr1",
              DKIM_PRIVATE_KEY: "garbage"
            })
          )
        )
      )
      const configured = yield* expectConfigError(fromConfig, ["dkim", "privateKey"])
      const given = yield* expectConfigError(
        SmtpEmailProvider.layer({ ...base, port: 587, dkim: { ...key, privateKey: "garbage" } }),
        ["dkim", "privateKey"]
      )
      assert.strictEqual(configured, given)
    })
  )

  it.effect("declares what a send holds per attachment byte: 5.5, 6.5 signed with DKIM, or as given", () =>
    Effect.gen(function* () {
      // Measured by `pnpm bench memory`: the composed message is a Buffer built whole before it is sent.
      const held = (options: Partial<SmtpEmailProvider.ConfigOptions>) =>
        Effect.map(SmtpEmailProvider.make({ ...base, ...options }), (p) => p.limits.heldPerAttachmentByte)
      assert.strictEqual(yield* held({}), 5.5)
      assert.strictEqual(yield* held({ dkim: key }), 6.5)
      assert.strictEqual(yield* held({ dkim: key, limits: { heldPerAttachmentByte: 2.5 } }), 2.5)
      assert.strictEqual(SmtpEmailProvider.limits.heldPerAttachmentByte, 5.5)
    }).pipe(Effect.scoped)
  )

  it.effect("a value layerConfig cannot read is a ConfigError too", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        Effect.scoped(
          Layer.build(
            SmtpEmailProvider.layerConfig({ host: Config.String("SMTP_HOST") }).pipe(
              Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({})))
            )
          )
        )
      )
      assert.instanceOf(error, Config.ConfigError)
    })
  )
})

const FromConfig = Layer.unwrap(
  SmtpPeer.use((peer) =>
    Effect.succeed(
      SmtpEmailProvider.layerConfig({
        host: Config.String("SMTP_HOST"),
        port: Config.Port("SMTP_PORT"),
        dkim: {
          domainName: Config.String("DKIM_DOMAIN"),
          keySelector: Config.String("DKIM_SELECTOR"),
          privateKey: Config.Redacted("DKIM_PRIVATE_KEY")
        }
      }).pipe(
        Layer.provide(
          ConfigProvider.layer(
            ConfigProvider.fromUnknown({
              SMTP_HOST: "127.0.0.1",
              SMTP_PORT: String(peer.port),
              DKIM_DOMAIN: key.domainName,
              DKIM_SELECTOR: key.keySelector,
              DKIM_PRIVATE_KEY: key.privateKey
            })
          )
        )
      )
    )
  )
).pipe(Layer.provideMerge(SmtpPeer.layer({ hideSTARTTLS: true })))

describe("layerConfig", () => {
  layer(FromConfig)((it) => {
    it.effect("reads host, port and the DKIM key from Config, and signs with it", () =>
      Effect.gen(function* () {
        const peer = yield* SmtpPeer
        const { messageId } = yield* (yield* EmailProvider.EmailProvider).send({
          from: { address: "billing@acme.example" },
          to: ["alice@example.com"],
          cc: [],
          bcc: [],
          replyTo: [],
          subject: "From Config",
          text: "x",
          attachments: []
        })
        const received = yield* Effect.promise(() => peer.byMessageId(messageId))
        const [signature] = yield* Effect.promise(() => verifyDkim(received.raw, key))
        assert.strictEqual(signature?.result, "pass")
      })
    )
  })
})
