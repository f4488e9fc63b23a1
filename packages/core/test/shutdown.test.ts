// Mailer's `shutdown` signal: a send still running when the host stops waiting is answered with what is
// known of it, and its Idempotency-Key records that outcome instead of staying in flight.
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer } from "effect"
import {
  EmailProvider,
  IdempotencyStore,
  Mailer,
  MessageLog,
  ObjectStore,
  Organizations,
  type ProviderError,
  SendQueue,
  Suppressions
} from "../src/index.js"
import { acme, organizations } from "./fixtures.js"

const request = {
  from: "billing@acme.example",
  to: ["alice@example.com"],
  subject: "Your invoice",
  body: { text: "See attached." }
}

/** A provider that never answers, and says when it was called. */
const stalled = (called: Deferred.Deferred<void>): EmailProvider.EmailProvider => ({
  name: "stalled",
  limits: EmailProvider.memoryLimits,
  send: () => Effect.andThen(Deferred.succeed(called, undefined), Effect.never)
})

const world = (provider: EmailProvider.EmailProvider, store: ObjectStore.ObjectStore, shutdown: AbortSignal) => {
  const idempotency = IdempotencyStore.makeMemory()
  const log = MessageLog.makeMemory()
  const layer = Mailer.layer({ shutdown, retry: { maxAttempts: 1 } }).pipe(
    Layer.provide(
      Layer.mergeAll(
        Layer.succeed(MessageLog.MessageLog, log),
        Suppressions.layerMemory(),
        Layer.succeed(EmailProvider.EmailProvider, provider),
        Layer.succeed(ObjectStore.ObjectStore, store),
        Layer.succeed(Organizations.Organizations, organizations),
        Layer.succeed(IdempotencyStore.IdempotencyStore, idempotency),
        SendQueue.layerMemory()
      )
    )
  )
  return { idempotency, log, layer }
}

const scope = { orgId: acme.orgId, key: "order-7" }

describe("Mailer with a shutdown signal", () => {
  it.effect("a send waiting on the provider fails as possibly sent, and its key is recorded uncertain", () =>
    Effect.gen(function* () {
      const called = yield* Deferred.make<void>()
      const stop = new AbortController()
      const { idempotency, log, layer } = world(stalled(called), ObjectStore.makeMemory(), stop.signal)
      const fiber = yield* Effect.forkChild(
        Effect.flatMap(Mailer.Mailer, (mailer) => mailer.send(acme, request, { idempotencyKey: scope.key })).pipe(
          Effect.provide(layer)
        )
      )
      yield* Deferred.await(called)
      stop.abort()
      const error = (yield* Effect.flip(Fiber.join(fiber))) as ProviderError.ProviderError
      assert.strictEqual(error._tag, "ProviderError")
      assert.strictEqual(error.reason._tag, "Unavailable")
      assert.isTrue((error.reason as ProviderError.Unavailable).possiblySent)
      assert.include(error.message, "may have been sent")
      const entry = yield* idempotency.reserve(scope, "another fingerprint")
      assert.strictEqual(entry?._tag, "Uncertain")
      const [record] = (yield* log.list(acme.orgId, { limit: 10 })).data
      assert.strictEqual(record?.status, "unknown", "the record says it may have been sent, never re-sent by itself")
    })
  )

  it.effect("a send stopped before the provider had it fails as nothing sent, and its key is released", () =>
    Effect.gen(function* () {
      const called = yield* Deferred.make<void>()
      const reading = yield* Deferred.make<void>()
      const memory = ObjectStore.makeMemory()
      const key = "attachments/org_acme/1-invoice.pdf"
      yield* memory.put(key, new TextEncoder().encode("%PDF"), "application/pdf")
      // Reading the attachment never ends: the provider is never reached.
      const store: ObjectStore.ObjectStore = {
        ...memory,
        read: () => Effect.andThen(Deferred.succeed(reading, undefined), Effect.never)
      }
      const stop = new AbortController()
      const { idempotency, log, layer } = world(stalled(called), store, stop.signal)
      const withFile = { ...request, attachments: [{ filename: "invoice.pdf", key }] }
      const fiber = yield* Effect.forkChild(
        Effect.flatMap(Mailer.Mailer, (mailer) => mailer.send(acme, withFile, { idempotencyKey: scope.key })).pipe(
          Effect.provide(layer)
        )
      )
      yield* Deferred.await(reading)
      stop.abort()
      const error = (yield* Effect.flip(Fiber.join(fiber))) as ProviderError.ProviderError
      assert.strictEqual(error.reason._tag, "Unavailable")
      assert.isFalse((error.reason as ProviderError.Unavailable).possiblySent)
      assert.include(error.message, "nothing was sent")
      assert.isFalse(yield* Deferred.isDone(called))
      assert.isUndefined(yield* idempotency.reserve(scope, "any"), "the key is free again")
      assert.deepStrictEqual((yield* log.list(acme.orgId, { limit: 10 })).data, [], "nothing was accepted")
    })
  )

  it.effect("a send that ends before the signal is untouched by it", () =>
    Effect.gen(function* () {
      const stop = new AbortController()
      const { layer } = world(EmailProvider.makeMemory(), ObjectStore.makeMemory(), stop.signal)
      const outcome = yield* Effect.flatMap(Mailer.Mailer, (mailer) => mailer.send(acme, request)).pipe(
        Effect.provide(layer)
      )
      stop.abort()
      assert.strictEqual(outcome.response.subject, "Your invoice")
    })
  )
})
