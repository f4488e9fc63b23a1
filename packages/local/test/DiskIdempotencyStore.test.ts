// The disk IdempotencyStore: the conformance suite, then what only a disk store must do: keep its keys
// across a restart, act as one store for every instance on a directory, and stay safe when damaged.
import { createHash, randomUUID } from "node:crypto"
import { mkdtemp, readdir, rm, utimes, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { assert, it } from "@effect/vitest"
import type { IdempotencyStore, MailroomError } from "@mailroom/core"
import { expectConfigError, IdempotencyStoreSuite } from "@mailroom/core/testing"
import { Config, ConfigProvider, Duration, Effect, Exit } from "effect"
import { afterAll, beforeAll, describe } from "vitest"
import { DiskIdempotencyStore } from "../src/index.js"

let base: string
let n = 0
beforeAll(async () => {
  base = await mkdtemp(path.join(tmpdir(), "mailroom-idempotency-"))
})
afterAll(() => rm(base, { recursive: true, force: true }))
const freshDir = () => path.join(base, `store-${n++}`)

// The suite's layers are made while tests are collected, before `base` exists.
const suiteDir = path.join(tmpdir(), `mailroom-idempotency-suite-${randomUUID()}`)
afterAll(() => rm(suiteDir, { recursive: true, force: true }))
IdempotencyStoreSuite("disk", {
  layer: ({ retention }) =>
    DiskIdempotencyStore.layer({ dir: path.join(suiteDir, String(Duration.toMillis(retention))), retention }),
  sharedByInstances: true
})

const scope = { orgId: "org_acme", key: "order-42" }
const response = {
  message_id: "m-1",
  from: "billing@acme.example",
  to: ["alice@example.com"],
  subject: "Your invoice",
  attachments: []
}
const fileOf = (dir: string, s: IdempotencyStore.Scope) =>
  path.join(
    dir,
    `${createHash("sha256")
      .update(JSON.stringify([s.orgId, s.key]))
      .digest("hex")}.json`
  )

/** Runs `use` on a store in `dir` that is closed afterwards, as on shutdown. */
const withStore = <A, E>(
  options: DiskIdempotencyStore.Options,
  use: (store: IdempotencyStore.IdempotencyStore) => Effect.Effect<A, E>
) => Effect.scoped(Effect.flatMap(DiskIdempotencyStore.make(options), use))

describe("DiskIdempotencyStore", () => {
  it.live("a new store on the same directory (a restart) replays what the old one recorded", () =>
    Effect.gen(function* () {
      const dir = freshDir()
      yield* withStore({ dir }, (store) =>
        Effect.gen(function* () {
          assert.isUndefined(yield* store.reserve(scope, "f"))
          yield* store.complete(scope, { _tag: "Completed", fingerprint: "f", response })
          // Left in flight, as by a process that died while sending: whether it was sent is unknown.
          assert.isUndefined(yield* store.reserve({ ...scope, key: "crashed" }, "c"))
        })
      )
      yield* withStore({ dir }, (store) =>
        Effect.gen(function* () {
          assert.deepStrictEqual(yield* store.reserve(scope, "f"), { _tag: "Completed", fingerprint: "f", response })
          assert.deepStrictEqual(yield* store.reserve({ ...scope, key: "crashed" }, "c"), {
            _tag: "InFlight",
            fingerprint: "c"
          })
        })
      )
    })
  )

  it.live("file names are digests: no key, however hostile, names or escapes the directory", () =>
    Effect.gen(function* () {
      const dir = freshDir()
      yield* withStore({ dir }, (store) =>
        Effect.forEach(["../../escape", "/etc/passwd", "a\\b", "CON", ".lock"], (key) =>
          store.reserve({ orgId: "org_acme", key }, "f")
        )
      )
      const names = yield* Effect.promise(() => readdir(dir))
      assert.strictEqual(names.length, 5)
      for (const name of names) assert.match(name, /^[0-9a-f]{64}\.json$/)
    })
  )

  it.live("expired entries and temporary files left by a crash are swept from the directory", () =>
    Effect.gen(function* () {
      const dir = freshDir()
      yield* withStore({ dir, retention: "200 millis", sweepInterval: "100 millis" }, (store) =>
        Effect.gen(function* () {
          yield* store.reserve(scope, "f")
          yield* store.reserve({ ...scope, key: "other" }, "f")
          const leftover = path.join(dir, ".tmp-left-by-a-crash")
          yield* Effect.promise(async () => {
            await writeFile(leftover, "{}")
            const old = new Date(Date.now() - 120_000)
            await utimes(leftover, old, old)
          })
          yield* Effect.sleep("700 millis")
          assert.deepStrictEqual(yield* Effect.promise(() => readdir(dir)), [])
        })
      )
    })
  )

  it.live("a lock left by a process that died holding it is broken, not waited on forever", () =>
    Effect.gen(function* () {
      const dir = freshDir()
      yield* withStore({ dir, retention: "100 millis" }, (store) =>
        Effect.gen(function* () {
          assert.isUndefined(yield* store.reserve(scope, "f"))
          yield* Effect.sleep("200 millis")
          const lock = `${fileOf(dir, scope)}.lock`
          yield* Effect.promise(async () => {
            await writeFile(lock, "")
            const old = new Date(Date.now() - 30_000)
            await utimes(lock, old, old)
          })
          assert.isUndefined(yield* store.reserve(scope, "g"))
        })
      )
    })
  )

  it.live("a damaged entry is Unavailable (the send is refused), never a free key", () =>
    Effect.gen(function* () {
      const dir = freshDir()
      yield* withStore({ dir }, (store) =>
        Effect.gen(function* () {
          yield* Effect.promise(() => writeFile(fileOf(dir, scope), "{not json"))
          const error = yield* Effect.flip(store.reserve(scope, "f"))
          assert.strictEqual(error._tag, "Unavailable")
          assert.notInclude(error.message, dir, "the caller's message names no server path")
        })
      )
    })
  )

  it.live("a directory that cannot be created fails the layer, naming it", () =>
    Effect.gen(function* () {
      const file = path.join(base, "a-file")
      yield* Effect.promise(() => writeFile(file, ""))
      const exit = yield* Effect.exit(withStore({ dir: path.join(file, "idempotency") }, () => Effect.void))
      assert.isTrue(Exit.isFailure(exit))
      const error = Exit.isFailure(exit)
        ? (exit.cause.reasons[0] as { error?: MailroomError.Unavailable }).error
        : undefined
      assert.strictEqual(error?._tag, "Unavailable")
      assert.include(error?.message ?? "", path.join(file, "idempotency"))
    })
  )

  it.effect("unusable options fail make and layer with a ConfigError naming them", () =>
    Effect.gen(function* () {
      const refusals: ReadonlyArray<readonly [DiskIdempotencyStore.Options, string]> = [
        [{ dir: "" }, "dir"],
        [{ dir: freshDir(), retention: "soon" as Duration.Input }, "retention"],
        [{ dir: freshDir(), retention: 0 }, "retention"],
        [{ dir: freshDir(), sweepInterval: "-1 minutes" as Duration.Input }, "sweepInterval"],
        [{ dir: freshDir(), sweepInterval: "Infinity" }, "sweepInterval"]
      ]
      for (const [options, option] of refusals) {
        yield* expectConfigError(DiskIdempotencyStore.make(options), option)
        yield* expectConfigError(DiskIdempotencyStore.layer(options), option)
      }
    })
  )

  it.effect("layerConfig fails with a ConfigError naming a retention read but unusable", () =>
    Effect.gen(function* () {
      yield* expectConfigError(
        DiskIdempotencyStore.layerConfig({
          dir: Config.String("IDEMPOTENCY_DIR"),
          retention: Config.Duration("IDEMPOTENCY_RETENTION")
        }),
        "retention"
      ).pipe(
        Effect.provide(
          ConfigProvider.layer(
            ConfigProvider.fromUnknown({ IDEMPOTENCY_DIR: freshDir(), IDEMPOTENCY_RETENTION: "0 seconds" })
          )
        )
      )
    })
  )
})
