// What a misconfigured SES shows before the first send: no credentials in the SDK's chain fail `make`
// naming accessKeyId, and `verify` (readiness) asks SES with GetAccount, failing only for what would
// fail a send: credentials SES refuses, or no SES to reach.
import { assert, describe, it, layer } from "@effect/vitest"
import { freePort, withoutAwsCredentials } from "@mailroom/test-support"
import { Config, Effect, Redacted } from "effect"
import { SesEmailProvider } from "../src/index.js"
import { credentials, Emulator, EmulatorLive } from "./emulator.js"
import { Stub, StubLive, sesError } from "./stub.js"

const withoutCredentials = withoutAwsCredentials

describe("SesEmailProvider without credentials", () => {
  it.effect("make fails with a ConfigError naming accessKeyId when the SDK's chain finds none", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        Effect.scoped(SesEmailProvider.make({ region: "eu-west-1", endpoint: "http://127.0.0.1:1" }))
      )
      assert.instanceOf(error, Config.ConfigError)
      assert.include(error.message, `["accessKeyId"]`)
      assert.include(error.message, "no AWS credentials were found")
      assert.include(error.message, "AWS_ACCESS_KEY_ID")
    }).pipe(withoutCredentials)
  )

  it.effect("credentials the chain does find (here the environment's) are enough", () =>
    Effect.gen(function* () {
      process.env.AWS_ACCESS_KEY_ID = Redacted.value(credentials.accessKeyId)
      process.env.AWS_SECRET_ACCESS_KEY = Redacted.value(credentials.secretAccessKey)
      const { url } = yield* Emulator
      const provider = yield* SesEmailProvider.make({ region: "eu-west-1", endpoint: url })
      yield* provider.verify ?? Effect.void
    }).pipe(Effect.scoped, withoutCredentials, Effect.provide(EmulatorLive))
  )
})

layer(EmulatorLive)("SesEmailProvider.verify against the emulator", (it) => {
  it.effect("succeeds: the emulator answers GetAccount", () =>
    Effect.gen(function* () {
      const { url } = yield* Emulator
      const provider = yield* SesEmailProvider.make({ region: "eu-west-1", endpoint: url, ...credentials })
      assert.isDefined(provider.verify)
      yield* provider.verify ?? Effect.void
    }).pipe(Effect.scoped)
  )
})

layer(StubLive)("SesEmailProvider.verify against SES's documented refusals", (it) => {
  const verifying = Effect.gen(function* () {
    const stub = yield* Stub
    const provider = yield* SesEmailProvider.make({ region: "eu-west-1", endpoint: stub.url, ...credentials })
    return { stub, verify: provider.verify ?? Effect.void }
  })

  it.effect("refused credentials fail it, naming SES's exception and never the secret", () =>
    Effect.gen(function* () {
      const { stub, verify } = yield* verifying
      stub.answer = () =>
        sesError(403, "UnrecognizedClientException", `The security token included in the request is invalid.`)
      const error = yield* Effect.flip(verify)
      assert.strictEqual(error.provider, "ses")
      assert.strictEqual(error.reason._tag, "Unknown")
      assert.include(error.message, "SES refused the credentials (UnrecognizedClientException)")
      assert.notInclude(error.message, Redacted.value(credentials.secretAccessKey))
      assert.strictEqual(stub.requests.at(-1)?.path, "/v2/email/account")
    }).pipe(Effect.scoped)
  )

  it.effect("no ses:GetAccount permission, or throttling, is still SES answering: it succeeds", () =>
    Effect.gen(function* () {
      const { stub, verify } = yield* verifying
      stub.answer = () => sesError(403, "AccessDeniedException", "not authorized to perform ses:GetAccount")
      yield* verify
      stub.answer = () => sesError(429, "TooManyRequestsException", "Too many requests")
      yield* verify
    }).pipe(Effect.scoped)
  )
})

it.effect("SesEmailProvider.verify: SES on a closed port is Unavailable, nothing possibly sent", () =>
  Effect.gen(function* () {
    const port = yield* Effect.promise(freePort)
    const provider = yield* SesEmailProvider.make({
      region: "eu-west-1",
      endpoint: `http://127.0.0.1:${port}`,
      ...credentials
    })
    const error = yield* Effect.flip(provider.verify ?? Effect.void)
    assert.strictEqual(error.reason._tag, "Unavailable")
    assert.match(error.message, /^could not reach SES: .*ECONNREFUSED/)
  }).pipe(Effect.scoped)
)
