// Sending later when things go wrong, on the memory layers with a TestClock: a provider that is down
// at the message's time, one that may have sent, a cancel racing the send, a look the queue lost, a
// send whose instance stopped; and the backlog gauges.
import { assert, describe, it } from "@effect/vitest"
import { Clock, Effect, Layer, Metric } from "effect"
import {
  EmailProvider,
  Mailer,
  MailroomError,
  MailroomMetrics,
  MessageLog,
  ProviderError,
  Suppressions
} from "../src/index.js"
import { acme } from "./fixtures.js"
import { adjust, inWorld, until, world } from "./scheduling.js"

const request = (overrides: Record<string, unknown> = {}) => ({
  from: "billing@acme.example",
  to: ["alice@example.com"],
  subject: "Later",
  body: { text: "Hi" },
  scheduled_at: "2026-05-01T10:00:00Z",
  ...overrides
})
const schedule = (overrides: Record<string, unknown> = {}) =>
  Effect.map(
    Effect.flatMap(Mailer.Mailer, (m) => m.send(acme, request(overrides) as never)),
    ({ response }) => response.message_id
  )
const record = (id: string) => Effect.flatMap(MessageLog.MessageLog, (log) => log.find(acme.orgId, id))
const statusIs = (id: string, status: MessageLog.State) => Effect.map(record(id), (r) => r?.status === status)

/** A memory provider that first answers each of `failures` in turn. */
const failingFirst = (failures: ReadonlyArray<ProviderError.Reason>, options: { deduplicatesByKey?: boolean } = {}) => {
  const memory = EmailProvider.makeMemory()
  let calls = 0
  const provider: EmailProvider.EmailProvider & { readonly sent: typeof memory.sent; readonly calls: () => number } = {
    name: "flaky",
    limits: memory.limits,
    sent: memory.sent,
    calls: () => calls,
    ...(options.deduplicatesByKey === undefined ? {} : { deduplicatesByKey: options.deduplicatesByKey }),
    send: (email) =>
      Effect.suspend(() => {
        const failure = failures[calls++]
        return failure === undefined
          ? memory.send(email)
          : Effect.fail(new ProviderError.ProviderError({ provider: "flaky", reason: failure }))
      })
  }
  return provider
}

const down = () => new ProviderError.Unavailable({ message: "503 from the vendor", possiblySent: false })

