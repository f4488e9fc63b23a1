// An `att_` id is bound to the organisation it was issued to: another organisation presenting it is
// refused by the id's tag alone, before the store is asked anything about any key.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Attachments, ObjectStore } from "../src/index.js"
import { acme, globex } from "./fixtures.js"

/** A memory store that records the key of every call the service makes to it. */
const recordingStore = () => {
  const memory = ObjectStore.makeMemory()
  const asked: Array<string> = []
  const store: ObjectStore.ObjectStore = {
    ...memory,
    presignPut: (options) =>
      Effect.andThen(
        Effect.sync(() => asked.push(`presignPut ${options.key}`)),
        memory.presignPut(options)
      ),
    presignGet: (options) =>
      Effect.andThen(
        Effect.sync(() => asked.push(`presignGet ${options.key}`)),
        memory.presignGet(options)
      ),
    head: (key) =>
      Effect.andThen(
        Effect.sync(() => asked.push(`head ${key}`)),
        memory.head(key)
      ),
    get: (key) =>
      Effect.andThen(
        Effect.sync(() => asked.push(`get ${key}`)),
        memory.get(key)
      ),
    read: (key, options) =>
      Effect.andThen(
        Effect.sync(() => asked.push(`read ${key}`)),
        memory.read(key, options)
      ),
    put: (key, content, type) =>
      Effect.andThen(
        Effect.sync(() => asked.push(`put ${key}`)),
        memory.put(key, content, type)
      ),
    delete: (key) =>
      Effect.andThen(
        Effect.sync(() => asked.push(`delete ${key}`)),
        memory.delete(key)
      )
  }
  return {
    memory,
    asked,
    layer: Attachments.layer({ idSecret: "ids-secret" }).pipe(
      Layer.provide(Layer.succeed(ObjectStore.ObjectStore, store))
    )
  }
}

describe("attachment ids and organisations", () => {
  it.effect("an id decoded with another organisation's id is refused by its tag, before any store access", () => {
    const world = recordingStore()
    return Effect.gen(function* () {
      const attachments = yield* Attachments.Attachments
      const { url, attachment_id } = yield* attachments.presign(acme, { filename: "contract.pdf" })
      const put = yield* Effect.promise(() =>
        world.memory.fetch(url, {
          method: "PUT",
          headers: { "content-type": "application/octet-stream" },
          body: "signed"
        })
      )
      assert.strictEqual(put.status, 200)
      // Its own organisation reaches it, through the store.
      world.asked.length = 0
      yield* attachments.downloadById(acme, attachment_id)
      assert.isNotEmpty(world.asked, "the owner's download asks the store")

      world.asked.length = 0
      for (const attempt of [
        attachments.downloadById(globex, attachment_id),
        attachments.deleteById(globex, attachment_id)
      ]) {
        const error = yield* Effect.flip(attempt as Effect.Effect<unknown, { readonly _tag: string }>)
        assert.strictEqual(error._tag, "NotFound")
      }
      assert.deepStrictEqual(
        world.asked,
        [],
        "an id issued to org_acme, presented by org_globex, must be refused by its tag before any store access"
      )
      assert.deepStrictEqual(world.memory.keys().length, 1)
    }).pipe(Effect.provide(world.layer))
  })
})

describe("ids issued before", () => {
  // Issued by this version for org_acme with idSecret "ids-secret" at 1767225600000: ids live on in
  // clients' records, so a change to how they are made must leave every one issued so far resolving.
  const key = "attachments/org_acme/1767225600000_f117d1b1af6a0d80b575-Relevé août.pdf"
  const id = "att_01019b76daa800f117d1b1af6a0d80b57552656c6576c3a920616fc3bb742e706466368e3ee5452e8acc32a6cdb4"

  it.effect("still reach their file, for their organisation only", () => {
    const world = recordingStore()
    return Effect.gen(function* () {
      const attachments = yield* Attachments.Attachments
      yield* world.memory.put(key, new TextEncoder().encode("kept"), "application/pdf")
      const { download_url } = yield* attachments.downloadById(acme, id)
      const got = yield* Effect.promise(() => world.memory.fetch(download_url).then((response) => response.text()))
      assert.strictEqual(got, "kept")
      const foreign = yield* Effect.flip(attachments.downloadById(globex, id))
      assert.strictEqual(foreign._tag, "NotFound")
      // One flipped bit of the tag, and the id is no one's.
      const forged = `${id.slice(0, -1)}${id.endsWith("4") ? "5" : "4"}`
      assert.strictEqual((yield* Effect.flip(attachments.downloadById(acme, forged)))._tag, "NotFound")
    }).pipe(Effect.provide(world.layer))
  })
})
