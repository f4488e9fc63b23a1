// Effect's PersistedQueue with its SQL store on this client: offer and take, a delayed offer, a failed
// handler retried, a consumer's lock expiring after its process dies, and two consumers on one file
// never holding the same message at once.
import { assert, describe, it } from "@effect/vitest"
import { Clock, Deferred, type Duration, Effect, Fiber, Layer, Option, Schema } from "effect"
import { PersistedQueue } from "effect/persistence"
import { SqliteClient } from "../src/index.js"
import { child, failure, tempFile } from "./support.js"

/** A consumer: a queue factory with its SQL store on a client of its own (one connection) on `filename`. */
const consumer = (filename: string) =>
  PersistedQueue.layer.pipe(
    Layer.provide(PersistedQueue.layerStoreSql({ pollInterval: "50 millis", lockExpiration: "2 seconds" })),
    Layer.provide(SqliteClient.layer({ filename }))
  )

const jobs = PersistedQueue.make({ name: "jobs", schema: Schema.String })

/** Runs `effect` as a consumer of its own on `filename`. */
const as = <A, E, R>(filename: string, effect: Effect.Effect<A, E, R>) => Effect.provide(effect, consumer(filename))

const nothingWithin = (queue: PersistedQueue.PersistedQueue<string>, window: Duration.Input) =>
  Effect.map(Effect.timeoutOption(queue.take(Effect.succeed), window), Option.isNone)

describe("PersistedQueue on SQLite", () => {
  it.live("an offered message is taken once, and not again once handled", () =>
    Effect.gen(function* () {
      const filename = yield* tempFile()
      yield* as(
        filename,
        Effect.gen(function* () {
          const queue = yield* jobs
          const id = yield* queue.offer("hello")
          const taken = yield* queue.take((value, meta) => Effect.succeed({ value, ...meta }))
          assert.deepStrictEqual(taken, { value: "hello", id, attempts: 1 })
          assert.isTrue(yield* nothingWithin(queue, "1500 millis"))
        })
      )
    })
  )

  it.live("a delayed offer is not taken before its delay; one offered after it without delay comes first", () =>
    Effect.gen(function* () {
      const filename = yield* tempFile()
      yield* as(
        filename,
        Effect.gen(function* () {
          const queue = yield* jobs
          const offeredAt = yield* Clock.currentTimeMillis
          yield* queue.offer("later", { delay: "2 seconds" })
          yield* queue.offer("now")
          assert.strictEqual(yield* queue.take(Effect.succeed), "now")
          assert.strictEqual(yield* queue.take(Effect.succeed), "later")
          const waited = (yield* Clock.currentTimeMillis) - offeredAt
          assert.isAtLeast(waited, 2000)
          assert.isBelow(waited, 15_000)
        })
      )
    })
  )

  it.live("a handler that fails gets the same message again, as its second attempt", () =>
    Effect.gen(function* () {
      const filename = yield* tempFile()
      yield* as(
        filename,
        Effect.gen(function* () {
          const queue = yield* jobs
          const id = yield* queue.offer("flaky")
          const error = yield* failure(queue.take(() => Effect.fail("vendor down")))
          assert.strictEqual(error, "vendor down")
          const second = yield* queue.take((value, meta) => Effect.succeed({ value, ...meta }))
          assert.deepStrictEqual(second, { value: "flaky", id, attempts: 2 })
        })
      )
    })
  )

  it.live("a consumer's message stays its own while it lives, and is delivered again after its process dies", () =>
    Effect.gen(function* () {
      const filename = yield* tempFile()
      yield* as(
        filename,
        Effect.gen(function* () {
          const queue = yield* jobs
          const id = yield* queue.offer("job-1")
          const crashing = yield* child(["consume", filename])
          assert.strictEqual(yield* crashing.line("taken"), "taken job-1 1")
          // Longer than the lock's expiry: the living consumer keeps renewing it.
          assert.isTrue(yield* nothingWithin(queue, "3 seconds"))
          crashing.process.kill("SIGKILL")
          yield* crashing.exited
          const again = yield* queue.take((value, meta) => Effect.succeed({ value, ...meta }))
          assert.deepStrictEqual(again, { value: "job-1", id, attempts: 2 })
        })
      )
    })
  )

  it.live("two consumers on one file, three takers each: every message handled once, never by both at once", () =>
    Effect.gen(function* () {
      const filename = yield* tempFile()
      const offered = range(30).map((n) => `m${n}`)
      yield* as(
        filename,
        Effect.flatMap(jobs, (q) => Effect.forEach(offered, (m) => q.offer(m)))
      )
      const handled: Array<string> = []
      const byConsumer = new Map<string, number>()
      const active = new Set<string>()
      const overlaps: Array<string> = []
      const done = yield* Deferred.make<void>()
      const work = (name: string) => (value: string) =>
        Effect.gen(function* () {
          if (active.has(value)) overlaps.push(value)
          active.add(value)
          yield* Effect.sleep("5 millis")
          active.delete(value)
          handled.push(value)
          byConsumer.set(name, (byConsumer.get(name) ?? 0) + 1)
          if (handled.length === offered.length) yield* Deferred.succeed(done, undefined)
        })
      const consume = (name: string) =>
        as(
          filename,
          Effect.flatMap(jobs, (queue) =>
            Effect.all(
              Array.from({ length: 3 }, () => Effect.forever(queue.take(work(name)))),
              {
                concurrency: "unbounded"
              }
            )
          )
        )
      const fibers = yield* Effect.forEach(["a", "b"], (name) => Effect.forkChild(consume(name)))
      yield* Deferred.await(done)
      yield* Effect.forEach(fibers, Fiber.interrupt)
      assert.deepStrictEqual(overlaps, [])
      assert.deepStrictEqual([...handled].sort(), [...offered].sort())
      assert.strictEqual(byConsumer.size, 2, "both consumers took messages")
    })
  )
})

const range = (n: number) => Array.from({ length: n }, (_, i) => i)
