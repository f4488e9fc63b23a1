// The durable queue of the embedded defaults: Effect's PersistedQueueStore on the local disk, one small
// JSON file per element written through a temporary file and a rename, so queued work survives a restart.
import { createHash } from "node:crypto"
import { mkdir, open, readdir, readFile, rename, rm, writeFile } from "node:fs/promises"
import * as path from "node:path"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import * as Latch from "effect/Latch"
import * as Layer from "effect/Layer"
import * as Predicate from "effect/Predicate"
import * as PersistedQueue from "effect/persistence/PersistedQueue"
import type * as Scope from "effect/Scope"
import * as Check from "./internal/options.js"
import * as Storage from "./internal/storage.js"

/** What `layerConfig` reads: the directory of the queues. */
export interface ConfigOptions {
  /**
   * Directory of the queues, created when needed: `{dir}/{queue name}/{digest of the id}.json`. One
   * process at a time uses it: a second one fails to start while the first is alive (`{dir}/.lock`).
   */
  readonly dir: string
}

/** What `make` and `layer` take: the same, as the store has no client to bring. */
export type Options = ConfigOptions

type State = "pending" | "processing" | "completed" | "failed"

interface Entry {
  readonly id: string
  /** Dropped once completed: the entry is then only a record for de-duplication. */
  element: unknown
  attempts: number
  state: State
  visibleAt: number
  stateChangedAt: number
  lastFailure?: string
}

interface Queue {
  readonly dir: string
  /** Every entry still on disk, for de-duplication; `pending` is the deliverable subset. */
  readonly entries: Map<string, Entry>
  readonly pending: Set<Entry>
  readonly latch: Latch.Latch
  /** The last write of each entry, so writes of one entry land in the order they were made. */
  readonly writes: Map<string, Promise<void>>
}

const fileOf = (queue: Queue, id: string) =>
  path.join(queue.dir, `${createHash("sha256").update(id).digest("hex")}.json`)

// The cause's own words are kept in the message: they are what an operator needs ("in use by process 42").
const queueError = (message: string) => (cause: unknown) =>
  new PersistedQueue.PersistedQueueError({
    message: `${message}: ${(cause as Error)?.message ?? String(cause)}`,
    cause
  })

// What the factory fails a take with when a stored element cannot be decoded: dead-letter it at once.
const isDeadLetter = (cause: Cause.Cause<unknown>) =>
  cause.reasons.some(
    (reason) =>
      Cause.isFailReason(reason) && Predicate.isTagged(reason.error, "~effect/persistence/PersistedQueue/DeadLetter")
  )

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

// Directories this process holds: a second store here on one of them would take elements twice too.
const held = new Set<string>()

/** Takes `{dir}/.lock` for this process, or fails naming the live process that holds it. */
const lock = async (dir: string) => {
  const file = path.join(dir, ".lock")
  if (held.has(dir)) throw new Error(`the queue directory ${dir} is already in use by this process`)
  for (;;) {
    try {
      await writeFile(file, String(process.pid), { flag: "wx" })
      held.add(dir)
      return file
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
    }
    const holder = Number((await readFile(file, "utf8").catch(() => "")).trim())
    if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && isAlive(holder)) {
      throw new Error(`the queue directory ${dir} is in use by process ${holder}`)
    }
    // Left behind by a process that is gone (a crash, or a restart in a container with the same pid).
    await rm(file, { force: true })
  }
}

/** The queues in `dir`, and the files that could not be read (set aside as `.damaged`). */
const load = async (
  dir: string,
  now: number
): Promise<{ readonly queues: Map<string, Queue>; readonly damaged: ReadonlyArray<string> }> => {
  const queues = new Map<string, Queue>()
  const damaged: Array<string> = []
  for (const child of await readdir(dir, { withFileTypes: true })) {
    if (!child.isDirectory()) continue
    const queue = makeQueue(path.join(dir, child.name))
    queues.set(decodeURIComponent(child.name), queue)
    for (const name of await readdir(queue.dir)) {
      const file = path.join(queue.dir, name)
      // A temporary file is a write a crash cut short; the entry's previous file still stands.
      if (name.startsWith(".")) {
        await rm(file, { force: true })
        continue
      }
      if (!name.endsWith(".json")) continue
      let entry: Entry
      try {
        entry = JSON.parse(await readFile(file, "utf8")) as Entry
        if (typeof entry.id !== "string" || typeof entry.attempts !== "number") throw new Error("not a queue entry")
      } catch {
        await rename(file, `${file}.damaged`)
        damaged.push(file)
        continue
      }
      if (entry.state === "processing") {
        // The process stopped mid-attempt. The attempt stays counted, as the store contract says.
        entry.state = "pending"
        entry.visibleAt = now
      }
      queue.entries.set(entry.id, entry)
      if (entry.state === "pending") queue.pending.add(entry)
    }
  }
  return { queues, damaged }
}

