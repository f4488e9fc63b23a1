// Sending many: each item of a batch decoded and sent on its own, answered by its index; one
// Idempotency-Key for the whole batch; a few items at a time; bad batches refused whole.
import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { EmailProvider, Mailer, MailroomError, MessageLog, ProviderError } from "../src/index.js"
import { acme, makeWorld, startingAt } from "./fixtures.js"

const item = (n: number, overrides: Record<string, unknown> = {}) => ({
  from: "billing@acme.example",
  to: [`user${n}@example.com`],
  subject: `Message ${n}`,
  body: { text: "Hi" },
  ...overrides
})

const sendBatch = (items: unknown, options?: Mailer.SendOptions) =>
  Effect.flatMap(Mailer.Mailer, (m) => m.sendBatch(acme, items, options))

describe("Mailer.sendBatch", () => {
  it.effect("each item on its own: valid ones sent, invalid ones reported by index naming their fields", () => {
    const world = makeWorld()
    const provider = world.provider as EmailProvider.MemoryEmailProvider
    return Effect.gen(function* () {
      const { response, replayed } = yield* sendBatch([
        item(0),
        item(1, { to: [] }),
        item(2),
        item(3, { from: "x@unverified.example", subject: "" }),
        item(4, { from: "x@unverified.example" }),
        item(5, { scheduled_at: "2099-01-01T00:00:00Z" })
      ])
      assert.isFalse(replayed)
      assert.deepStrictEqual(
        response.data.map((d) => [d.index, d.status]),
        [
          [0, "sent"],
          [2, "sent"]
        ]
      )
      assert.deepStrictEqual(response.errors, [
        { index: 1, errors: ["to: must contain at least 1 recipient"] },
        { index: 3, errors: ["subject: must not be empty"] },
        {
          index: 4,
          errors: [
            "from: x@unverified.example is not on a verified domain of organization org_acme (its verified domains are acme.example, acme.mailroom.test, and their subdomains); nothing was sent"
          ]
        },
        { index: 5, errors: ["scheduled_at: must be at most 30 days in the future"] }
      ])
      assert.deepStrictEqual(
        provider.sent.map((s) => s.email.subject),
        ["Message 0", "Message 2"]
      )
      const log = yield* MessageLog.MessageLog
      for (const accepted of response.data) {
        assert.strictEqual((yield* log.find(acme.orgId, accepted.message_id))?.status, "sent")
      }
    }).pipe(Effect.provide(world.layer))
  })

  it.effect("one Idempotency-Key covers the batch: a retry answers each item as before and sends nothing", () => {
    const world = makeWorld()
    const provider = world.provider as EmailProvider.MemoryEmailProvider
    return Effect.gen(function* () {
      const batch = [item(0), item(1, { to: ["nope"] }), item(2)]
      const first = yield* sendBatch(batch, { idempotencyKey: "batch-1" })
      const again = yield* sendBatch(batch, { idempotencyKey: "batch-1" })
      assert.isTrue(again.replayed)
      assert.deepStrictEqual(again.response, first.response)
      assert.strictEqual(provider.sent.length, 2)
      // Each item reaches the provider under a key of its own, derived from the batch's.
      const keys = new Set(provider.sent.map((s) => s.email.idempotencyKey))
      assert.strictEqual(keys.size, 2)
      const other = yield* Effect.flip(sendBatch([item(9)], { idempotencyKey: "batch-1" }))
      assert.isTrue(MailroomError.isConflict(other))
      const single = yield* Effect.flip(
        Effect.flatMap(Mailer.Mailer, (m) => m.send(acme, batch as never, { idempotencyKey: "batch-1" }))
      )
      assert.isTrue(MailroomError.isValidationError(single) || MailroomError.isConflict(single))
      const log = yield* MessageLog.MessageLog
      const listed = yield* log.list(acme.orgId, { limit: 100 })
      assert.strictEqual(listed.data.length, 2, "nothing recorded twice")
    }).pipe(Effect.provide(world.layer))
  })

  it.effect("a batch the provider took none of (paused, down, throttled) fails whole, and a retry sends it", () => {
    const memory = EmailProvider.makeMemory()
    let refusal: ProviderError.Reason | undefined
    const provider: EmailProvider.EmailProvider = {
      ...memory,
      send: (email) =>
        refusal === undefined
          ? memory.send(email)
          : Effect.fail(new ProviderError.ProviderError({ provider: "memory", reason: refusal }))
    }
    const world = makeWorld({ provider, mailer: { retry: { maxAttempts: 1 } } })
    return Effect.gen(function* () {
      const down = [
        new ProviderError.SendingPaused({ message: "sending is paused", permanent: false }),
        new ProviderError.Unavailable({ message: "down", possiblySent: false, retryAfter: Duration.seconds(30) }),
        new ProviderError.RateLimited({ message: "slow down", retryAfter: Duration.seconds(2) })
      ]
      for (const [n, reason] of down.entries()) {
        refusal = reason
        const before = memory.sent.length
        const key = `down-${n}`
        const failed = yield* Effect.flip(sendBatch([item(0), item(1)], { idempotencyKey: key }))
        assert.isTrue(MailroomError.isUnavailable(failed), reason._tag)
        assert.strictEqual(memory.sent.length, before)
        refusal = undefined
        const retried = yield* sendBatch([item(0), item(1)], { idempotencyKey: key })
        assert.isFalse(retried.replayed, reason._tag)
        assert.strictEqual(retried.response.data.length, 2)
        assert.strictEqual(memory.sent.length, before + 2)
      }
      // Refused for good (every item invalid), the answer is kept and replayed.
      const invalid = [item(0, { to: [] })]
      const first = yield* sendBatch(invalid, { idempotencyKey: "invalid" })
      assert.deepStrictEqual(first.response.data, [])
      assert.isTrue((yield* sendBatch(invalid, { idempotencyKey: "invalid" })).replayed)
    }).pipe(Effect.provide(world.layer))
  })

  it.effect("not an array, empty, or over 100 items is refused whole, naming the request; nothing is sent", () => {
    const world = makeWorld()
    const provider = world.provider as EmailProvider.MemoryEmailProvider
    return Effect.gen(function* () {
      for (const input of [{ ...item(0) }, [], Array.from({ length: 101 }, (_, i) => item(i)), "x", null]) {
        const error = yield* Effect.flip(sendBatch(input))
        assert.deepStrictEqual((error as MailroomError.ValidationError).errors, [
          "request: must be an array of 1 to 100 send requests"
        ])
      }
      const hundred = yield* sendBatch(Array.from({ length: 100 }, (_, i) => item(i)))
      assert.strictEqual(hundred.response.data.length, 100)
      assert.strictEqual(provider.sent.length, 100)
    }).pipe(Effect.provide(world.layer))
  })

  it.effect("items go to the provider a few at a time: at most batchConcurrency in flight", () => {
    let inFlight = 0
    let most = 0
    const memory = EmailProvider.makeMemory()
    const provider: EmailProvider.EmailProvider = {
      ...memory,
      send: (email) =>
        Effect.gen(function* () {
          inFlight++
          most = Math.max(most, inFlight)
          for (let i = 0; i < 10; i++) yield* Effect.yieldNow
          inFlight--
          return yield* memory.send(email)
        })
    }
    const world = makeWorld({ provider, mailer: { batchConcurrency: 3 } })
    return Effect.gen(function* () {
      const { response } = yield* sendBatch(Array.from({ length: 12 }, (_, i) => item(i)))
      assert.strictEqual(response.data.length, 12)
      assert.strictEqual(most, 3)
    }).pipe(Effect.provide(world.layer))
  })

  it.effect("a scheduled item is scheduled, answered with its time", () => {
    const world = makeWorld()
    return Effect.gen(function* () {
      const { response } = yield* sendBatch([item(0, { scheduled_at: "2026-05-01T12:00:00+02:00" }), item(1)])
      assert.deepStrictEqual(
        response.data.map(({ message_id: _, ...rest }) => rest),
        [
          { index: 0, status: "scheduled", scheduled_at: "2026-05-01T10:00:00.000Z" },
          { index: 1, status: "sent" }
        ]
      )
      const log = yield* MessageLog.MessageLog
      assert.strictEqual((yield* log.find(acme.orgId, response.data[0]?.message_id ?? ""))?.status, "scheduled")
    }).pipe(Effect.provide(world.layer), startingAt("2026-05-01T09:00:00Z"))
  })
})
