import { assert, describe, it } from "@effect/vitest"
import { Clock, Duration, Effect, Fiber, Layer, Metric } from "effect"
import { TestClock } from "effect/testing"
import {
  EmailProvider,
  IdempotencyStore,
  Mailer,
  MailroomMetrics,
  MessageLog,
  ObjectStore,
  Organizations,
  ProviderError,
  SendQueue,
  SendRateLimiter,
  Suppressions
} from "../src/index.js"
import { RateLimitStoreSuite } from "../src/testing/index.js"
import { acme, organizations } from "./fixtures.js"

RateLimitStoreSuite("memory", { layer: SendRateLimiter.layerStoreMemory })

const message = (recipients: number) => ({
  from: "billing@acme.example",
  to: Array.from({ length: recipients }, (_, i) => `r${i}@example.com`),
  subject: "Hello",
  body: { text: "Hi" }
})

/** A provider that records the (test clock) time and recipients of each call, answering as scripted. */
const recording = (script: (call: number) => ProviderError.Reason | "ok" = () => "ok") => {
  const calls: Array<{ readonly at: number; readonly recipients: number }> = []
  const provider: EmailProvider.EmailProvider = {
    name: "recording",
    limits: EmailProvider.memoryLimits,
    send: (email) =>
      Effect.gen(function* () {
        calls.push({ at: yield* Clock.currentTimeMillis, recipients: email.to.length })
        const outcome = script(calls.length)
        if (outcome !== "ok") return yield* new ProviderError.ProviderError({ provider: "recording", reason: outcome })
        return { messageId: `msg-${calls.length}` }
      })
  }
  return { provider, calls }
}

const mailerWith = (provider: EmailProvider.EmailProvider, limiter: SendRateLimiter.Options) =>
  Mailer.layer().pipe(
    Layer.provide(SendRateLimiter.layerMemory(limiter)),
    Layer.provide(
      Layer.mergeAll(
        Layer.succeed(ObjectStore.ObjectStore, ObjectStore.makeMemory()),
        Layer.succeed(EmailProvider.EmailProvider, provider),
        Layer.succeed(Organizations.Organizations, organizations),
        IdempotencyStore.layerMemory(),
        MessageLog.layerMemory(),
        Suppressions.layerMemory(),
        SendQueue.layerMemory()
      )
    )
  )

const send = (recipients: number) =>
  Effect.flatMap(Mailer.Mailer, (mailer) => mailer.send(acme, message(recipients) as never))

describe("SendRateLimiter (memory)", () => {
  const reserve = (store: SendRateLimiter.RateLimitStore, tokens: number, maxWait = "1 second") =>
    store.reserve({ key: "k", tokens, perSecond: 10, burst: 10, maxWait: Duration.fromInputUnsafe(maxWait as never) })

  it.effect("a full bucket grants its burst at once, then one token per 1/rate seconds", () =>
    Effect.gen(function* () {
      const store = SendRateLimiter.makeStoreMemory()
      const first = yield* reserve(store, 10)
      assert.deepStrictEqual(first, { _tag: "Granted", delay: Duration.millis(0) })
      const next = yield* reserve(store, 5)
      assert.deepStrictEqual(next, { _tag: "Granted", delay: Duration.millis(500) })
      yield* TestClock.adjust("2 seconds")
      // 1.5 s worth of tokens were owed, 2 s passed: the bucket holds 5 again.
      assert.deepStrictEqual(yield* reserve(store, 5), { _tag: "Granted", delay: Duration.millis(0) })
    })
  )

  it.effect("a reservation further off than maxWait is refused and takes nothing", () =>
    Effect.gen(function* () {
      const store = SendRateLimiter.makeStoreMemory()
      yield* reserve(store, 10)
      const refused = yield* reserve(store, 20)
      assert.deepStrictEqual(refused, { _tag: "Refused", retryAfter: Duration.millis(2000) })
      // Had the refused 20 been booked, this would wait 2.1 s and be refused too.
      assert.deepStrictEqual(yield* reserve(store, 1), { _tag: "Granted", delay: Duration.millis(100) })
    })
  )

  it.effect("keys are separate buckets", () =>
    Effect.gen(function* () {
      const store = SendRateLimiter.makeStoreMemory()
      yield* reserve(store, 10)
      const other = yield* store.reserve({
        key: "other",
        tokens: 10,
        perSecond: 10,
        burst: 10,
        maxWait: Duration.zero
      })
      assert.strictEqual(other._tag, "Granted")
    })
  )
})

