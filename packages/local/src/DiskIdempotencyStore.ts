// The durable IdempotencyStore of one machine: one small JSON file per (organisation, key) under a
// directory, so a restart forgets no key, and every process using the directory acts as one store.

import { createHash, randomUUID } from "node:crypto"
import { link, mkdir, open, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises"
import * as path from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { IdempotencyStore, MailroomError } from "@mailroom/core"
import * as Adapter from "@mailroom/core/adapter"
import * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Check from "./internal/options.js"

/** What `layerConfig` reads: the directory of the entries. */
export interface ConfigOptions {
  /** Directory of the entries, created when needed. Processes that share it share their keys. */
  readonly dir: string
  /** How long an entry is kept after its last write. Default 24 hours. */
  readonly retention?: Duration.Input
  /** How often expired entries are deleted (an expired entry is ignored on read anyway). Default 1 hour. */
  readonly sweepInterval?: Duration.Input
}

/** What `make` and `layer` take: the same, as the store has no client to bring. */
export type Options = ConfigOptions

interface Stored {
  readonly expiresAt: number
  readonly entry: IdempotencyStore.Entry
}

// A lock is held for a few file operations. One older than this was left by a process that died
// holding it, and is broken.
const staleLockMs = 10_000
// A temporary file is renamed or linked within milliseconds; older ones were left by a crash.
const staleTemporaryMs = 60_000

const unavailable = (cause: unknown) =>
  new MailroomError.Unavailable({
    message: "Idempotency-Keys cannot be checked right now; nothing was sent, try again later",
    cause
  })

const code = (error: unknown) => (error as NodeJS.ErrnoException | undefined)?.code

/**
 * The store on `dir`, sweeping expired entries until its scope closes. Fails with a `ConfigError`
 * naming the option when `dir` is empty or a duration is not one above zero, and with `Unavailable`
 * when the directory cannot be created.
 */
export const make = (
  options: Options
): Effect.Effect<IdempotencyStore.IdempotencyStore, Config.ConfigError | MailroomError.Unavailable, Scope.Scope> =>
  Effect.gen(function* () {
    const dir = path.resolve(yield* Check.directory("dir", options.dir))
    const retention = Duration.toMillis(
      yield* Adapter.duration("retention", options.retention ?? IdempotencyStore.defaultRetention)
    )
    const sweepInterval = yield* Adapter.duration("sweepInterval", options.sweepInterval ?? "1 hour")
    const clock = yield* Clock.Clock
    yield* Effect.tryPromise({
      try: () => mkdir(dir, { recursive: true }),
      catch: (cause) =>
        new MailroomError.Unavailable({
          message: `the idempotency directory ${dir} cannot be created: ${(cause as Error).message}`,
          cause
        })
    })

    // A digest names the file: any key, of any organisation, is a safe and distinct file name.
    const fileOf = (scope: IdempotencyStore.Scope) =>
      path.join(
        dir,
        `${createHash("sha256")
          .update(JSON.stringify([scope.orgId, scope.key]))
          .digest("hex")}.json`
      )

    const read = async (file: string): Promise<Stored | undefined> => {
      let text: string
      try {
        text = await readFile(file, "utf8")
      } catch (error) {
        if (code(error) === "ENOENT") return undefined
        throw error
      }
      // Files are only ever linked or renamed into place whole, so a file that does not parse was
      // damaged outside this store: an error, never a free key.
      return JSON.parse(text) as Stored
    }

    const temporary = async (stored: Stored) => {
      const file = path.join(dir, `.tmp-${randomUUID()}`)
      await writeFile(file, JSON.stringify(stored))
      return file
    }

    /** Runs `f` holding the key's lock: replacing or deleting an expired entry needs it, creating one does not. */
    const locked = async <A>(file: string, f: () => Promise<A>): Promise<A> => {
      const lock = `${file}.lock`
      for (;;) {
        try {
          await (await open(lock, "wx")).close()
          break
        } catch (error) {
          if (code(error) !== "EEXIST") throw error
          const held = await stat(lock).catch(() => undefined)
          if (held !== undefined && Date.now() - held.mtimeMs > staleLockMs) await rm(lock, { force: true })
          else await sleep(2 + Math.random() * 5)
        }
      }
      try {
        return await f()
      } finally {
        await rm(lock, { force: true })
      }
    }

    const reserve = async (scope: IdempotencyStore.Scope, fingerprint: string, now: number) => {
      const file = fileOf(scope)
      // Written whole before it is linked, so no reader ever sees a half-written entry.
      const mine = await temporary({ expiresAt: now + retention, entry: { _tag: "InFlight", fingerprint } })
      try {
        for (;;) {
          // link() is the exclusive create: it fails if the key has an entry, in any process.
          try {
            await link(mine, file)
            return undefined
          } catch (error) {
            if (code(error) !== "EEXIST") throw error
          }
          const found = await read(file)
          if (found === undefined) continue // released in between: try again
          if (found.expiresAt > now) return found.entry
          // Expired. Replace it under the lock, re-reading there, so a newer entry is never overwritten.
          const outcome = await locked(file, async () => {
            const current = await read(file)
            if (current === undefined) return "retry" as const
            if (current.expiresAt > now) return current.entry
            await rename(mine, file)
            return "won" as const
          })
          if (outcome === "won") return undefined
          if (outcome !== "retry") return outcome
        }
      } finally {
        await rm(mine, { force: true })
      }
    }

    const complete = async (scope: IdempotencyStore.Scope, entry: IdempotencyStore.Entry, now: number) => {
      const file = await temporary({ expiresAt: now + retention, entry })
      try {
        await rename(file, fileOf(scope))
      } catch (error) {
        await rm(file, { force: true })
        throw error
      }
    }

    const sweep = async () => {
      // Entries expire by the Clock that wrote them; temporary files age by the file system's clock.
      const now = clock.currentTimeMillisUnsafe()
      for (const name of await readdir(dir)) {
        const file = path.join(dir, name)
        if (name.startsWith(".tmp-")) {
          const info = await stat(file).catch(() => undefined)
          if (info !== undefined && Date.now() - info.mtimeMs > staleTemporaryMs) await rm(file, { force: true })
        } else if (name.endsWith(".json") && ((await read(file).catch(() => undefined))?.expiresAt ?? now) < now) {
          await locked(file, async () => {
            const current = await read(file)
            if (current !== undefined && current.expiresAt < now) await rm(file, { force: true })
          })
        }
      }
    }

    yield* Effect.tryPromise(sweep).pipe(
      Effect.catch((error) =>
        Effect.logWarning(`[mailroom] the idempotency directory ${dir} could not be swept: ${error.cause}`)
      ),
      Effect.repeat(Schedule.spaced(sweepInterval)),
      Effect.forkScoped
    )

    // The caller sees a generic 503; the log says which file operation failed, for the operator.
    const run = <A>(what: string, f: (now: number) => Promise<A>) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.tryPromise({ try: () => f(now), catch: unavailable }).pipe(
          Effect.tapError((error) =>
            Effect.logError(`[mailroom] idempotency ${what} in ${dir} failed: ${String(error.cause)}`)
          )
        )
      )

    return IdempotencyStore.IdempotencyStore.of({
      reserve: (scope, fingerprint) => run("reserve", (now) => reserve(scope, fingerprint, now)),
      complete: (scope, entry) => run("complete", (now) => complete(scope, entry, now)),
      release: (scope) => run("release", () => rm(fileOf(scope), { force: true }))
    })
  })

/** Provides core's `IdempotencyStore`; the sweeping stops when the layer is released. */
export const layer = (
  options: Options
): Layer.Layer<IdempotencyStore.IdempotencyStore, Config.ConfigError | MailroomError.Unavailable> =>
  Layer.effect(IdempotencyStore.IdempotencyStore, make(options))

/** As `layer`, with the options read from `Config`, e.g. `layerConfig({ dir: Config.String("IDEMPOTENCY_DIR") })`. */
export const layerConfig = (
  config: Config.Wrap<ConfigOptions>
): Layer.Layer<IdempotencyStore.IdempotencyStore, Config.ConfigError | MailroomError.Unavailable> =>
  Layer.effect(IdempotencyStore.IdempotencyStore, Effect.flatMap(Config.unwrap(config), make))
