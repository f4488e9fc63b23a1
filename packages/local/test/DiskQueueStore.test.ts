// The disk store under Effect's own PersistedQueue: what is offered survives closing the store and
// opening it again (a restart), failures come back after their delay, and one directory has one owner.
import { spawn } from "node:child_process"
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { assert, it } from "@effect/vitest"
import { expectConfigError, PersistedQueueStoreSuite } from "@mailroom/core/testing"
import { Config, ConfigProvider, Data, Duration, Effect, Exit, Fiber, Layer, Schedule, Schema } from "effect"
import { PersistedQueue } from "effect/persistence"
import { afterAll, beforeAll, describe } from "vitest"
import { DiskQueueStore } from "../src/index.js"

let base: string
beforeAll(async () => {
  base = await mkdtemp(path.join(tmpdir(), "mailroom-queue-"))
})
afterAll(() => rm(base, { recursive: true, force: true }))

// The directory is read when the layer is built, after beforeAll made it.
PersistedQueueStoreSuite("disk", {
  layer: Layer.unwrap(Effect.sync(() => DiskQueueStore.layer({ dir: path.join(base, "suite") })))
})

const Job = Schema.Struct({ n: Schema.Number })
class Refused extends Data.TaggedError("Refused")<{ readonly reason?: string }> {}

/** Runs `use` with a queue named "jobs" on a disk store in `dir`; the store is closed afterwards, as on shutdown. */
const withQueue = <A, E>(
  dir: string,
  use: (queue: PersistedQueue.PersistedQueue<typeof Job.Type>) => Effect.Effect<A, E>
) =>
  Effect.gen(function* () {
    const queue = yield* PersistedQueue.make({
      name: "jobs",
      schema: Job,
      maxAttempts: 5,
      retrySchedule: Schedule.spaced("300 millis")
    })
    return yield* use(queue)
  }).pipe(Effect.provide(PersistedQueue.layer.pipe(Layer.provide(DiskQueueStore.layer({ dir })))), Effect.scoped)

const entries = async (dir: string) =>
  Promise.all(
    (await readdir(path.join(dir, "jobs"))).map(
      async (name) => JSON.parse(await readFile(path.join(dir, "jobs", name), "utf8")) as Record<string, unknown>
    )
  )

