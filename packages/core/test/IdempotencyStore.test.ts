import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { IdempotencyStore } from "../src/index.js"
import { IdempotencyStoreSuite } from "../src/testing/index.js"

const scope = (key: string) => ({ orgId: "org_acme", key })

describe("IdempotencyStore.makeMemory", () => {
  it.effect("keeps each entry for the retention period from its last write, then forgets it", () =>
    Effect.gen(function* () {
      const store = IdempotencyStore.makeMemory({ retention: "24 hours" })
      assert.isUndefined(yield* store.reserve(scope("a"), "fa"))
      yield* TestClock.adjust("1 hour")
      assert.isUndefined(yield* store.reserve(scope("b"), "fb"))
      yield* TestClock.adjust("1 hour")
      // Completing "a" renews it: it now outlives "b".
      const response = { message_id: "m", from: "a@acme.example", to: [], subject: "s", attachments: [] }
      yield* store.complete(scope("a"), { _tag: "Completed", fingerprint: "fa", response })
      yield* TestClock.adjust("23 hours") // t = 25 h: "b" (written at 1 h) has expired, "a" (2 h) has not
      assert.deepStrictEqual(yield* store.reserve(scope("a"), "other"), {
        _tag: "Completed",
        fingerprint: "fa",
        response
      })
      assert.isUndefined(yield* store.reserve(scope("b"), "fb2"), "b should have expired")
      yield* TestClock.adjust("1 hour") // t = 26 h
      assert.isUndefined(yield* store.reserve(scope("a"), "fa2"), "a should have expired")
    })
  )

  it.effect("keys are per organisation; release frees a key at once", () =>
    Effect.gen(function* () {
      const store = IdempotencyStore.makeMemory()
      assert.isUndefined(yield* store.reserve(scope("k"), "f"))
      assert.isUndefined(yield* store.reserve({ orgId: "org_globex", key: "k" }, "f"))
      assert.deepStrictEqual(yield* store.reserve(scope("k"), "g"), { _tag: "InFlight", fingerprint: "f" })
      yield* store.release(scope("k"))
      assert.isUndefined(yield* store.reserve(scope("k"), "g"))
    })
  )
})

IdempotencyStoreSuite("memory", {
  layer: ({ retention }) => IdempotencyStore.layerMemory({ retention })
})
