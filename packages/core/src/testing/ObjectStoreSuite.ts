// The conformance suite every ObjectStore runs against its real peer. It checks results without
// trusting the adapter: uploads and downloads go over the presigned URLs themselves.
import { randomBytes } from "node:crypto"
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import { type ObjectInfo, ObjectStore } from "../ObjectStore.js"

export type ObjectStoreCase = "wrongContentType" | "wrongContentLength" | "downloadFilename"

export interface ObjectStoreSuiteOptions {
  readonly layer: Layer.Layer<ObjectStore, unknown>
  /** Sends requests to presigned URLs. Default: the global `fetch`. */
  readonly fetch?: (input: string | URL | Request, init?: RequestInit) => Promise<Response>
  /** Cases the peer cannot serve, each with the reason, which is printed as the skipped test's name. */
  readonly skip?: Partial<Record<ObjectStoreCase, string>>
  /** Prefix for the keys the suite writes. Default `attachments/conformance/`. */
  readonly prefix?: string
}

const bytesOf = (text: string) => new TextEncoder().encode(text)

export const ObjectStoreSuite = (name: string, options: ObjectStoreSuiteOptions): void => {
  const send = options.fetch ?? ((input, init) => fetch(input, init))
  const prefix = options.prefix ?? "attachments/conformance/"
  let n = 0
  const keyFor = (filename: string) => `${prefix}${Date.now()}${n++}-${filename}`
  const request = (url: string, init?: RequestInit) =>
    Effect.promise(async () => {
      const response = await send(url, init)
      return { response, body: new Uint8Array(await response.arrayBuffer()) }
    })
  const put = (url: string, contentType: string, body: Uint8Array) =>
    request(url, { method: "PUT", headers: { "content-type": contentType }, body: body as BodyInit })
  const missing = (key: string) =>
    Effect.gen(function* () {
      const store = yield* ObjectStore
      for (const operation of [store.head(key), store.get(key), store.delete(key)] as const) {
        const error = yield* Effect.flip(operation as Effect.Effect<unknown, { readonly _tag: string }>)
        assert.strictEqual(error._tag, "ObjectNotFound", `${key} should be missing`)
      }
    })
  const skipOr = (kase: ObjectStoreCase, title: string) =>
    options.skip?.[kase] === undefined ? title : `${title} (not served by this peer: ${options.skip[kase]})`

  describe(`ObjectStoreSuite: ${name}`, () => {
    layer(options.layer, { timeout: 30_000, excludeTestServices: true })((it) => {
      it.effect("presign -> upload -> head -> get -> download -> delete -> not found", () =>
        Effect.gen(function* () {
          const store = yield* ObjectStore
          const key = keyFor("report.pdf")
          const content = new Uint8Array(randomBytes(70_000))
          const upload = yield* store.presignPut({ key, contentType: "application/pdf", expiresIn: 3600 })
          const uploaded = yield* put(upload, "application/pdf", content)
          assert.isTrue(uploaded.response.ok, `upload answered ${uploaded.response.status}`)
          assert.deepStrictEqual(yield* store.head(key), { size: content.byteLength, contentType: "application/pdf" })
          assert.deepStrictEqual(yield* store.get(key), content)
          const download = yield* store.presignGet({ key, expiresIn: 3600 })
          const downloaded = yield* request(download)
          assert.strictEqual(downloaded.response.status, 200)
          assert.deepStrictEqual(downloaded.body, content)
          assert.strictEqual(downloaded.response.headers.get("content-type"), "application/pdf")
          yield* store.delete(key)
          yield* missing(key)
          const after = yield* request(download)
          assert.isFalse(after.response.ok, "a deleted object is not served")
        })
      )

      it.effect("keys with spaces and unicode round-trip through their URLs", () =>
        Effect.gen(function* () {
          const store = yield* ObjectStore
          for (const filename of [
            "Relevé de compte été 2026.pdf",
            "rapport final (v2) 📎.txt",
            "日本語 ファイル.txt"
          ]) {
            const key = keyFor(filename)
            const content = bytesOf(`contents of ${filename}`)
            const uploaded = yield* put(
              yield* store.presignPut({ key, contentType: "text/plain", expiresIn: 3600 }),
              "text/plain",
              content
            )
            assert.isTrue(uploaded.response.ok, `upload of ${filename} answered ${uploaded.response.status}`)
            assert.deepStrictEqual(yield* store.get(key), content)
            const downloaded = yield* request(yield* store.presignGet({ key, expiresIn: 3600 }))
            assert.deepStrictEqual(downloaded.body, content)
            yield* store.delete(key)
            yield* missing(key)
          }
        })
      )

      it.effect.skipIf(options.skip?.wrongContentType !== undefined)(
        skipOr("wrongContentType", "an upload with another Content-Type than signed is refused"),
        () =>
          Effect.gen(function* () {
            const store = yield* ObjectStore
            const key = keyFor("invoice.pdf")
            const url = yield* store.presignPut({ key, contentType: "application/pdf", expiresIn: 3600 })
            const refused = yield* put(url, "text/html", bytesOf("<script>alert(1)</script>"))
            assert.isFalse(refused.response.ok, "the store accepted another content type")
            yield* missing(key)
          })
      )

      it.effect.skipIf(options.skip?.wrongContentLength !== undefined)(
        skipOr("wrongContentLength", "an upload of another length than declared is refused"),
        () =>
          Effect.gen(function* () {
            const store = yield* ObjectStore
            const key = keyFor("exact.bin")
            const url = yield* store.presignPut({
              key,
              contentType: "application/octet-stream",
              expiresIn: 3600,
              contentLength: 4
            })
            const refused = yield* put(url, "application/octet-stream", bytesOf("12345"))
            assert.isFalse(refused.response.ok, "the store accepted another length")
            yield* missing(key)
            const accepted = yield* put(url, "application/octet-stream", bytesOf("1234"))
            assert.isTrue(accepted.response.ok, `the declared length answered ${accepted.response.status}`)
            yield* store.delete(key)
          })
      )

      it.effect.skipIf(options.skip?.downloadFilename !== undefined)(
        skipOr("downloadFilename", "a download URL offers the file under its name"),
        () =>
          Effect.gen(function* () {
            const store = yield* ObjectStore
            const key = keyFor("x.pdf")
            yield* put(
              yield* store.presignPut({ key, contentType: "application/pdf", expiresIn: 3600 }),
              "application/pdf",
              bytesOf("%PDF")
            )
            const downloaded = yield* request(
              yield* store.presignGet({ key, expiresIn: 3600, filename: "Relevé août.pdf" })
            )
            const disposition = downloaded.response.headers.get("content-disposition") ?? ""
            assert.match(disposition, /^attachment;/)
            assert.include(disposition, "filename*=UTF-8''Relev%C3%A9%20ao%C3%BBt.pdf")
            yield* store.delete(key)
          })
      )

      it.effect("put stores bytes that get returns, with their content type", () =>
        Effect.gen(function* () {
          const store = yield* ObjectStore
          const key = keyFor("index.json")
          yield* store.put(key, bytesOf('{"key":"k"}'), "application/json")
          assert.deepStrictEqual(yield* store.head(key), { size: 11, contentType: "application/json" })
          assert.strictEqual(new TextDecoder().decode(yield* store.get(key)), '{"key":"k"}')
          yield* store.delete(key)
          yield* missing(key)
        })
      )

      it.effect("read answers head's size and type with get's bytes, in one call", () =>
        Effect.gen(function* () {
          const store = yield* ObjectStore
          const key = keyFor("read.pdf")
          const content = new Uint8Array(randomBytes(20_000))
          yield* put(
            yield* store.presignPut({ key, contentType: "application/pdf", expiresIn: 3600 }),
            "application/pdf",
            content
          )
          const seen: Array<ObjectInfo> = []
          const read = yield* store.read(key, {
            maxBytes: content.byteLength,
            beforeContent: (info) => Effect.sync(() => void seen.push(info))
          })
          assert.deepStrictEqual(read.info, { size: content.byteLength, contentType: "application/pdf" })
          assert.deepStrictEqual(read.content, content)
          assert.deepStrictEqual(seen, [read.info], "beforeContent runs once, with the object's size and type")
          yield* store.delete(key)
        })
      )

      it.effect("read refuses an object over maxBytes, or one beforeContent refuses, with what it learnt", () =>
        Effect.gen(function* () {
          const store = yield* ObjectStore
          const key = keyFor("big.bin")
          yield* store.put(key, new Uint8Array(5000), "application/octet-stream")
          let called = false
          const tooLarge = yield* Effect.flip(
            store.read(key, {
              maxBytes: 4999,
              beforeContent: () =>
                Effect.sync(() => {
                  called = true
                })
            })
          )
          assert.strictEqual(tooLarge._tag, "ObjectTooLarge")
          assert.deepStrictEqual(tooLarge._tag === "ObjectTooLarge" ? [tooLarge.info, tooLarge.maxBytes] : [], [
            { size: 5000, contentType: "application/octet-stream" },
            4999
          ])
          assert.isFalse(called, "beforeContent ran for an object over maxBytes")
          const refused = yield* Effect.flip(store.read(key, { beforeContent: () => Effect.fail("no room" as const) }))
          assert.strictEqual(refused, "no room")
          // Nothing stays held: the object can still be read in full.
          assert.strictEqual((yield* store.read(key)).content.byteLength, 5000)
          yield* store.delete(key)
          const gone = yield* Effect.flip(store.read(key))
          assert.strictEqual(gone._tag, "ObjectNotFound")
        })
      )

      it.effect("a key that was never written is missing for head, get and delete", () => missing(keyFor("never.txt")))
    })
  })
}
