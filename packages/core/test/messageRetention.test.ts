// MessageLog.layerRetention on the memory log, with Effect's TestClock: a sweep as it starts and every
// `every` after, records older than the retention deleted and younger ones kept, a failed sweep retried.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import { TestClock } from "effect/testing"
import { MailroomError, MessageLog } from "../src/index.js"
import { newMessage } from "../src/testing/index.js"

const hour = 3_600_000

/** The memory log and the sweep on it, built in the test's scope; the log answered. */
const withSweep = (log: MessageLog.MessageLog, options: MessageLog.RetentionOptions) =>
  Layer.build(MessageLog.layerRetention(options).pipe(Layer.provideMerge(Layer.succeed(MessageLog.MessageLog, log))))

const accepted = (log: MessageLog.MessageLog, createdAtMs: number) =>
  Effect.gen(function* () {
    const message = newMessage("org_acme", { createdAt: new Date(createdAtMs).toISOString() })
    yield* log.accept(message)
    return message.id
  })

const kept = (log: MessageLog.MessageLog, id: string) =>
  Effect.map(log.find("org_acme", id), (found) => found !== undefined)

describe("MessageLog.layerRetention", () => {
  it.effect("sweeps once as it starts, then every `every`, deleting only what is older than the retention", () =>
    Effect.scoped(
      Effect.gen(function* () {
        yield* TestClock.setTime(100 * hour)
        const log = MessageLog.makeMemory()
        const old = yield* accepted(log, 100 * hour - 3 * hour)
        const recent = yield* accepted(log, 100 * hour - hour)
        yield* withSweep(log, { retention: "2 hours", every: "1 hour" })
        yield* TestClock.adjust(0)
        assert.isFalse(yield* kept(log, old), "the sweep at start deletes a record three hours old")
        assert.isTrue(yield* kept(log, recent), "a record one hour old is kept")

        const later = yield* accepted(log, 100 * hour + 30 * 60_000)
        yield* TestClock.adjust(59 * 60_000)
        assert.isTrue(yield* kept(log, recent), "no sweep before the hour")
        yield* TestClock.adjust(60_000) // t = 101 h: the record made at 99 h is now two hours old, not older
        assert.isTrue(yield* kept(log, recent))
        yield* TestClock.adjust(hour) // t = 102 h
        assert.isFalse(yield* kept(log, recent), "swept at the next hour once older than the retention")
        assert.isTrue(yield* kept(log, later))
        yield* TestClock.adjust(hour) // t = 103 h: made at 100.5 h, 2.5 h old
        assert.isFalse(yield* kept(log, later))
      })
    )
  )

  it.effect("a sweep that fails is logged and the next one deletes the records", () =>
    Effect.scoped(
      Effect.gen(function* () {
        yield* TestClock.setTime(10 * hour)
        const memory = MessageLog.makeMemory()
        let calls = 0
        const failingOnce: MessageLog.MessageLog = {
          ...memory,
          purge: (before) =>
            calls++ === 0
              ? Effect.fail(new MailroomError.Unavailable({ message: "the database cannot be reached" }))
              : memory.purge(before)
        }
        const old = yield* accepted(memory, 0)
        yield* withSweep(failingOnce, { retention: "1 hour" })
        yield* TestClock.adjust(0)
        assert.strictEqual(calls, 1)
        assert.isTrue(yield* kept(memory, old), "the failed sweep deleted nothing")
        yield* TestClock.adjust(hour) // `every` defaults to one hour
        assert.strictEqual(calls, 2)
        assert.isFalse(yield* kept(memory, old))
      })
    )
  )

  it.effect("a retention or an interval that is not a duration above zero is a ConfigError naming it", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const log = MessageLog.makeMemory()
        for (const [options, field] of [
          [{ retention: "0 seconds" }, "retention"],
          [{ retention: "30 days", every: "-1 hours" }, "every"]
        ] as const) {
          const exit = yield* Effect.exit(withSweep(log, options as MessageLog.RetentionOptions))
          assert.isTrue(Exit.isFailure(exit))
          const message = Exit.isFailure(exit) ? String(exit.cause) : ""
          assert.include(message, field)
          assert.include(message, "ConfigError")
        }
      })
    )
  )
})
