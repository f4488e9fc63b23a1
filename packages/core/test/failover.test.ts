// EmailProvider.failover on providers scripted to answer each reason: when it moves on and when it
// stops, its circuits on the TestClock, its limits, and what the Mailer records and retries with it.
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Duration, Effect, Exit, Fiber, Layer, Metric } from "effect"
import { TestClock } from "effect/testing"
import { EmailProvider, Mailer, MailroomMetrics, ProviderError } from "../src/index.js"
import { outboundEmail } from "../src/testing/index.js"
import { acme, makeWorld } from "./fixtures.js"

type Answer = ProviderError.Reason | "ok" | Effect.Effect<EmailProvider.SendResult, ProviderError.ProviderError>

/** A provider named `name` that answers each call with `answer()` (its own error, as an adapter's), counting calls. */
const scripted = (name: string, answer: () => Answer = () => "ok", limits = EmailProvider.memoryLimits) => {
  let calls = 0
  const provider: EmailProvider.EmailProvider & { readonly calls: () => number } = {
    name,
    limits,
    calls: () => calls,
    send: () =>
      Effect.suspend(() => {
        calls++
        const given = answer()
        return given === "ok"
          ? Effect.succeed({ messageId: `${name}-${calls}` })
          : Effect.isEffect(given)
            ? given
            : Effect.fail(new ProviderError.ProviderError({ provider: name, reason: given }))
      })
  }
  return provider
}

const email = outboundEmail()

const refused = () => new ProviderError.Unavailable({ message: "connection refused", possiblySent: false })
const dropped = () => new ProviderError.Unavailable({ message: "connection lost after DATA", possiblySent: true })

const failed = <A>(effect: Effect.Effect<A, ProviderError.ProviderError>) =>
  Effect.map(Effect.flip(effect), (error) => {
    assert.isTrue(ProviderError.isProviderError(error))
    return error
  })