type TakeOptions = Parameters<PersistedQueue.PersistedQueueStore["Service"]["take"]>[0]

const makeQueue = (dir: string): Queue => ({
  dir,
  entries: new Map(),
  pending: new Set(),
  latch: Latch.makeUnsafe(false),
  writes: new Map()
})

/**
 * The store, over the queues already in `dir`, holding the directory until its scope closes. Fails
 * with a `ConfigError` when `dir` is empty, and with a `PersistedQueueError` when the directory cannot
 * be used or another live process holds it.
 */
export const make = (
  options: Options
): Effect.Effect<
  PersistedQueue.PersistedQueueStore["Service"],
  Config.ConfigError | PersistedQueue.PersistedQueueError,
  Scope.Scope
> =>
  Effect.gen(function* () {
    const dir = path.resolve(yield* Check.directory("dir", options.dir))
    const clock = yield* Clock.Clock
    yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          await mkdir(dir, { recursive: true })
          return await lock(dir)
        },
        catch: queueError(`cannot use ${dir} for the queue`)
      }),
      (file) =>
        Effect.promise(async () => {
          await rm(file, { force: true })
          held.delete(dir)
        })
    )
    const { queues, damaged } = yield* Effect.tryPromise({
      try: () => load(dir, clock.currentTimeMillisUnsafe()),
      catch: queueError(`cannot read the queue in ${dir}`)
    })
    for (const file of damaged) {
      yield* Effect.logError(`[mailroom] queue: ${file} is not a queue entry; it was set aside as ${file}.damaged`)
    }
    const queueOf = (name: string) => {
      let queue = queues.get(name)
      if (queue === undefined) {
        queue = makeQueue(path.join(dir, encodeURIComponent(name)))
        queues.set(name, queue)
      }
      return queue
    }

    /** Writes the entry as it is now, after any earlier write of it; flushed to disk before it resolves. */
    const persist = (queue: Queue, entry: Entry) => {
      const file = fileOf(queue, entry.id)
      const content = Buffer.from(JSON.stringify(entry))
      const previous = queue.writes.get(entry.id) ?? Promise.resolve()
      const write = previous
        .catch(() => undefined)
        .then(async () => {
          await Storage.writeFileAtomic(queue.dir, file, content)
          // The rename is durable only once the directory is flushed too.
          const handle = await open(queue.dir, "r")
          await handle.sync().finally(() => handle.close())
        })
      queue.writes.set(entry.id, write)
      void write.finally(() => {
        if (queue.writes.get(entry.id) === write) queue.writes.delete(entry.id)
      })
      return Effect.tryPromise({ try: () => write, catch: queueError(`cannot write the queue entry ${file}`) })
    }

    const remove = (queue: Queue, entry: Entry) =>
      Effect.tryPromise({
        try: async () => {
          await queue.writes.get(entry.id)?.catch(() => undefined)
          await rm(fileOf(queue, entry.id), { force: true })
          queue.entries.delete(entry.id)
        },
        catch: queueError(`cannot remove a queue entry in ${queue.dir}`)
      })

    /** Records how an attempt ended, as the store contract says: done, retried later, failed, or released. */
    const settle = (queue: Queue, entry: Entry, exit: Exit.Exit<unknown, unknown>, options: TakeOptions) =>
      Effect.gen(function* () {
        const now = clock.currentTimeMillisUnsafe()
        entry.stateChangedAt = now
        if (exit._tag === "Success") {
          entry.state = "completed"
          entry.element = undefined
        } else if (isDeadLetter(exit.cause)) {
          entry.state = "failed"
          entry.lastFailure = Cause.pretty(exit.cause)
        } else if (Cause.hasInterruptsOnly(exit.cause)) {
          // Cut short by a shutdown: not an attempt.
          entry.attempts -= 1
          entry.state = "pending"
        } else if (entry.attempts >= options.maxAttempts) {
          entry.state = "failed"
          entry.lastFailure = Cause.pretty(exit.cause)
        } else {
          entry.visibleAt = now + Duration.toMillis(yield* options.retryDelay(entry.attempts))
          entry.state = "pending"
          entry.lastFailure = Cause.pretty(exit.cause)
        }
        if (entry.state === "pending") {
          queue.pending.add(entry)
          queue.latch.openUnsafe()
        }
        yield* persist(queue, entry).pipe(
          Effect.catch((error) => Effect.logError(`[mailroom] queue: ${error.message}: ${String(error.cause)}`))
        )
      })

    return PersistedQueue.PersistedQueueStore.of({
      offer: ({ name, id, element, delay }) =>
        Effect.suspend(() => {
          const queue = queueOf(name)
          const existing = queue.entries.get(id)
          // Offered before: nothing new, once the first offer is on disk.
          if (existing !== undefined) {
            const pendingWrite = queue.writes.get(id)
            return pendingWrite === undefined
              ? Effect.void
              : Effect.tryPromise({ try: () => pendingWrite, catch: queueError(`cannot write the queue entry ${id}`) })
          }
          const now = clock.currentTimeMillisUnsafe()
          const entry: Entry = {
            id,
            element,
            attempts: 0,
            state: "pending",
            visibleAt: delay === undefined ? now : now + Duration.toMillis(delay),
            stateChangedAt: now
          }
          queue.entries.set(id, entry)
          return persist(queue, entry).pipe(
            Effect.tap(() =>
              Effect.sync(() => {
                queue.pending.add(entry)
                queue.latch.openUnsafe()
              })
            ),
            Effect.tapError(() => Effect.sync(() => queue.entries.delete(id)))
          )
        }),
      take: (options) =>
        Effect.gen(function* () {
          const queue = queueOf(options.name)
          for (;;) {
            // Closed before looking, so an offer or a release while looking opens it again.
            queue.latch.closeUnsafe()
            const now = clock.currentTimeMillisUnsafe()
            let found: Entry | undefined
            let next = Number.POSITIVE_INFINITY
            for (const entry of queue.pending) {
              if (entry.attempts >= options.maxAttempts) continue
              if (entry.visibleAt <= now) {
                found = entry
                break
              }
              next = Math.min(next, entry.visibleAt)
            }
            if (found === undefined) {
              yield* next === Number.POSITIVE_INFINITY
                ? queue.latch.await
                : Effect.race(queue.latch.await, Effect.sleep(Duration.millis(next - now)))
              continue
            }
            const entry = found
            // Claimed, written and given its settlement without a gap an interruption could fall into.
            return yield* Effect.uninterruptible(
              Effect.gen(function* () {
                queue.pending.delete(entry)
                entry.state = "processing"
                entry.attempts += 1
                entry.stateChangedAt = now
                // Other takers may look again: this one took only one entry.
                queue.latch.openUnsafe()
                yield* persist(queue, entry).pipe(
                  Effect.tapError(() =>
                    Effect.sync(() => {
                      entry.attempts -= 1
                      entry.state = "pending"
                      queue.pending.add(entry)
                    })
                  )
                )
                yield* Effect.addFinalizer((exit) => settle(queue, entry, exit, options))
                return { id: entry.id, attempts: entry.attempts, element: entry.element }
              })
            )
          }
        }),
      cleanup: ({ timeToLive, failedTimeToLive }) =>
        Effect.gen(function* () {
          const now = clock.currentTimeMillisUnsafe()
          const completedBefore = now - Duration.toMillis(timeToLive)
          const failedBefore = failedTimeToLive === undefined ? undefined : now - Duration.toMillis(failedTimeToLive)
          for (const queue of queues.values()) {
            for (const entry of [...queue.entries.values()]) {
              const before =
                entry.state === "completed" ? completedBefore : entry.state === "failed" ? failedBefore : undefined
              if (before !== undefined && entry.stateChangedAt <= before) yield* remove(queue, entry)
            }
          }
        })
    })
  })

/** Provides Effect's `PersistedQueueStore`; give it to `PersistedQueue.layer` for queues on disk. */
export const layer = (
  options: Options
): Layer.Layer<PersistedQueue.PersistedQueueStore, Config.ConfigError | PersistedQueue.PersistedQueueError> =>
  Layer.effect(PersistedQueue.PersistedQueueStore, make(options))

/** As `layer`, with the options read from `Config`, e.g. `layerConfig({ dir: Config.String("QUEUE_DIR") })`. */
export const layerConfig = (
  config: Config.Wrap<ConfigOptions>
): Layer.Layer<PersistedQueue.PersistedQueueStore, Config.ConfigError | PersistedQueue.PersistedQueueError> =>
  Layer.effect(PersistedQueue.PersistedQueueStore, Effect.flatMap(Config.unwrap(config), make))
