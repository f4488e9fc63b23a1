// What a send asks of the store: one read per stored attachment, and no bytes read for a file that
// cannot be sent. Counted by a store that wraps the memory store and records every call.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as Adapter from "../src/adapter.js"
import {
  EmailProvider,
  IdempotencyStore,
  Mailer,
  MessageLog,
  ObjectStore,
  Organizations,
  SendQueue,
  Suppressions
} from "../src/index.js"
import { acme, organizations } from "./fixtures.js"

const counted = () => {
  const memory = ObjectStore.makeMemory()
  const calls = { head: 0, get: 0, read: 0, bodies: 0 }
  const store: ObjectStore.ObjectStore = {
    ...memory,
    head: (key) =>
      Effect.andThen(
        Effect.sync(() => calls.head++),
        memory.head(key)
      ),
    get: (key) =>
      Effect.andThen(
        Effect.sync(() => calls.get++),
        memory.get(key)
      ),
    // As a remote store does: the headers first, the body only once admitted.
    read: (key, options) =>
      Effect.gen(function* () {
        calls.read++
        const info = yield* memory.head(key)
        yield* Adapter.admit(key, info, options)
        calls.bodies++
        return { info, content: yield* memory.get(key) }
      })
  }
  return { memory, store, calls }
}

const world = (limits: EmailProvider.Limits = EmailProvider.memoryLimits) => {
  const { memory, store, calls } = counted()
  const provider = EmailProvider.makeMemory({ limits })
  const layer = Mailer.layer().pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        Layer.succeed(ObjectStore.ObjectStore, store),
        Layer.succeed(EmailProvider.EmailProvider, provider),
        Layer.succeed(Organizations.Organizations, organizations),
        MessageLog.layerMemory(),
        Suppressions.layerMemory(),
        IdempotencyStore.layerMemory(),
        SendQueue.layerMemory()
      )
    )
  )
  return { memory, calls, provider, layer }
}

const request = (keys: ReadonlyArray<string>) => ({
  from: "billing@acme.example",
  to: ["alice@example.com"],
  subject: "Invoice",
  body: { text: "Attached." },
  attachments: keys.map((key, i) => ({ filename: `file-${i}.pdf`, key }))
})

const key = (name: string) => `attachments/org_acme/1767225600000-${name}`

describe("a send reads each stored attachment once", () => {
  it.effect("two attachments: two reads, no head or get, and their stored types and bytes reach the provider", () => {
    const w = world()
    return Effect.gen(function* () {
      yield* w.memory.put(key("a.pdf"), new Uint8Array([1, 2, 3]), "application/pdf")
      yield* w.memory.put(key("b.png"), new Uint8Array([4, 5]), "image/png")
      yield* (yield* Mailer.Mailer).send(acme, request([key("a.pdf"), key("b.png")]))
      assert.deepStrictEqual(w.calls, { head: 0, get: 0, read: 2, bodies: 2 })
      const [sent] = w.provider.sent
      assert.deepStrictEqual(
        sent?.email.attachments.map((a) => [a.contentType, [...a.content]]),
        [
          ["application/pdf", [1, 2, 3]],
          ["image/png", [4, 5]]
        ]
      )
    }).pipe(Effect.provide(w.layer))
  })

  it.effect("a file over the message limit is refused with the size message, its bytes never read", () => {
    const w = world({ ...EmailProvider.memoryLimits, maxMessageBytes: 1000 })
    return Effect.gen(function* () {
      yield* w.memory.put(key("big.pdf"), new Uint8Array(900), "application/pdf")
      const error = yield* Effect.flip((yield* Mailer.Mailer).send(acme, request([key("big.pdf")])))
      assert.strictEqual(error._tag, "ValidationError")
      assert.deepStrictEqual(error._tag === "ValidationError" ? error.errors : [], [
        // 9 bytes of text, and 900 bytes as 1200 of base64.
        "attachments: the message is 1209 bytes with attachments base64-encoded; the provider accepts at most 1000"
      ])
      assert.strictEqual(w.calls.bodies, 0, "the body of a file that cannot be sent was read")
      assert.strictEqual(w.provider.sent.length, 0)
    }).pipe(Effect.provide(w.layer))
  })

  it.effect("files that fit one by one but not together: the total is reported, as before", () => {
    const w = world({ ...EmailProvider.memoryLimits, maxMessageBytes: 1000 })
    return Effect.gen(function* () {
      for (const name of ["a.pdf", "b.pdf"]) yield* w.memory.put(key(name), new Uint8Array(600), "application/pdf")
      const error = yield* Effect.flip((yield* Mailer.Mailer).send(acme, request([key("a.pdf"), key("b.pdf")])))
      assert.deepStrictEqual(error._tag === "ValidationError" ? error.errors : [], [
        "attachments: the message is 1609 bytes with attachments base64-encoded; the provider accepts at most 1000"
      ])
      assert.isAtMost(w.calls.bodies, 1, "both bodies were read for a message that cannot be sent")
    }).pipe(Effect.provide(w.layer))
  })

  it.effect("a missing file is named with the message of old; the present one's size still counts", () => {
    const w = world({ ...EmailProvider.memoryLimits, maxMessageBytes: 1000 })
    return Effect.gen(function* () {
      yield* w.memory.put(key("big.pdf"), new Uint8Array(900), "application/pdf")
      const error = yield* Effect.flip((yield* Mailer.Mailer).send(acme, request([key("gone.pdf"), key("big.pdf")])))
      assert.deepStrictEqual(error._tag === "ValidationError" ? error.errors : [], [
        "attachments[0].key: no file has been uploaded under this key",
        "attachments: the message is 1209 bytes with attachments base64-encoded; the provider accepts at most 1000"
      ])
      assert.strictEqual(w.calls.bodies, 0)
    }).pipe(Effect.provide(w.layer))
  })
})