describe("EmailProvider.failover", () => {
  it.effect("the primary sends when it can; the secondary is not called", () =>
    Effect.gen(function* () {
      const primary = scripted("smtp")
      const secondary = scripted("postmark")
      const provider = yield* EmailProvider.failover([primary, secondary])
      const result = yield* provider.send(email)
      assert.deepStrictEqual(result, { messageId: "smtp-1", provider: "smtp" })
      assert.strictEqual(secondary.calls(), 0)
    })
  )

  describe("moves to the next provider only when the current one certainly did not take the message", () => {
    const movesOn: ReadonlyArray<readonly [string, () => ProviderError.Reason]> = [
      ["unreachable (Unavailable before sending)", refused],
      ["throttled (RateLimited)", () => new ProviderError.RateLimited({ message: "429" })],
      ["paused (SendingPaused)", () => new ProviderError.SendingPaused({ message: "paused", permanent: false })]
    ]
    for (const [what, reason] of movesOn) {
      it.effect(`${what}: the secondary sends it`, () =>
        Effect.gen(function* () {
          const primary = scripted("smtp", reason)
          const secondary = scripted("postmark")
          const provider = yield* EmailProvider.failover([primary, secondary])
          const result = yield* provider.send(email)
          assert.deepStrictEqual(result, { messageId: "postmark-1", provider: "postmark" })
          assert.deepStrictEqual([primary.calls(), secondary.calls()], [1, 1])
        })
      )
    }

    const stops: ReadonlyArray<readonly [string, () => ProviderError.Reason]> = [
      ["a possible send (Unavailable after sending) stays unknown", dropped],
      ["SenderNotVerified", () => new ProviderError.SenderNotVerified({ message: "not verified" })],
      ["RecipientNotVerified", () => new ProviderError.RecipientNotVerified({ message: "sandbox", recipients: [] })],
      ["RecipientSuppressed", () => new ProviderError.RecipientSuppressed({ message: "550 5.1.1", recipients: [] })],
      ["MessageTooLarge", () => new ProviderError.MessageTooLarge({ message: "552" })],
      ["InvalidRequest", () => new ProviderError.InvalidRequest({ message: "554 5.7.1" })],
      ["Unknown", () => new ProviderError.Unknown({ message: "?" })]
    ]
    for (const [what, reason] of stops) {
      it.effect(`${what}: the primary's answer is final and the secondary is not called`, () =>
        Effect.gen(function* () {
          const primary = scripted("smtp", reason)
          const secondary = scripted("postmark")
          const provider = yield* EmailProvider.failover([primary, secondary])
          const error = yield* failed(provider.send(email))
          assert.strictEqual(error.provider, "smtp")
          assert.strictEqual(error.reason._tag, reason()._tag)
          assert.deepStrictEqual(error.failover, [], "marked as a failover's answer, so the Mailer does not retry it")
          assert.deepStrictEqual([primary.calls(), secondary.calls()], [1, 0])
        })
      )
    }
  })

  it.effect("all fail: the last certainly-not-sent error, retryable, with what the others answered", () =>
    Effect.gen(function* () {
      const primary = scripted("smtp", refused)
      const secondary = scripted(
        "postmark",
        () => new ProviderError.RateLimited({ message: "slow down", retryAfter: Duration.seconds(3) })
      )
      const provider = yield* EmailProvider.failover([primary, secondary])
      const error = yield* failed(provider.send(email))
      assert.strictEqual(error.provider, "postmark")
      assert.strictEqual(error.reason._tag, "RateLimited")
      assert.isTrue(error.isRetryable)
      assert.deepStrictEqual(
        error.failover?.map((e) => [e.provider, e.reason.message]),
        [["smtp", "connection refused"]]
      )
    })
  )

  it.effect("after a failover, a possible send from the secondary stays unknown: nothing is tried after it", () =>
    Effect.gen(function* () {
      const primary = scripted("smtp", refused)
      const secondary = scripted("postmark", dropped)
      const third = scripted("ses")
      const provider = yield* EmailProvider.failover([primary, secondary, third])
      const error = yield* failed(provider.send(email))
      assert.strictEqual(error.provider, "postmark")
      assert.isTrue(error.reason._tag === "Unavailable" && error.reason.possiblySent)
      assert.deepStrictEqual([primary.calls(), secondary.calls(), third.calls()], [1, 1, 0])
    })
  )

  it.effect("a provider given another name answers under it, errors included", () =>
    Effect.gen(function* () {
      const primary = scripted("smtp", refused)
      const secondary = scripted("smtp")
      const provider = yield* EmailProvider.failover([primary, { ...secondary, name: "smtp-backup" }])
      assert.strictEqual((yield* provider.send(email)).provider, "smtp-backup")
      const rejecting = yield* EmailProvider.failover([
        primary,
        { ...scripted("smtp", () => new ProviderError.InvalidRequest({ message: "no" })), name: "smtp-backup" }
      ])
      assert.strictEqual((yield* failed(rejecting.send(email))).provider, "smtp-backup")
    })
  )

  describe("circuits", () => {
    const circuit = { failures: 3, openDuration: "30 seconds" } as const

    it.effect("open after repeated failures: the primary is not called while open, then probed once", () =>
      Effect.gen(function* () {
        let healthy = false
        const primary = scripted("smtp", () => (healthy ? "ok" : refused()))
        const secondary = scripted("postmark")
        const provider = yield* EmailProvider.failover([primary, secondary], { circuit })
        for (let i = 0; i < 10; i++) yield* provider.send(email)
        assert.deepStrictEqual([primary.calls(), secondary.calls()], [3, 10], "called until its circuit opened")

        yield* TestClock.adjust("29 seconds")
        yield* provider.send(email)
        assert.strictEqual(primary.calls(), 3, "still open")

        // Half-open: one send probes it; it fails, so the circuit opens again.
        yield* TestClock.adjust("1 second")
        const probed = yield* provider.send(email)
        assert.deepStrictEqual([primary.calls(), probed.provider], [4, "postmark"])
        yield* provider.send(email)
        assert.strictEqual(primary.calls(), 4, "open again after the failed probe")

        // Recovered: the next probe succeeds and closes the circuit.
        healthy = true
        yield* TestClock.adjust("30 seconds")
        assert.strictEqual((yield* provider.send(email)).provider, "smtp")
        assert.strictEqual((yield* provider.send(email)).provider, "smtp")
        assert.strictEqual(primary.calls(), 6)
      })
    )

    it.effect("half-open: while one send probes the primary, the others go to the secondary", () =>
      Effect.gen(function* () {
        const release = yield* Deferred.make<void>()
        let probing = false
        const primary = scripted("smtp", () =>
          probing ? Effect.as(Deferred.await(release), { messageId: "probe" }) : refused()
        )
        const secondary = scripted("postmark")
        const provider = yield* EmailProvider.failover([primary, secondary], { circuit })
        for (let i = 0; i < 3; i++) yield* provider.send(email)
        yield* TestClock.adjust("30 seconds")
        probing = true
        const probe = yield* Effect.forkChild(provider.send(email))
        yield* Effect.yieldNow
        assert.strictEqual(primary.calls(), 4, "the probe is in flight")
        const meanwhile = yield* provider.send(email)
        assert.strictEqual(meanwhile.provider, "postmark")
        assert.strictEqual(primary.calls(), 4)
        yield* Deferred.succeed(release, undefined)
        assert.strictEqual((yield* Fiber.join(probe)).provider, "smtp")
      })
    )

    it.effect("a rejection is an answer: it resets the failures in a row", () =>
      Effect.gen(function* () {
        const answers: Array<() => ProviderError.Reason | "ok"> = [
          refused,
          refused,
          () => new ProviderError.RecipientSuppressed({ message: "550", recipients: ["a@b"] }),
          refused,
          refused
        ]
        const primary = scripted("smtp", () => answers.shift()?.() ?? "ok")
        const provider = yield* EmailProvider.failover([primary, scripted("postmark")], { circuit })
        for (let i = 0; i < 5; i++) yield* Effect.exit(provider.send(email))
        assert.strictEqual((yield* provider.send(email)).provider, "smtp", "still closed")
      })
    )

    it.effect("possible sends count as failures too: the circuit opens, and later messages go elsewhere", () =>
      Effect.gen(function* () {
        const primary = scripted("smtp", dropped)
        const secondary = scripted("postmark")
        const provider = yield* EmailProvider.failover([primary, secondary], { circuit })
        for (let i = 0; i < 3; i++) {
          const exit = yield* Effect.exit(provider.send(email))
          assert.isTrue(Exit.isFailure(exit))
        }
        assert.strictEqual(secondary.calls(), 0, "none of them was handed on")
        assert.strictEqual((yield* provider.send(email)).provider, "postmark")
        assert.strictEqual(primary.calls(), 3)
      })
    )

    it.effect("every circuit open: Unavailable from the failover itself, nothing called", () =>
      Effect.gen(function* () {
        const primary = scripted("smtp", refused)
        const secondary = scripted("postmark", refused)
        const provider = yield* EmailProvider.failover([primary, secondary], { circuit })
        for (let i = 0; i < 3; i++) yield* Effect.exit(provider.send(email))
        const error = yield* failed(provider.send(email))
        assert.strictEqual(error.provider, "failover")
        assert.isTrue(error.reason._tag === "Unavailable" && !error.reason.possiblySent)
        assert.match(error.message, /every provider was skipped while its circuit is open \(smtp, postmark\)/)
        assert.deepStrictEqual([primary.calls(), secondary.calls()], [3, 3])
      })
    )

    it.effect("a Retry-After keeps the circuit open longer", () =>
      Effect.gen(function* () {
        const primary = scripted(
          "resend",
          () => new ProviderError.RateLimited({ message: "429", retryAfter: Duration.minutes(2) })
        )
        const provider = yield* EmailProvider.failover([primary, scripted("postmark")], { circuit })
        for (let i = 0; i < 3; i++) yield* provider.send(email)
        yield* TestClock.adjust("119 seconds")
        yield* provider.send(email)
        assert.strictEqual(primary.calls(), 3)
        yield* TestClock.adjust("1 second")
        yield* provider.send(email)
        assert.strictEqual(primary.calls(), 4)
      })
    )
  })

  it.effect("limits: what every provider accepts", () =>
    Effect.gen(function* () {
      const provider = yield* EmailProvider.failover([
        scripted("a", undefined, {
          maxRecipients: 50,
          maxMessageBytes: 40_000_000,
          forbiddenExtensions: ["exe"],
          maxCustomHeaders: 15,
          forbiddenHeaders: ["Reply-To"]
        }),
        scripted("b", undefined, {
          maxRecipients: 100,
          maxMessageBytes: 10_000_000,
          forbiddenExtensions: ["exe", "bat"],
          maxTags: 10
        })
      ])
      assert.deepStrictEqual(provider.limits, {
        maxRecipients: 50,
        maxMessageBytes: 10_000_000,
        forbiddenExtensions: ["exe", "bat"],
        maxCustomHeaders: 15,
        maxTags: 10,
        forbiddenHeaders: ["reply-to"]
      })
    })
  )

  it.effect("limits: the most memory any provider holds per attachment byte, the default for one that says none", () =>
    Effect.gen(function* () {
      const limits = (heldPerAttachmentByte?: number) => ({
        ...EmailProvider.memoryLimits,
        ...(heldPerAttachmentByte === undefined ? {} : { heldPerAttachmentByte })
      })
      const held = (a: number | undefined, b: number | undefined) =>
        Effect.map(
          EmailProvider.failover([scripted("a", undefined, limits(a)), scripted("b", undefined, limits(b))]),
          (provider) => provider.limits.heldPerAttachmentByte
        )
      assert.strictEqual(yield* held(1, 3), 3)
      assert.strictEqual(yield* held(1, undefined), 1 + 4 / 3)
      assert.isUndefined(yield* held(undefined, undefined))
    })
  )

  it.effect("bad options are a ConfigError naming the option", () =>
    Effect.gen(function* () {
      const twice = yield* Effect.flip(EmailProvider.failover([scripted("smtp"), scripted("smtp")]))
      assert.strictEqual(twice._tag, "ConfigError")
      assert.match(twice.message, /providers\[1\]\.name|providers.*1.*name/)
      assert.match(twice.message, /two providers are named "smtp"/)
      const failures = yield* Effect.flip(
        EmailProvider.failover([scripted("a"), scripted("b")], { circuit: { failures: 0 } })
      )
      assert.match(failures.message, /circuit.*failures/)
      const pause = yield* Effect.flip(
        EmailProvider.failover([scripted("a"), scripted("b")], { circuit: { openDuration: "soon" as never } })
      )
      assert.match(pause.message, /circuit.*openDuration/)
    })
  )
})