describe("DiskQueueStore", () => {
  it.live("keeps what was offered across a restart, and delivers it once", () =>
    Effect.gen(function* () {
      const dir = path.join(base, "restart")
      yield* withQueue(dir, (queue) => queue.offer({ n: 1 }, { id: "job-1" }))
      const seen = yield* withQueue(dir, (queue) =>
        queue.take((job, meta) => Effect.succeed([job.n, meta.id, meta.attempts]))
      )
      assert.deepStrictEqual(seen, [1, "job-1", 1])
      // Completed: offering the same id again is de-duplicated, even after another restart.
      const again = yield* withQueue(dir, (queue) =>
        Effect.gen(function* () {
          yield* queue.offer({ n: 1 }, { id: "job-1" })
          yield* queue.offer({ n: 2 }, { id: "job-2" })
          return yield* queue.take((job) => Effect.succeed(job.n))
        })
      )
      assert.strictEqual(again, 2)
      const stored = yield* Effect.promise(() => entries(dir))
      assert.deepStrictEqual(stored.map((e) => [e.id, e.state]).sort(), [
        ["job-1", "completed"],
        ["job-2", "completed"]
      ])
      // A completed entry keeps only what de-duplication needs.
      assert.isTrue(stored.every((e) => e.element === undefined))
    })
  )

  it.live("brings a failed attempt back after its delay, with the attempt counted across a restart", () =>
    Effect.gen(function* () {
      const dir = path.join(base, "retry")
      const first = yield* withQueue(dir, (queue) =>
        Effect.gen(function* () {
          yield* queue.offer({ n: 7 }, { id: "job-7" })
          return yield* Effect.exit(queue.take(() => Effect.fail(new Refused({}))))
        })
      )
      assert.isTrue(Exit.isFailure(first))
      const [stored] = yield* Effect.promise(() => entries(dir))
      assert.strictEqual(stored?.state, "pending")
      assert.strictEqual(stored?.attempts, 1)
      assert.include(String(stored?.lastFailure), "Refused")
      const started = Date.now()
      const attempts = yield* withQueue(dir, (queue) => queue.take((_job, meta) => Effect.succeed(meta.attempts)))
      assert.strictEqual(attempts, 2)
      // Not before the delay the schedule gave it (300 ms after the failure).
      assert.isAtLeast(Date.now(), Number(stored?.visibleAt))
      assert.isAtLeast(Number(stored?.visibleAt) - Number(stored?.stateChangedAt), 300)
      assert.isBelow(Date.now() - started, 2000)
    })
  )

  it.live("gives an attempt cut short by a shutdown back, uncounted", () =>
    Effect.gen(function* () {
      const dir = path.join(base, "interrupt")
      yield* withQueue(dir, (queue) =>
        Effect.gen(function* () {
          yield* queue.offer({ n: 3 }, { id: "job-3" })
          const fiber = yield* Effect.forkChild(queue.take(() => Effect.never))
          yield* Effect.sleep("50 millis")
          yield* Fiber.interrupt(fiber)
        })
      )
      const [stored] = yield* Effect.promise(() => entries(dir))
      assert.strictEqual(stored?.state, "pending")
      assert.strictEqual(stored?.attempts, 0)
    })
  )

  it.live("removes completed entries once they are older than the cleanup's time to live", () =>
    Effect.gen(function* () {
      const dir = path.join(base, "cleanup")
      yield* Effect.gen(function* () {
        const store = yield* PersistedQueue.PersistedQueueStore
        const queue = yield* PersistedQueue.make({ name: "jobs", schema: Job })
        yield* queue.offer({ n: 1 }, { id: "old" })
        yield* queue.take(() => Effect.void)
        yield* queue.offer({ n: 2 }, { id: "waiting" })
        yield* Effect.sleep("20 millis")
        yield* store.cleanup({ timeToLive: Duration.millis(10), failedTimeToLive: undefined })
      }).pipe(
        Effect.provide(PersistedQueue.layer.pipe(Layer.provideMerge(DiskQueueStore.layer({ dir })))),
        Effect.scoped
      )
      const stored = yield* Effect.promise(() => entries(dir))
      assert.deepStrictEqual(
        stored.map((e) => e.id),
        ["waiting"]
      )
    })
  )

  it.live("refuses a directory another live process holds, and takes over one a dead process left", () =>
    Effect.gen(function* () {
      const dir = path.join(base, "locked")
      yield* withQueue(dir, () => Effect.void)
      const holder = spawn(process.execPath, ["-e", "setTimeout(() => {}, 20000)"], { stdio: "ignore" })
      yield* Effect.addFinalizer(() => Effect.sync(() => holder.kill("SIGKILL")))
      yield* Effect.promise(() => writeFile(path.join(dir, ".lock"), String(holder.pid)))
      const refused = yield* Effect.exit(withQueue(dir, () => Effect.void))
      assert.isTrue(Exit.isFailure(refused))
      assert.include(String(Exit.isFailure(refused) ? refused.cause : ""), `in use by process ${holder.pid}`)
      holder.kill("SIGKILL")
      yield* Effect.promise(() => new Promise((resolve) => holder.once("exit", resolve)))
      const taken = yield* withQueue(dir, (queue) => queue.offer({ n: 1 }))
      assert.isString(taken)
      // A second store on the same directory in this process is refused too.
      const twice = yield* Effect.exit(withQueue(dir, () => withQueue(dir, () => Effect.void)))
      assert.isTrue(Exit.isFailure(twice))
    }).pipe(Effect.scoped)
  )

  it.effect("an empty dir fails make, layer and layerConfig with a ConfigError naming it, touching no disk", () =>
    Effect.gen(function* () {
      yield* expectConfigError(DiskQueueStore.make({ dir: "" }), "dir")
      yield* expectConfigError(DiskQueueStore.layer({ dir: "" }), "dir")
      // A Config that reads an empty string (here a default) reaches make, which refuses it.
      yield* expectConfigError(
        DiskQueueStore.layerConfig({ dir: Config.String("QUEUE_DIR").pipe(Config.withDefault("")) }),
        "dir"
      ).pipe(Effect.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({}))))
    })
  )
})