describe("scheduled sends when things go wrong", () => {
  it.effect("a provider down at the message's time: it waits, is looked at again, and leaves once", () => {
    // The first look fails (the world's Mailer makes one attempt per look); the queue's second succeeds.
    const provider = failingFirst([down()])
    const w = world({ provider })
    return inWorld(
      w,
      Effect.gen(function* () {
        const id = yield* schedule()
        yield* adjust("1 hour")
        yield* until("back to scheduled", statusIs(id, "scheduled"))
        assert.strictEqual(provider.sent.length, 0)
        yield* adjust("2 seconds")
        yield* until("sent", statusIs(id, "sent"))
        assert.strictEqual(provider.sent.length, 1)
        assert.strictEqual(provider.calls(), 2)
      })
    )
  })

  it.effect("a claim that committed after its deadline is put back, and the message leaves once", () => {
    // The database took the claim but answered too late (a COMMIT sent to a server that stalled): the
    // look failed, yet the message was `sending`. Left so, the next look took it for a stopped
    // instance's and recorded it unknown, never sent.
    const memory = MessageLog.makeMemory()
    let late = 1
    const log: MessageLog.MessageLog = {
      ...memory,
      claim: (id, now) =>
        Effect.flatMap(memory.claim(id, now), (claimed) =>
          claimed !== undefined && late-- > 0
            ? Effect.fail(new MailroomError.Unavailable({ message: "no answer within 5 seconds" }))
            : Effect.succeed(claimed)
        )
    }
    const w = world({
      messages: Layer.merge(Layer.succeed(MessageLog.MessageLog, log), Suppressions.layerMemory())
    })
    return inWorld(
      w,
      Effect.gen(function* () {
        const id = yield* schedule()
        yield* adjust("1 hour")
        yield* until("put back", statusIs(id, "scheduled"))
        assert.strictEqual(w.provider.sent.length, 0)
        yield* adjust("2 seconds")
        yield* until("sent", statusIs(id, "sent"))
        assert.strictEqual(w.provider.sent.length, 1)
        yield* adjust("1 hour")
        assert.strictEqual(w.provider.sent.length, 1, "once")
      })
    )
  })

  it.effect("a claim that failed without committing leaves the message to the next look, sent once", () => {
    const memory = MessageLog.makeMemory()
    let failures = 1
    const log: MessageLog.MessageLog = {
      ...memory,
      claim: (id, now) =>
        Effect.suspend(() =>
          failures-- > 0
            ? Effect.fail(new MailroomError.Unavailable({ message: "no answer within 5 seconds" }))
            : memory.claim(id, now)
        )
    }
    const w = world({
      messages: Layer.merge(Layer.succeed(MessageLog.MessageLog, log), Suppressions.layerMemory())
    })
    return inWorld(
      w,
      Effect.gen(function* () {
        const id = yield* schedule()
        yield* adjust("1 hour")
        yield* adjust("2 seconds")
        yield* until("sent", statusIs(id, "sent"))
        assert.strictEqual(w.provider.sent.length, 1)
      })
    )
  })

  it.effect("a message put back while the database is out is put back once it answers, and leaves once", () => {
    // The provider refused it (nothing sent), and the release failed: retried, not left `sending`.
    const provider = failingFirst([down()])
    const memory = MessageLog.makeMemory()
    let failures = 2
    const log: MessageLog.MessageLog = {
      ...memory,
      release: (id) =>
        Effect.suspend(() =>
          failures-- > 0
            ? Effect.fail(new MailroomError.Unavailable({ message: "the database cannot be reached" }))
            : memory.release(id)
        )
    }
    const w = world({
      provider,
      messages: Layer.merge(Layer.succeed(MessageLog.MessageLog, log), Suppressions.layerMemory())
    })
    return inWorld(
      w,
      Effect.gen(function* () {
        const id = yield* schedule()
        yield* adjust("1 hour")
        yield* adjust("2 seconds")
        yield* adjust("2 seconds")
        yield* until("put back", statusIs(id, "scheduled"))
        yield* adjust("2 seconds")
        yield* until("sent", statusIs(id, "sent"))
        assert.strictEqual(provider.sent.length, 1)
        assert.strictEqual(provider.calls(), 2)
      })
    )
  })

  it.effect("a provider that may have sent it makes it unknown, and it is never sent again by itself", () => {
    const provider = failingFirst([new ProviderError.Unavailable({ message: "timed out", possiblySent: true })])
    const w = world({ provider })
    return inWorld(
      w,
      Effect.gen(function* () {
        const id = yield* schedule()
        yield* adjust("1 hour")
        yield* until("unknown", statusIs(id, "unknown"))
        yield* adjust("1 day")
        assert.strictEqual(provider.calls(), 1)
        assert.strictEqual((yield* record(id))?.reason, "timed out")
      })
    )
  })

  it.effect("a cancel racing the send: the first wins, and the record and the provider agree", () => {
    const w = world()
    return inWorld(
      w,
      Effect.gen(function* () {
        const m = yield* Mailer.Mailer
        let cancelled = 0
        for (let round = 0; round < 20; round++) {
          const when = new Date((yield* Clock.currentTimeMillis) + 60_000).toISOString()
          const id = yield* schedule({ scheduled_at: when, subject: `round ${round}` })
          // The clock reaches the time while the cancel is already on its way.
          const [outcome] = yield* Effect.all([Effect.result(m.cancel(acme, id)), adjust("1 minute")], {
            concurrency: "unbounded"
          })
          const sent = w.provider.sent.filter((s) => s.email.subject === `round ${round}`).length
          if (outcome._tag === "Success") {
            cancelled++
            yield* adjust("1 minute")
            assert.strictEqual(w.provider.sent.filter((s) => s.email.subject === `round ${round}`).length, 0)
            assert.strictEqual((yield* record(id))?.status, "cancelled")
          } else {
            assert.isTrue(MailroomError.isConflict(outcome.failure), String(outcome.failure))
            yield* until("sent", statusIs(id, "sent"))
            assert.isAtMost(sent, 1)
            assert.strictEqual(w.provider.sent.filter((s) => s.email.subject === `round ${round}`).length, 1)
          }
        }
        assert.isAbove(cancelled, 0, "some cancels came first")
      })
    )
  })

  it.effect("a message whose look the queue lost is sent by the sweep once it is missedAfter late", () => {
    const w = world({ worker: { missedAfter: "15 minutes", sweepInterval: "1 minute" } })
    return inWorld(
      w,
      Effect.gen(function* () {
        const log = yield* MessageLog.MessageLog
        // Recorded, as a scheduled send records it, but never offered to the queue.
        const id = MessageLog.makeId()
        yield* log.accept({
          id,
          organizationId: acme.orgId,
          createdAt: "2026-05-01T09:00:00.000Z",
          from: "billing@acme.example",
          subject: "Lost",
          recipients: [{ email: "alice@example.com", kind: "to", state: "scheduled" }],
          tags: [],
          attachments: [],
          htmlBytes: 0,
          textBytes: 2,
          scheduledAt: "2026-05-01T09:30:00.000Z",
          request: JSON.stringify({
            from: "billing@acme.example",
            to: ["alice@example.com"],
            subject: "Lost",
            body: { text: "Hi" }
          })
        })
        yield* adjust("44 minutes")
        assert.strictEqual(w.provider.sent.length, 0, "not before it is missedAfter late")
        yield* adjust("2 minutes")
        yield* until("sent", statusIs(id, "sent"))
        assert.deepStrictEqual(
          w.provider.sent.map((s) => s.email.subject),
          ["Lost"]
        )
      })
    )
  })

  for (const deduplicatesByKey of [false, true]) {
    it.effect(
      `a send left "sending" by an instance that stopped is ${deduplicatesByKey ? "sent again under its key, once" : "unknown, never sent again"}`,
      () => {
        const provider = failingFirst([], { deduplicatesByKey })
        const w = world({ provider, worker: { stalledAfter: "10 minutes", sweepInterval: "1 minute" } })
        return inWorld(
          w,
          Effect.gen(function* () {
            const log = yield* MessageLog.MessageLog
            const id = yield* schedule({ scheduled_at: "2026-05-01T09:00:05Z" })
            // Another instance claimed it at its time and stopped before the provider answered.
            const claimed = yield* log.claim(id, "2026-05-01T09:00:05.000Z")
            assert.isDefined(claimed)
            yield* adjust("9 minutes")
            assert.strictEqual((yield* record(id))?.status, "sending")
            yield* adjust("2 minutes")
            yield* until(
              "settled",
              Effect.map(record(id), (r) => r?.status !== "sending")
            )
            const detail = yield* record(id)
            if (deduplicatesByKey) {
              assert.strictEqual(detail?.status, "sent")
              assert.strictEqual(provider.sent.length, 1)
              assert.strictEqual(provider.sent[0]?.email.idempotencyKey, `mailroom-${id}`)
            } else {
              assert.strictEqual(detail?.status, "unknown")
              assert.include(detail?.reason ?? "", "may have been sent")
              assert.strictEqual(provider.sent.length, 0)
            }
            yield* adjust("4 hours")
            assert.isAtMost(provider.sent.length, 1)
          })
        )
      }
    )
  }

  it.effect("the gauges count the scheduled messages and how late the oldest due one is", () => {
    const w = world({ worker: { metricsInterval: "10 seconds" } })
    return inWorld(
      w,
      Effect.gen(function* () {
        yield* schedule()
        yield* schedule({ scheduled_at: "2026-05-02T10:00:00Z" })
        yield* adjust("10 seconds")
        assert.strictEqual(yield* gauge(MailroomMetrics.scheduledMessages), 2)
        assert.strictEqual(yield* gauge(MailroomMetrics.oldestDueSeconds), 0)
      })
    ).pipe(Effect.provideService(Metric.MetricRegistry, new Map()))
  })
})

const gauge = (metric: Metric.Metric<number, Metric.GaugeState<number>>) =>
  Effect.map(Metric.value(metric), (state) => state.value)