describe("Mailer with a SendRateLimiter", () => {
  it.effect("sends are paced to the rate, counted in recipients (to + cc + bcc)", () => {
    const { provider, calls } = recording()
    return Effect.gen(function* () {
      const fibers = yield* Effect.forEach([3, 3, 3, 3], (n) => Effect.forkChild(send(n)))
      yield* TestClock.adjust("10 seconds")
      for (const fiber of fibers) yield* Fiber.join(fiber)
      // 4 recipients a second, a burst of 4: 3 at once, then every 3/4 s.
      assert.deepStrictEqual(
        calls.map((c) => c.at),
        [0, 500, 1250, 2000]
      )
    }).pipe(Effect.provide(mailerWith(provider, { key: "k", rate: { perSecond: 4 }, wait: "5 seconds" })))
  })

  it.effect("a batch's items are paced as single sends are: the same tokens, the same rate", () => {
    const { provider, calls } = recording()
    return Effect.gen(function* () {
      const fiber = yield* Effect.forkChild(
        Effect.flatMap(Mailer.Mailer, (mailer) => mailer.sendBatch(acme, [3, 3, 3, 3].map(message)))
      )
      yield* TestClock.adjust("10 seconds")
      const { response } = yield* Fiber.join(fiber)
      assert.strictEqual(response.data.length, 4)
      assert.deepStrictEqual(
        calls.map((c) => c.at),
        [0, 500, 1250, 2000]
      )
    }).pipe(Effect.provide(mailerWith(provider, { key: "k", rate: { perSecond: 4 }, wait: "5 seconds" })))
  })

  it.effect("a send whose tokens are further off than `wait` fails RateLimited (429) with Retry-After, unsent", () => {
    const { provider, calls } = recording()
    return Effect.gen(function* () {
      yield* send(2)
      const error = yield* Effect.flip(send(2))
      assert.strictEqual(error._tag, "ProviderError")
      const reason = (error as ProviderError.ProviderError).reason
      assert.strictEqual(reason._tag, "RateLimited")
      assert.strictEqual((error as ProviderError.ProviderError).provider, "mailroom")
      assert.deepStrictEqual((reason as ProviderError.RateLimited).retryAfter, Duration.seconds(1))
      assert.strictEqual(calls.length, 1)
    }).pipe(Effect.provide(mailerWith(provider, { key: "k", rate: { perSecond: 2 }, wait: "500 millis" })))
  })

  it.effect("a vendor's 429 is retried through the limiter: the retry waits for tokens as well", () => {
    const { provider, calls } = recording((call) =>
      call === 1 ? new ProviderError.RateLimited({ message: "Maximum sending rate exceeded." }) : "ok"
    )
    return Effect.gen(function* () {
      const fiber = yield* Effect.forkChild(send(1))
      yield* TestClock.adjust("10 seconds")
      yield* Fiber.join(fiber)
      assert.strictEqual(calls.length, 2)
      // One token a second, no burst beyond it: the retry's token comes a full second after the first's,
      // whatever the shorter backoff says.
      assert.isAtLeast((calls[1]?.at ?? 0) - (calls[0]?.at ?? 0), 1000)
      const retries = yield* Metric.value(
        Metric.withAttributes(MailroomMetrics.retries, { provider: "recording", reason: "RateLimited" })
      )
      assert.strictEqual(retries.count, 1)
    }).pipe(Effect.provide(mailerWith(provider, { key: "k", rate: { perSecond: 1 }, wait: "5 seconds" })))
  })
})
