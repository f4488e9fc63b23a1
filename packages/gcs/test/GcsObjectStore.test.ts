// GcsObjectStore against the Cloud Storage emulator of firebase-tools, started in this process:
// core's conformance suite, then checks that read the emulator directly instead of trusting the adapter.
import { afterAll, assert, describe, it, layer } from "@effect/vitest"
import { ObjectStore } from "@mailroom/core"
import { ObjectStoreSuite } from "@mailroom/core/testing"
import { Config, ConfigProvider, Effect, Layer } from "effect"
import { GcsObjectStore } from "../src/index.js"
import { startStorageEmulator } from "./support/emulator.js"
import { makeServiceAccount } from "./support/keys.js"
import { makeSignedUrlFetch } from "./support/signedUrlFetch.js"

const emulator = await startStorageEmulator()
afterAll(() => emulator.close())

const account = makeServiceAccount()
const bucket = "mailroom-attachments"
const options = {
  bucket,
  projectId: emulator.projectId,
  apiEndpoint: emulator.origin,
  credentials: account.credentials
}

// No opt-outs: the emulator stores and serves the objects, and the signed-URL requests go through
// makeSignedUrlFetch, which refuses what GCS would refuse (another Content-Type or length than signed).
ObjectStoreSuite("gcs (firebase-tools emulator)", {
  layer: GcsObjectStore.layer(options),
  fetch: makeSignedUrlFetch(emulator, account)
})

const bytes = (text: string) => new TextEncoder().encode(text)
const emulatorObject = (key: string) => `${emulator.origin}/storage/v1/b/${bucket}/o/${encodeURIComponent(key)}`
/** Reads an object's metadata and bytes from the emulator itself, or `undefined` when it has none. */
const readBack = (key: string) =>
  Effect.promise(async () => {
    const metadata = await fetch(emulatorObject(key))
    if (metadata.status === 404) return undefined
    const { contentType, size, name } = (await metadata.json()) as { contentType: string; size: string; name: string }
    const media = await fetch(`${emulatorObject(key)}?alt=media`)
    return { name, contentType, size: Number(size), content: new Uint8Array(await media.arrayBuffer()) }
  })
/** Stores an object in the emulator without going through the adapter. */
const seed = (key: string, content: Uint8Array, contentType: string) =>
  Effect.promise(async () => {
    const response = await fetch(
      `${emulator.origin}/upload/storage/v1/b/${bucket}/o?uploadType=media&name=${encodeURIComponent(key)}`,
      { method: "POST", headers: { "content-type": contentType }, body: content as BodyInit }
    )
    assert.isTrue(response.ok, `seeding ${key} answered ${response.status}`)
  })
const requestsSince = (start: number) => emulator.requests.slice(start).map((r) => `${r.method} ${r.url}`)

describe("GcsObjectStore on the emulator", () => {
  layer(GcsObjectStore.layer(options), { excludeTestServices: true })((it) => {
    it.effect("put stores the bytes and type under the exact key, in one multipart request", () =>
      Effect.gen(function* () {
        const store = yield* ObjectStore.ObjectStore
        const key = "attachments/org_acme/.index/att_0123abcd.json"
        const start = emulator.requests.length
        yield* store.put(key, bytes('{"key":"attachments/org_acme/1-a.pdf"}'), "application/json")
        assert.deepStrictEqual(requestsSince(start), [
          `POST /upload/storage/v1/b/${bucket}/o?uploadType=multipart&name=${encodeURIComponent(key)}`
        ])
        const stored = yield* readBack(key)
        assert.deepStrictEqual(stored, {
          name: key,
          contentType: "application/json",
          size: 38,
          content: bytes('{"key":"attachments/org_acme/1-a.pdf"}')
        })
      })
    )

    it.effect("head, get and delete act on an object the emulator holds", () =>
      Effect.gen(function* () {
        const store = yield* ObjectStore.ObjectStore
        const key = "attachments/org_acme/1767312000000-Relevé été (2).pdf"
        const content = crypto.getRandomValues(new Uint8Array(4096))
        yield* seed(key, content, "application/pdf")
        assert.deepStrictEqual(yield* store.head(key), { size: 4096, contentType: "application/pdf" })
        assert.deepStrictEqual(yield* store.get(key), content)
        yield* store.delete(key)
        assert.isUndefined(yield* readBack(key), "the emulator still holds the object")
      })
    )

    it.effect("a missing key is ObjectNotFound naming the key, for head, get and delete", () =>
      Effect.gen(function* () {
        const store = yield* ObjectStore.ObjectStore
        const key = "attachments/org_acme/never-written.txt"
        for (const operation of [store.head(key), store.get(key), store.delete(key)]) {
          const error = yield* Effect.flip(operation)
          assert.strictEqual(error._tag, "ObjectNotFound")
          assert.strictEqual(error._tag === "ObjectNotFound" ? error.key : "", key)
        }
      })
    )

    it.effect("an upload through the signed URL lands in the emulator with the signed type", () =>
      Effect.gen(function* () {
        const store = yield* ObjectStore.ObjectStore
        const send = makeSignedUrlFetch(emulator, account)
        const key = "attachments/org_acme/1767312000001-photo.png"
        const url = yield* store.presignPut({ key, contentType: "image/png", expiresIn: 3600, contentLength: 3 })
        const response = yield* Effect.promise(() =>
          send(url, { method: "PUT", headers: { "content-type": "image/png" }, body: bytes("PNG") as BodyInit })
        )
        assert.strictEqual(response.status, 200)
        const stored = yield* readBack(key)
        assert.strictEqual(stored?.contentType, "image/png")
        assert.deepStrictEqual(stored?.content, bytes("PNG"))
      })
    )
  })
})

describe("GcsObjectStore.layerConfig", () => {
  const configured = GcsObjectStore.layerConfig({
    bucket: Config.String("GCS_BUCKET"),
    projectId: Config.String("GCS_PROJECT_ID").pipe(Config.withDefault(undefined)),
    keyFilename: Config.String("GCS_KEY_FILENAME").pipe(Config.withDefault(undefined)),
    apiEndpoint: Config.String("GCS_API_ENDPOINT")
  }).pipe(
    Layer.provide(
      ConfigProvider.layer(
        ConfigProvider.fromUnknown({ GCS_BUCKET: "configured-bucket", GCS_API_ENDPOINT: emulator.origin })
      )
    )
  )

  layer(configured, { excludeTestServices: true })((it) => {
    it.effect("reads bucket and endpoint from Config and stores there", () =>
      Effect.gen(function* () {
        const store = yield* ObjectStore.ObjectStore
        yield* store.put("attachments/org_acme/configured.txt", bytes("hi"), "text/plain")
        const found = yield* Effect.promise(() =>
          fetch(
            `${emulator.origin}/storage/v1/b/configured-bucket/o/${encodeURIComponent("attachments/org_acme/configured.txt")}`
          )
        )
        assert.strictEqual(found.status, 200)
      })
    )
  })

  it.effect("a missing bucket is a ConfigError", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        Layer.build(
          GcsObjectStore.layerConfig({ bucket: Config.String("GCS_BUCKET") }).pipe(
            Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({})))
          )
        ).pipe(Effect.scoped)
      )
      assert.strictEqual(error._tag, "ConfigError")
    })
  )
})
