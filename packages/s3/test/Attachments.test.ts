// core's Attachments over S3ObjectStore on radosgw: two servers sharing one bucket never issue one key
// twice, even in the same millisecond; and what bounds an upload's size, and what cannot.
import { ListObjectsV2Command, S3Client } from "@aws-sdk/client-s3"
import { assert, it } from "@effect/vitest"
import { Attachments, ObjectStore } from "@mailroom/core"
import { Effect, Redacted } from "effect"
import { TestClock } from "effect/testing"
import { S3ObjectStore } from "../src/index.js"
import * as Radosgw from "./support/radosgw.js"

const principal = { orgId: "org_acme", slug: "acme" }
const perInstance = 100
const filename = "Relevé de compte.pdf"

it.effect(
  "two instances presigning one file name in one millisecond issue distinct keys, each upload lands under its own, and either instance downloads it by id",
  () =>
    Effect.gen(function* () {
      const peer = yield* Radosgw.start("mailroom-attachment-keys")
      // Each instance its own store, client and credentials, as two processes would have.
      const instance = () =>
        Effect.gen(function* () {
          const store = yield* S3ObjectStore.make({
            bucket: peer.bucket,
            region: peer.region,
            endpoint: peer.endpoint,
            forcePathStyle: true,
            accessKeyId: peer.credentials.accessKeyId,
            secretAccessKey: Redacted.make(peer.credentials.secretAccessKey)
          })
          return yield* Attachments.make({ idSecret: "shared by every instance" }).pipe(
            Effect.provideService(ObjectStore.ObjectStore, store)
          )
        })
      const instances = [yield* instance(), yield* instance()]
      const on = (n: number) => instances[n % 2] as Attachments.Attachments

      // The clock stands still: every key gets the same timestamp, so only its random bits tell them apart.
      yield* TestClock.setTime(Date.now())
      const presigned = yield* Effect.forEach(
        Array.from({ length: 2 * perInstance }, (_, i) => i),
        (i) =>
          on(i)
            .presign(principal, { filename, content_type: "application/pdf" })
            .pipe(Effect.map((answer) => ({ ...answer, by: i % 2, content: new TextEncoder().encode(`file ${i}`) }))),
        { concurrency: "unbounded" }
      )
      const timestamps = new Set(presigned.map(({ key }) => key.split("/")[2]?.split("_")[0]))
      assert.strictEqual(timestamps.size, 1, "the presigns were not all in one millisecond")
      assert.strictEqual(new Set(presigned.map(({ key }) => key)).size, presigned.length, "a key was issued twice")
      assert.strictEqual(new Set(presigned.map(({ attachment_id }) => attachment_id)).size, presigned.length)

      yield* Effect.forEach(
        presigned,
        ({ url, content }) =>
          Effect.promise(async () => {
            const put = await fetch(url, {
              method: "PUT",
              headers: { "content-type": "application/pdf" },
              body: content
            })
            assert.strictEqual(put.status, 200, await put.text())
          }),
        { concurrency: 16 }
      )

      // What the bucket holds, listed without the adapter: one object per presign, none overwritten.
      const listed = yield* Effect.acquireRelease(
        Effect.sync(
          () =>
            new S3Client({
              region: peer.region,
              endpoint: peer.endpoint,
              forcePathStyle: true,
              credentials: { ...peer.credentials }
            })
        ),
        (client) => Effect.sync(() => client.destroy())
      ).pipe(
        Effect.flatMap((client) =>
          Effect.promise(async () => {
            const keys: Array<string> = []
            let token: string | undefined
            do {
              const page = await client.send(
                new ListObjectsV2Command({
                  Bucket: peer.bucket,
                  Prefix: "attachments/org_acme/",
                  ContinuationToken: token
                })
              )
              for (const object of page.Contents ?? []) keys.push(object.Key ?? "")
              token = page.NextContinuationToken
            } while (token !== undefined)
            return keys
          })
        )
      )
      assert.sameMembers(
        listed,
        presigned.map(({ key }) => key)
      )

      // Each id, resolved by the instance that did not issue it, serves that upload's own bytes.
      yield* Effect.forEach(
        presigned,
        ({ attachment_id, by, content }) =>
          Effect.gen(function* () {
            const { download_url } = yield* on(by + 1).downloadById(principal, attachment_id)
            const downloaded = yield* Effect.promise(async () => {
              const response = await fetch(download_url)
              return {
                status: response.status,
                disposition: response.headers.get("content-disposition"),
                body: new Uint8Array(await response.arrayBuffer())
              }
            })
            assert.strictEqual(downloaded.status, 200)
            assert.deepStrictEqual(downloaded.body, content)
            assert.include(downloaded.disposition, "filename*=UTF-8''Relev%C3%A9%20de%20compte.pdf")
          }),
        { concurrency: 16 }
      )
    }),
  60_000
)

it.effect(
  "with requireContentLength every upload URL binds its exact size, which radosgw enforces; without a declared size nothing can",
  () =>
    Effect.gen(function* () {
      const peer = yield* Radosgw.start("mailroom-upload-sizes")
      // URLs are signed at the Clock's time: the real one, for radosgw to accept them.
      yield* TestClock.setTime(Date.now())
      const store = yield* S3ObjectStore.make({
        bucket: peer.bucket,
        region: peer.region,
        endpoint: peer.endpoint,
        forcePathStyle: true,
        accessKeyId: peer.credentials.accessKeyId,
        secretAccessKey: Redacted.make(peer.credentials.secretAccessKey)
      })
      const attachments = (config: Attachments.Config) =>
        Attachments.make(config).pipe(Effect.provideService(ObjectStore.ObjectStore, store))
      const put = (url: string, size: number) =>
        Effect.promise(async () => {
          const response = await fetch(url, {
            method: "PUT",
            headers: { "content-type": "application/pdf" },
            body: new Uint8Array(size)
          })
          await response.arrayBuffer()
          return response.status
        })

      const strict = yield* attachments({ requireContentLength: true, maxUploadBytes: 1000 })
      const refused = yield* Effect.flip(strict.presign(principal, { filename, content_type: "application/pdf" }))
      assert.strictEqual(refused._tag, "ValidationError")
      assert.deepStrictEqual((refused as { errors?: unknown }).errors, [
        "content_length: is required: upload URLs are issued for a declared size only"
      ])
      const bound = yield* strict.presign(principal, { filename, content_type: "application/pdf", content_length: 600 })
      assert.strictEqual(yield* put(bound.url, 601), 403)
      assert.strictEqual(yield* put(bound.url, 5_000), 403)
      assert.isFalse(yield* Effect.promise(() => peer.exists(bound.key)))
      assert.strictEqual(yield* put(bound.url, 600), 200)

      // S3's presigned PUT can sign an exact Content-Length, never a range: a URL issued without a
      // declared size takes any size (up to S3's own 5 GB), as the README says.
      const lenient = yield* attachments({ maxUploadBytes: 1000 })
      const open = yield* lenient.presign(principal, { filename, content_type: "application/pdf" })
      assert.strictEqual(yield* put(open.url, 50_000), 200)
    }),
  60_000
)
