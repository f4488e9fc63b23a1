// The conformance suite every PersistedQueueStore runs against its real peer, through Effect's own
// PersistedQueue as core's WebhookDelivery uses it: kept across a restart, de-duplicated, retried late.
import { randomUUID } from "node:crypto"
import { assert, describe, it } from "@effect/vitest"
import * as Data from "effect/Data"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Latch from "effect/Latch"
import * as Layer from "effect/Layer"
import * as PersistedQueue from "effect/persistence/PersistedQueue"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"

export interface PersistedQueueStoreSuiteOptions {
  /**
   * Builds the store. Each test builds it, closes it, and builds it again where it acts out a
   * restart: every build must reach the same data (one directory, one Redis and prefix). Queue names
   * are fresh per test, so data of earlier runs may stay.
   */
  readonly layer: Layer.Layer<PersistedQueue.PersistedQueueStore, unknown>
  /**
   * True when two stores built by `layer` may be open at once on one queue (one Redis), as the
   * instances of a fleet are: the suite then checks each element is taken once across them.
   */
  readonly sharedByInstances?: boolean
}

const Job = Schema.Struct({ n: Schema.Number })
class Refused extends Data.TaggedError("Refused")<{ readonly reason?: string }> {}

export const PersistedQueueStoreSuite = (name: string, options: PersistedQueueStoreSuiteOptions): void => {
  /** A queue on a store of its own, closed when `use` is done, as a process shutting down closes it. */
  const withQueue = <A, E>(
    queue: string,
    use: (queue: PersistedQueue.PersistedQueue<typeof Job.Type>) => Effect.Effect<A, E>
  ) =>
    Effect.gen(function* () {
      const made = yield* PersistedQueue.make({
        name: queue,
        schema: Job,
        maxAttempts: 5,
        retrySchedule: Schedule.spaced("300 millis")
      })
      return yield* use(made)
    }).pipe(Effect.provide(PersistedQueue.layer.pipe(Layer.provide(options.layer))), Effect.scoped)
  const fresh = () => `suite-${randomUUID()}`

  describe(`PersistedQueueStoreSuite: ${name}`, { timeout: 30_000 }, () => {
    it.live("what was offered is taken after a restart, with its id, on the first attempt", () =>
      Effect.gen(function* () {
        const queue = fresh()
        yield* withQueue(queue, (q) => q.offer({ n: 1 }, { id: "job-1" }))
        const seen = yield* withQueue(queue, (q) =>
          q.take((job, meta) => Effect.succeed([job.n, meta.id, meta.attempts]))
        )
        assert.deepStrictEqual(seen, [1, "job-1", 1])
      })
    )

    it.live("an id offered again is taken once, also after it completed and the store restarted", () =>
      Effect.gen(function* () {
        const queue = fresh()
        const first = yield* withQueue(queue, (q) =>
          Effect.gen(function* () {
            yield* q.offer({ n: 1 }, { id: "same" })
            yield* q.offer({ n: 1 }, { id: "same" })
            yield* q.offer({ n: 2 }, { id: "other" })
            return [yield* q.take((job) => Effect.succeed(job.n)), yield* q.take((job) => Effect.succeed(job.n))]
          })
        )
        assert.deepStrictEqual([...first].sort(), [1, 2])
        const again = yield* withQueue(queue, (q) =>
          Effect.gen(function* () {
            yield* q.offer({ n: 1 }, { id: "same" })
            yield* q.offer({ n: 3 }, { id: "third" })
            return yield* q.take((job) => Effect.succeed(job.n))
          })
        )
        assert.strictEqual(again, 3)
      })
    )

    it.live("a failed attempt comes back after its retry delay, counted", () =>
      Effect.gen(function* () {
        const queue = fresh()
        const attempts = yield* withQueue(queue, (q) =>
          Effect.gen(function* () {
            yield* q.offer({ n: 7 })
            const failed = yield* Effect.exit(q.take(() => Effect.fail(new Refused({}))))
            assert.isTrue(Exit.isFailure(failed))
            const started = Date.now()
            const attempt = yield* q.take((_job, meta) => Effect.succeed(meta.attempts))
            // The schedule's 300 ms, less what the store rounds: never at once.
            assert.isAtLeast(Date.now() - started, 200)
            return attempt
          })
        )
        assert.strictEqual(attempts, 2)
      })
    )

    it.live("an element offered with a delay is not taken before it", () =>
      Effect.gen(function* () {
        const queue = fresh()
        const waited = yield* withQueue(queue, (q) =>
          Effect.gen(function* () {
            const started = Date.now()
            yield* q.offer({ n: 1 }, { delay: "1 second" })
            yield* q.take(() => Effect.void)
            return Date.now() - started
          })
        )
        assert.isAtLeast(waited, 900)
      })
    )

    it.live("an attempt cut short by a shutdown is given back and taken again after a restart", () =>
      Effect.gen(function* () {
        const queue = fresh()
        yield* withQueue(queue, (q) =>
          Effect.gen(function* () {
            yield* q.offer({ n: 3 }, { id: "job-3" })
            const started = yield* Latch.make()
            const fiber = yield* Effect.forkChild(q.take(() => Effect.andThen(started.open, Effect.never)))
            yield* started.await
            yield* Fiber.interrupt(fiber)
          })
        )
        const taken = yield* withQueue(queue, (q) => q.take((job, meta) => Effect.succeed([job.n, meta.id])))
        assert.deepStrictEqual(taken, [3, "job-3"])
      })
    )

    if (options.sharedByInstances === true) {
      it.live("two instances on one queue take each element once between them", () =>
        Effect.gen(function* () {
          const queue = fresh()
          // Two stores, each built on its own as two processes would build them.
          const instance = () => Layer.build(PersistedQueue.layer.pipe(Layer.provide(options.layer)))
          const make = PersistedQueue.make({ name: queue, schema: Job, maxAttempts: 5 })
          const a = yield* Effect.provide(make, yield* instance())
          const b = yield* Effect.provide(make, yield* instance())
          yield* Effect.forEach(
            Array.from({ length: 20 }, (_, n) => n),
            (n) => (n % 2 === 0 ? a : b).offer({ n }),
            {
              discard: true
            }
          )
          const seen: Array<number> = []
          const all = yield* Deferred.make<void>()
          const worker = (q: PersistedQueue.PersistedQueue<typeof Job.Type>) =>
            Effect.forever(
              q.take((job) =>
                Effect.suspend(() => {
                  seen.push(job.n)
                  return seen.length >= 20 ? Deferred.succeed(all, undefined) : Effect.void
                })
              )
            )
          const workers = [yield* Effect.forkChild(worker(a)), yield* Effect.forkChild(worker(b))]
          yield* Deferred.await(all)
          for (const fiber of workers) yield* Fiber.interrupt(fiber)
          assert.deepStrictEqual(
            [...seen].sort((x, y) => x - y),
            Array.from({ length: 20 }, (_, n) => n)
          )
        }).pipe(Effect.scoped)
      )
    }
  })
}