describe("EmailProvider.layerFailover", () => {
  it.effect("builds each layer once, in order, under the name given", () => {
    const memory = EmailProvider.makeMemory()
    const primary = scripted("smtp", refused)
    const layer = EmailProvider.layerFailover([
      Layer.succeed(EmailProvider.EmailProvider, primary),
      { name: "memory-backup", layer: Layer.succeed(EmailProvider.EmailProvider, memory) }
    ])
    return Effect.gen(function* () {
      const provider = yield* EmailProvider.EmailProvider
      const result = yield* provider.send(email)
      assert.strictEqual(result.provider, "memory-backup")
      assert.deepStrictEqual([primary.calls(), memory.sent.length], [1, 1])
    }).pipe(Effect.provide(layer))
  })
})

describe("Mailer with a failover", () => {
  const request = {
    from: "billing@acme.example",
    to: ["alice@example.com"],
    subject: "Your invoice",
    body: { text: "See attached." }
  }
  const send = Effect.flatMap(Mailer.Mailer, (mailer) => mailer.send(acme, request))

  it.effect("the record names the provider that sent, and each provider's calls are counted under its name", () => {
    const primary = scripted("smtp", refused)
    const secondary = scripted("postmark")
    return Effect.gen(function* () {
      const provider = yield* EmailProvider.failover([primary, secondary])
      const world = makeWorld({ provider })
      const { response } = yield* Effect.provide(send, world.layer)
      const record = yield* world.log.find(acme.orgId, response.message_id)
      assert.strictEqual(record?.provider, "postmark")
      assert.strictEqual(record?.provider_message_id, "postmark-1")
      const sends = (provider: string, outcome: string) =>
        Effect.map(
          Metric.value(Metric.withAttributes(MailroomMetrics.providerSends, { provider, outcome })),
          (s) => s.count
        )
      assert.strictEqual(yield* sends("smtp", "Unavailable"), 1)
      assert.strictEqual(yield* sends("postmark", "sent"), 1)
      assert.strictEqual(yield* sends("failover", "sent"), 0, "the failover itself is not counted again")
    }).pipe(Effect.provideService(Metric.MetricRegistry, new Map()))
  })

  it.effect("all fail: the Mailer does not retry the failover, each provider is called once", () => {
    const primary = scripted("smtp", refused)
    const secondary = scripted("postmark", () => new ProviderError.Unavailable({ message: "503", possiblySent: false }))
    return Effect.gen(function* () {
      const provider = yield* EmailProvider.failover([primary, secondary])
      const world = makeWorld({ provider })
      const fiber = yield* Effect.forkChild(Effect.flip(Effect.provide(send, world.layer)))
      yield* TestClock.adjust("1 minute")
      const error = yield* Fiber.join(fiber)
      assert.strictEqual(error._tag === "ProviderError" && error.reason._tag, "Unavailable")
      assert.deepStrictEqual([primary.calls(), secondary.calls()], [1, 1])
      const [record] = (yield* world.log.list(acme.orgId, { limit: 10 })).data
      assert.strictEqual(record?.provider, "postmark")
      assert.strictEqual(record?.status, "failed")
      assert.match(record?.reason ?? "", /503 \(before it: smtp: connection refused\)/)
    })
  })
})
