import { createHash } from "node:crypto"
import { assert, describe, it } from "@effect/vitest"
import { Clock, Config, ConfigProvider, Effect, Fiber, Layer, Redacted } from "effect"
import { TestClock } from "effect/testing"
import * as Adapter from "../src/adapter.js"
import { EventSource, ObjectStore } from "../src/index.js"
import { expectConfigError } from "../src/testing/index.js"

describe("invalidOption", () => {
  it("is Effect's ConfigError, naming the option and what it must be, never its value", () => {
    const error = Adapter.invalidOption("signingSecret", "must not be empty")
    assert.instanceOf(error, Config.ConfigError)
    assert.strictEqual(error._tag, "ConfigError")
    assert.include(error.message, "must not be empty")
    assert.include(error.message, `["signingSecret"]`)
    const nested = Adapter.invalidOption(["credentials", "private_key"], "is not a PEM private key")
    assert.include(nested.message, `["credentials"]["private_key"]`)
  })

  it.effect("reaches a layerConfig's caller as the same error type as an option that could not be read", () =>
    Effect.gen(function* () {
      const make = (secret: string) =>
        secret === "" ? Effect.fail(Adapter.invalidOption("secret", "must not be empty")) : Effect.succeed(secret)
      const read: Effect.Effect<string, Config.ConfigError> = Effect.flatMap(Config.String("SECRET"), make)
      const empty = yield* Effect.flip(
        read.pipe(Effect.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({ SECRET: "" }))))
      )
      const missing = yield* Effect.flip(
        read.pipe(Effect.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({}))))
      )
      assert.strictEqual(empty._tag, "ConfigError")
      assert.strictEqual(missing._tag, "ConfigError")
    })
  )
})

describe("attachmentExtensions", () => {
  it("reads a name as any mail client or file system may: folded, invisible characters gone, cut at : and ;", () => {
    const cases: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
      ["report.pdf", ["pdf"]],
      ["Setup.EXE. ", ["exe"]],
      ["evil.ex\u200be", ["exe"]],
      ["evil.\uff45\uff58\uff45", ["exe"]],
      ["evil.exe:stream", ["exe:stream", "exe"]],
      ["evil.exe;.pdf", ["pdf", "exe"]],
      ["notes: part 2.txt", ["txt"]],
      ["README", []]
    ]
    for (const [name, extensions] of cases) assert.deepStrictEqual(Adapter.attachmentExtensions(name), extensions, name)
    assert.strictEqual(Adapter.attachmentExtension("evil.\uff45\uff58\uff45"), "exe")
  })
})

describe("comparing secrets", () => {
  it("constantTimeEqual answers false, never throws, for values of different lengths", () => {
    const bytes = (s: string) => new TextEncoder().encode(s)
    assert.isTrue(Adapter.constantTimeEqual(bytes("secret"), bytes("secret")))
    assert.isFalse(Adapter.constantTimeEqual(bytes("secret"), bytes("secreT")))
    assert.isFalse(Adapter.constantTimeEqual(bytes("secret"), bytes("secret!")))
    assert.isFalse(Adapter.constantTimeEqual(bytes(""), bytes("x")))
  })

  it("secretMatcher takes a plain or sha256: secret; a malformed hash is refused when it is built, naming it", () => {
    const hex = createHash("sha256").update("s3cret").digest("hex")
    for (const secret of ["s3cret", Redacted.make("s3cret"), `sha256:${hex}`, `sha256:${hex.toUpperCase()}`]) {
      const matches = Adapter.secretMatcher(secret, "token")
      assert.isTrue(matches("s3cret"))
      for (const wrong of [undefined, "", "s3cre", "s3cret ", "x".repeat(100_000)]) assert.isFalse(matches(wrong))
    }
    for (const malformed of ["sha256:abcd", "sha256:", `sha256:${hex}0`]) {
      assert.throws(
        () => Adapter.secretMatcher(malformed, "viewer.token"),
        'viewer.token: a hashed secret must be "sha256:" followed by exactly 64 hex digits'
      )
      assert.throws(() => EventSource.secretMatcher(malformed, "eventBridgeSecret"), "eventBridgeSecret: a hashed")
      assert.isString(Adapter.hashedSecretProblem(malformed))
    }
    assert.isUndefined(Adapter.hashedSecretProblem("plain value"))
    assert.throws(() => Adapter.secretMatcher(" ", "token"), "token must not be empty")
  })
})

