// SesSendQuota against the emulator, which answers GetAccount with the account in AWS_SES_ACCOUNT
// (read on each request), and against a stand-in that refuses it as SES does without the permission.
import { assert, it, layer } from "@effect/vitest"
import { Config, Effect } from "effect"
import { SesSendQuota } from "../src/index.js"
import { credentials, Emulator, EmulatorLive } from "./emulator.js"
import { Stub, StubLive, sesError } from "./stub.js"

const account = {
  DedicatedIpAutoWarmupEnabled: false,
  Details: {
    AdditionalContactEmailAddresses: [],
    ContactLanguage: "EN",
    MailType: "TRANSACTIONAL",
    ReviewDetails: { CaseId: "1", Status: "GRANTED" },
    UseCaseDescription: "",
    WebsiteURL: "https://acme.example"
  },
  EnforcementStatus: "HEALTHY",
  ProductionAccessEnabled: true,
  SendingEnabled: true,
  SendQuota: { Max24HourSend: 50000, MaxSendRate: 14, SentLast24Hours: 12 },
  SuppressionAttributes: { SuppressedReasons: [] }
}

layer(EmulatorLive)("SesSendQuota on the emulator", (it) => {
  it.effect("reads MaxSendRate from GetAccount", () =>
    Effect.gen(function* () {
      process.env.AWS_SES_ACCOUNT = JSON.stringify(account)
      const { url } = yield* Emulator
      const read = yield* SesSendQuota.make({ region: "eu-west-1", endpoint: url, ...credentials })
      assert.deepStrictEqual(yield* read, { maxSendRate: 14, max24HourSend: 50000, sentLast24Hours: 12 })
    }).pipe(Effect.scoped, Effect.ensuring(Effect.sync(() => delete process.env.AWS_SES_ACCOUNT)))
  )
})

layer(StubLive)("SesSendQuota refused", (it) => {
  it.effect("an AccessDeniedException is Unavailable naming the exception, never the credentials", () =>
    Effect.gen(function* () {
      const stub = yield* Stub
      stub.answer = () => sesError(403, "AccessDeniedException", "not authorized to perform ses:GetAccount")
      const read = yield* SesSendQuota.make({ region: "eu-west-1", endpoint: stub.url, ...credentials })
      const error = yield* Effect.flip(read)
      assert.strictEqual(error._tag, "Unavailable")
      assert.include(error.message, "AccessDeniedException")
      assert.notInclude(error.message, "emulator-secret-key")
      assert.strictEqual(stub.requests[0]?.path, "/v2/email/account")
    }).pipe(Effect.scoped)
  )
})

it.effect("a bad option fails make with a ConfigError naming it, before any request", () =>
  Effect.gen(function* () {
    for (const [options, option] of [
      [{ accessKeyId: credentials.accessKeyId }, "secretAccessKey"],
      [{ endpoint: "localhost:8005" }, "endpoint"],
      [{ timeout: "Infinity" }, "timeout"]
    ] as const) {
      const error = yield* Effect.flip(Effect.scoped(SesSendQuota.make({ region: "eu-west-1", ...options })))
      assert.instanceOf(error, Config.ConfigError)
      assert.include(error.message, `["${option}"]`)
      assert.notInclude(error.message, "AKIDEMULATOR")
    }
  })
)