describe("the memory store's clock", () => {
  it.effect("URLs signed under a TestClock expire when the clock is moved past their lifetime", () =>
    Effect.gen(function* () {
      const store = yield* Clock.clockWith((clock) => Effect.succeed(ObjectStore.makeMemory({ clock })))
      yield* store.put("a/b.txt", new TextEncoder().encode("hi"), "text/plain")
      const url = yield* store.presignGet({ key: "a/b.txt", expiresIn: 60 })
      assert.strictEqual((yield* Effect.promise(() => store.fetch(url))).status, 200)
      yield* TestClock.adjust("61 seconds")
      const expired = yield* Effect.promise(() => store.fetch(url))
      assert.strictEqual(expired.status, 403)
      assert.include(yield* Effect.promise(() => expired.text()), "expired")
    })
  )

  it.effect("layerMemory signs with the layer's Clock", () =>
    Effect.gen(function* () {
      const store = yield* ObjectStore.ObjectStore
      const url = new URL(yield* store.presignGet({ key: "k", expiresIn: 60 }))
      // TestClock starts at 0: the URL expires 60 seconds after the epoch, not an hour from now.
      assert.strictEqual(url.searchParams.get("expires"), "60")
    }).pipe(Effect.provide(Layer.fresh(ObjectStore.layerMemory())))
  )
})

describe("expectConfigError", () => {
  const refusing = Layer.effectDiscard(Effect.fail(Adapter.invalidOption(["auth", "pass"], "must not be s3cret")))

  it("answers the message of a ConfigError naming the option", async () => {
    const message = await Effect.runPromise(expectConfigError(refusing, ["auth", "pass"], { says: /must not be/ }))
    assert.include(message, `["auth"]["pass"]`)
  })

  it("fails a test whose layer builds, fails otherwise, names another option, or shows a secret", async () => {
    for (const check of [
      expectConfigError(Layer.empty, "x"),
      expectConfigError(Layer.effectDiscard(Effect.fail(new Error("no"))), "x"),
      expectConfigError(refusing, "pass"),
      expectConfigError(refusing, ["auth", "pass"], { secrets: ["s3cret"] }),
      expectConfigError(refusing, ["auth", "pass"], { says: /never said/ })
    ]) {
      const exit = await Effect.runPromiseExit(check)
      assert.isTrue(exit._tag === "Failure", "the check must fail")
    }
  })
})

describe("credentialsFromChain", () => {
  it.effect("a chain that finds nothing, or keeps looking past the deadline, is a ConfigError naming the option", () =>
    Effect.gen(function* () {
      const refused = yield* Effect.flip(
        Adapter.credentialsFromChain(() => Promise.reject(new Error("no profile")), "accessKeyId", "none found")
      )
      assert.include(refused.message, `["accessKeyId"]`)
      assert.include(refused.message, "none found (no profile)")
      const looking = yield* Effect.forkChild(
        Effect.flip(Adapter.credentialsFromChain(() => new Promise(() => {}), "keyFilename", "none found"))
      )
      yield* TestClock.adjust(Adapter.credentialChainDeadline)
      const late = yield* Fiber.join(looking)
      assert.include(late.message, `["keyFilename"]`)
      assert.include(late.message, "the chain found none within 5s")
      yield* Adapter.credentialsFromChain(() => Promise.resolve({ accessKeyId: "AKID" }), "accessKeyId", "none found")
    })
  )
})

describe("describeCause", () => {
  it("names each distinct message down the causes, for a log line", () => {
    const refused = new Error("connect ECONNREFUSED 127.0.0.1:5432")
    const error = new Error("PgConnection: Failed to connect", {
      cause: new Error("Failed to connect", { cause: refused })
    })
    assert.strictEqual(
      Adapter.describeCause(error),
      "PgConnection: Failed to connect: connect ECONNREFUSED 127.0.0.1:5432"
    )
    assert.strictEqual(Adapter.describeCause("plain"), "plain")
  })
})
