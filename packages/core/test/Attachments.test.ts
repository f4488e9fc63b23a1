import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { Attachments, MailroomError, ObjectStore } from "../src/index.js"
import { acme, globex, makeWorld } from "./fixtures.js"

const upload = (store: ObjectStore.MemoryObjectStore, url: string, contentType: string, body: string) =>
  Effect.promise(() => store.fetch(url, { method: "PUT", headers: { "content-type": contentType }, body }))

// `s`: a name may keep a line separator (U+2028), which `.` alone does not match.
const keyPattern = /^attachments\/org_acme\/[0-9]+_[0-9a-f]{20}-(.+)$/s

const presignedName = (filename: string) =>
  Effect.gen(function* () {
    const attachments = yield* Attachments.Attachments
    const { key } = yield* attachments.presign(acme, { filename })
    const match = keyPattern.exec(key)
    assert.isNotNull(match, `key ${key} does not follow attachments/{org_id}/{timestamp}-{filename}`)
    return match?.[1] ?? ""
  })

describe("Attachments.presign", () => {
  it.effect(
    "with requireContentLength, refuses a presign that declares no size; the URL binds the declared one",
    () => {
      const world = makeWorld()
      return Effect.gen(function* () {
        const attachments = yield* Attachments.make({ requireContentLength: true }).pipe(
          Effect.provideService(ObjectStore.ObjectStore, world.store)
        )
        assert.isTrue(attachments.requiresContentLength)
        const refused = yield* Effect.flip(attachments.presign(acme, { filename: "a.pdf" }))
        assert.deepStrictEqual(
          refused,
          new MailroomError.ValidationError({
            errors: ["content_length: is required: upload URLs are issued for a declared size only"]
          })
        )
        const { url } = yield* attachments.presign(acme, { filename: "a.pdf", content_length: 3 })
        assert.strictEqual((yield* upload(world.store, url, "application/octet-stream", "abcd")).status, 403)
        assert.strictEqual((yield* upload(world.store, url, "application/octet-stream", "abc")).status, 200)
      })
    }
  )

  it.effect("answers a URL, a key in the org's layout, 3600 s and an att_ id", () => {
    const world = makeWorld()
    return Effect.gen(function* () {
      const attachments = yield* Attachments.Attachments
      const response = yield* attachments.presign(acme, { filename: "invoice.pdf", content_type: "application/pdf" })
      assert.match(response.key, /^attachments\/org_acme\/[0-9]+_[0-9a-f]{20}-invoice\.pdf$/)
      assert.strictEqual(response.expires_in, 3600)
      assert.match(response.attachment_id, /^att_[0-9a-f]{60,}$/)
      const put = yield* upload(world.store, response.url, "application/pdf", "%PDF-1.7")
      assert.strictEqual(put.status, 200)
      assert.deepStrictEqual(yield* world.store.head(response.key), { size: 8, contentType: "application/pdf" })
    }).pipe(Effect.provide(world.layer))
  })

  it.effect("binds the content type, application/octet-stream by default", () => {
    const world = makeWorld()
    return Effect.gen(function* () {
      const attachments = yield* Attachments.Attachments
      const typed = yield* attachments.presign(acme, { filename: "a.pdf", content_type: "application/pdf" })
      assert.strictEqual((yield* upload(world.store, typed.url, "text/html", "<script>")).status, 403)
      assert.strictEqual((yield* Effect.flip(world.store.head(typed.key)))._tag, "ObjectNotFound")
      const untyped = yield* attachments.presign(acme, { filename: "blob" })
      assert.strictEqual((yield* upload(world.store, untyped.url, "application/pdf", "x")).status, 403)
      assert.strictEqual((yield* upload(world.store, untyped.url, "application/octet-stream", "x")).status, 200)
    }).pipe(Effect.provide(world.layer))
  })

  it.effect("binds a declared content_length exactly, up to the configured maximum", () => {
    const world = makeWorld({ attachments: { maxUploadBytes: 10 } })
    return Effect.gen(function* () {
      const attachments = yield* Attachments.Attachments
      const exact = yield* attachments.presign(acme, {
        filename: "a.txt",
        content_type: "text/plain",
        content_length: 5
      })
      assert.strictEqual((yield* upload(world.store, exact.url, "text/plain", "123456")).status, 403)
      assert.strictEqual((yield* upload(world.store, exact.url, "text/plain", "12345")).status, 200)
      const tooBig = yield* Effect.flip(attachments.presign(acme, { filename: "a.txt", content_length: 11 }))
      assert.strictEqual(tooBig._tag, "ValidationError")
      assert.deepStrictEqual(tooBig._tag === "ValidationError" && tooBig.errors, [
        "content_length: must be at most 10 bytes"
      ])
    }).pipe(Effect.provide(world.layer))
  })

  it.effect("refuses an org_id that is not the caller's with Forbidden; accepts its own", () => {
    const world = makeWorld()
    return Effect.gen(function* () {
      const attachments = yield* Attachments.Attachments
      const error = yield* Effect.flip(attachments.presign(acme, { filename: "a.txt", org_id: "org_globex" }))
      assert.strictEqual(error._tag, "Forbidden")
      const own = yield* attachments.presign(acme, { filename: "a.txt", org_id: "org_acme" })
      assert.match(own.key, /^attachments\/org_acme\//)
    }).pipe(Effect.provide(world.layer))
  })

  it.effect("refuses an empty filename and a bad content type with validation messages", () =>
    Effect.gen(function* () {
      const attachments = yield* Attachments.Attachments
      const error = yield* Effect.flip(attachments.presign(acme, { filename: "  ", content_type: "pdf" }))
      assert.strictEqual(error._tag, "ValidationError")
      if (error._tag === "ValidationError") {
        assert.deepStrictEqual(error.errors, [
          "filename: must not be empty",
          "content_type: must be a MIME type such as application/pdf"
        ])
      }
    }).pipe(Effect.provide(makeWorld().layer))
  )

  describe("file names in keys", () => {
    it.effect("a path is reduced to one segment that cannot climb out of the prefix", () =>
      Effect.gen(function* () {
        assert.strictEqual(yield* presignedName("../../etc/passwd"), "etc_passwd")
        assert.strictEqual(yield* presignedName("..\\..\\windows\\system.ini"), "windows_system.ini")
        assert.strictEqual(yield* presignedName("/abs/path.txt"), "abs_path.txt")
        assert.strictEqual(yield* presignedName(".."), "file")
        assert.strictEqual(yield* presignedName(".hidden"), "hidden")
        assert.strictEqual(yield* presignedName("a..b....pdf"), "a.b.pdf")
      }).pipe(Effect.provide(makeWorld().layer))
    )

    it.effect("control characters, bidi overrides and direction marks are removed; unicode is NFC", () =>
      Effect.gen(function* () {
        assert.strictEqual(yield* presignedName("re\u0000port\u001f\u007f.pdf"), "report.pdf")
        assert.strictEqual(yield* presignedName("invoice\u202Efdp.exe"), "invoicefdp.exe")
        // Browsers save each direction mark as _, so a mark after the extension (RTL editors add them)
        // would download as `report.pdf_`, a file its application no longer opens.
        assert.strictEqual(yield* presignedName("report.pdf\u200F"), "report.pdf")
        assert.strictEqual(yield* presignedName("\u200Fשלום\u200E.docx"), "שלום.docx")
        assert.strictEqual(yield* presignedName("تقرير\u061C.pdf"), "تقرير.pdf")
        assert.strictEqual(yield* presignedName("half\ud800.pdf"), "half.pdf")
        assert.strictEqual(yield* presignedName("Rele\u0301ve\u0301.pdf"), "Rel\u00e9v\u00e9.pdf")
        assert.strictEqual(yield* presignedName('a<b>c:d"e|f?g*.txt'), "a_b_c_d_e_f_g_.txt")
      }).pipe(Effect.provide(makeWorld().layer))
    )

    // Clean names are answered by one scan (issue 33): each of these is one rule away from clean.
    it.effect("a name one rule away from clean is still cleaned: ends, separators of a line, length", () =>
      Effect.gen(function* () {
        assert.strictEqual(yield* presignedName("report.pdf "), "report.pdf")
        assert.strictEqual(yield* presignedName(" report.pdf"), "report.pdf")
        assert.strictEqual(yield* presignedName("notes.txt\ufeff"), "notes.txt")
        assert.strictEqual(yield* presignedName("notes.\u2028"), "notes")
        assert.strictEqual(yield* presignedName("report\u2028..pdf"), "report\u2028.pdf")
        assert.strictEqual(yield* presignedName("€".repeat(66)), "€".repeat(66))
        assert.strictEqual(yield* presignedName("€".repeat(67)), "€".repeat(66))
      }).pipe(Effect.provide(makeWorld().layer))
    )

    it.effect("emoji and spaces are kept", () =>
      Effect.gen(function* () {
        assert.strictEqual(yield* presignedName("rapport final 📎👩‍💻.pdf"), "rapport final 📎👩‍💻.pdf")
      }).pipe(Effect.provide(makeWorld().layer))
    )

    it.effect("a 500-character name is cut to 200 bytes, keeping its extension and whole characters", () =>
      Effect.gen(function* () {
        const ascii = yield* presignedName(`${"a".repeat(496)}.pdf`)
        assert.strictEqual(ascii, `${"a".repeat(196)}.pdf`)
        const emoji = yield* presignedName(`${"👩‍💻".repeat(100)}.pdf`)
        assert.isAtMost(new TextEncoder().encode(emoji).byteLength, 200)
        assert.match(emoji, /^(👩‍💻)+\.pdf$/u, "a grapheme was split")
        const accented = yield* presignedName(`${"é".repeat(500)}`)
        assert.strictEqual(accented, "é".repeat(100))
      }).pipe(Effect.provide(makeWorld().layer))
    )
  })

  it.effect("100 concurrent presigns of one file name give 100 keys and 100 ids", () =>
    Effect.gen(function* () {
      const attachments = yield* Attachments.Attachments
      const responses = yield* Effect.forEach(
        Array.from({ length: 100 }),
        () => attachments.presign(acme, { filename: "same.pdf" }),
        { concurrency: "unbounded" }
      )
      assert.strictEqual(new Set(responses.map((r) => r.key)).size, 100)
      assert.strictEqual(new Set(responses.map((r) => r.attachment_id)).size, 100)
    }).pipe(Effect.provide(makeWorld().layer))
  )

  it.effect("instances that share a store never issue one key twice, even at one instant", () => {
    // Each instance stands for a restart or another server: with the test clock frozen, every
    // presign of one file name happens in the same millisecond.
    const world = makeWorld()
    return Effect.gen(function* () {
      const instances = yield* Effect.forEach([1, 2, 3, 4], () => Attachments.make())
      const responses = yield* Effect.forEach(
        Array.from({ length: 4000 }, (_, i) => instances[i % 4] as Attachments.Attachments),
        (attachments) => attachments.presign(acme, { filename: "same.pdf" }),
        { concurrency: "unbounded" }
      )
      assert.strictEqual(new Set(responses.map((r) => r.key)).size, 4000)
      assert.strictEqual(new Set(responses.map((r) => r.attachment_id)).size, 4000)
    }).pipe(Effect.provide(world.layer))
  })

  it.effect("presign writes nothing to the store: an abandoned upload leaves no object behind", () => {
    const world = makeWorld()
    return Effect.gen(function* () {
      const attachments = yield* Attachments.Attachments
      yield* attachments.presign(acme, { filename: "abandoned.pdf" })
      assert.deepStrictEqual(world.store.keys(), [])
    }).pipe(Effect.provide(world.layer))
  })

  it.effect("an id resolves only to its own key: another id's bits, organisation or secret are NotFound", () => {
    const world = makeWorld({ attachments: { idSecret: "s3cret" } })
    return Effect.gen(function* () {
      const attachments = yield* Attachments.Attachments
      const { key, attachment_id, url } = yield* attachments.presign(acme, { filename: "a.pdf" })
      assert.strictEqual((yield* upload(world.store, url, "application/octet-stream", "A")).status, 200)
      const other = yield* attachments.presign(acme, { filename: "b.pdf" })
      assert.strictEqual((yield* upload(world.store, other.url, "application/octet-stream", "B")).status, 200)
      const served = yield* Effect.promise(() =>
        Effect.runPromise(attachments.downloadById(acme, attachment_id)).then((r) => world.store.fetch(r.download_url))
      )
      assert.strictEqual(yield* Effect.promise(() => served.text()), "A")
      // Every single-character change of the id is refused, the tag included.
      const hex = attachment_id.slice(4)
      for (let i = 0; i < hex.length; i++) {
        const flipped = `att_${hex.slice(0, i)}${hex[i] === "0" ? "1" : "0"}${hex.slice(i + 1)}`
        assert.strictEqual((yield* Effect.flip(attachments.downloadById(acme, flipped)))._tag, "NotFound", flipped)
      }
      // The same key under another secret or for another organisation is not this id.
      const elsewhere = yield* Attachments.make({ idSecret: "other" })
      assert.strictEqual((yield* Effect.flip(elsewhere.downloadById(acme, attachment_id)))._tag, "NotFound")
      assert.strictEqual((yield* Effect.flip(attachments.deleteById(globex, attachment_id)))._tag, "NotFound")
      assert.strictEqual(new TextDecoder().decode(yield* world.store.get(key)), "A")
    }).pipe(Effect.provide(world.layer))
  })

  it.effect("ids issued by an earlier version, found through their index object, still resolve", () => {
    const world = makeWorld()
    return Effect.gen(function* () {
      const attachments = yield* Attachments.Attachments
      const key = "attachments/org_acme/1700000000000-old.pdf"
      const id = `att_${"ab".repeat(16)}`
      yield* world.store.put(key, new TextEncoder().encode("old"), "application/pdf")
      yield* world.store.put(
        `attachments/org_acme/.ids/${id}.json`,
        new TextEncoder().encode(JSON.stringify({ key })),
        "application/json"
      )
      const { download_url } = yield* attachments.downloadById(acme, id)
      assert.strictEqual(yield* Effect.promise(() => world.store.fetch(download_url).then((r) => r.text())), "old")
      assert.deepStrictEqual(yield* attachments.deleteById(acme, id), { deleted: true, attachment_id: id })
      assert.deepStrictEqual(world.store.keys(), [])
    }).pipe(Effect.provide(world.layer))
  })
})

describe("Attachments download and delete", () => {
  const uploaded = (world: ReturnType<typeof makeWorld>, principal = acme, filename = "Relevé août.pdf") =>
    Effect.gen(function* () {
      const attachments = yield* Attachments.Attachments
      const presigned = yield* attachments.presign(principal, { filename, content_type: "application/pdf" })
      assert.strictEqual((yield* upload(world.store, presigned.url, "application/pdf", "%PDF-bytes")).status, 200)
      return presigned
    })

  it.effect("download by key and by id give a URL that serves the bytes under the file name", () => {
    const world = makeWorld()
    return Effect.gen(function* () {
      const attachments = yield* Attachments.Attachments
      const { key, attachment_id } = yield* uploaded(world)
      for (const response of [
        yield* attachments.download(acme, key),
        yield* attachments.downloadById(acme, attachment_id)
      ]) {
        assert.strictEqual(response.expires_in, 3600)
        const got = yield* Effect.promise(() => world.store.fetch(response.download_url))
        assert.strictEqual(yield* Effect.promise(() => got.text()), "%PDF-bytes")
        assert.include(got.headers.get("content-disposition") ?? "", "filename*=UTF-8''Relev%C3%A9%20ao%C3%BBt.pdf")
      }
    }).pipe(Effect.provide(world.layer))
  })

  it.effect("a key or id of another organisation is NotFound on download and delete, and stays stored", () => {
    const world = makeWorld()
    return Effect.gen(function* () {
      const attachments = yield* Attachments.Attachments
      const theirs = yield* uploaded(world, globex)
      const attempts = [
        attachments.download(acme, theirs.key),
        attachments.downloadById(acme, theirs.attachment_id),
        attachments.delete(acme, theirs.key),
        attachments.deleteById(acme, theirs.attachment_id)
      ]
      for (const attempt of attempts) {
        assert.strictEqual((yield* Effect.flip(attempt as Effect.Effect<unknown, { _tag: string }>))._tag, "NotFound")
      }
      assert.strictEqual(new TextDecoder().decode(yield* world.store.get(theirs.key)), "%PDF-bytes")
      assert.strictEqual((yield* attachments.downloadById(globex, theirs.attachment_id)).expires_in, 3600)
    }).pipe(Effect.provide(world.layer))
  })

  it.effect("keys outside the layout are NotFound: the index, traversal, other prefixes", () => {
    const world = makeWorld()
    return Effect.gen(function* () {
      const attachments = yield* Attachments.Attachments
      const { attachment_id } = yield* uploaded(world)
      for (const key of [
        `attachments/org_acme/.ids/${attachment_id}.json`,
        "attachments/org_acme/../org_globex/1-a.pdf",
        "attachments/org_acme/1-a/../../org_globex/1-a.pdf",
        "attachments/org_acmex/1-a.pdf",
        "other/org_acme/1-a.pdf",
        "attachments/org_acme/",
        ""
      ]) {
        assert.strictEqual((yield* Effect.flip(attachments.download(acme, key)))._tag, "NotFound", key)
        assert.strictEqual((yield* Effect.flip(attachments.delete(acme, key)))._tag, "NotFound", key)
      }
      for (const id of ["att_", "att_XYZ", "nope", `${attachment_id}/../x`]) {
        assert.strictEqual((yield* Effect.flip(attachments.downloadById(acme, id)))._tag, "NotFound", id)
      }
    }).pipe(Effect.provide(world.layer))
  })

  it.effect("a key presigned but never uploaded is NotFound on download", () =>
    Effect.gen(function* () {
      const attachments = yield* Attachments.Attachments
      const { key, attachment_id } = yield* attachments.presign(acme, { filename: "never.pdf" })
      assert.strictEqual((yield* Effect.flip(attachments.download(acme, key)))._tag, "NotFound")
      assert.strictEqual((yield* Effect.flip(attachments.downloadById(acme, attachment_id)))._tag, "NotFound")
    }).pipe(Effect.provide(makeWorld().layer))
  )

  it.effect("delete by key removes the file; a second delete is NotFound", () => {
    const world = makeWorld()
    return Effect.gen(function* () {
      const attachments = yield* Attachments.Attachments
      const { key } = yield* uploaded(world)
      assert.deepStrictEqual(yield* attachments.delete(acme, key), { deleted: true, key })
      assert.strictEqual((yield* Effect.flip(world.store.head(key)))._tag, "ObjectNotFound")
      assert.strictEqual((yield* Effect.flip(attachments.delete(acme, key)))._tag, "NotFound")
      assert.strictEqual((yield* Effect.flip(attachments.download(acme, key)))._tag, "NotFound")
    }).pipe(Effect.provide(world.layer))
  })

  it.effect("delete by id or by key leaves nothing of the attachment in the store", () => {
    const world = makeWorld()
    return Effect.gen(function* () {
      const attachments = yield* Attachments.Attachments
      const { key, attachment_id } = yield* uploaded(world)
      const byKey = yield* uploaded(world)
      assert.deepStrictEqual(yield* attachments.deleteById(acme, attachment_id), { deleted: true, attachment_id })
      assert.strictEqual((yield* Effect.flip(world.store.head(key)))._tag, "ObjectNotFound")
      yield* attachments.delete(acme, byKey.key)
      assert.deepStrictEqual(world.store.keys(), [])
      assert.strictEqual((yield* Effect.flip(attachments.deleteById(acme, attachment_id)))._tag, "NotFound")
    }).pipe(Effect.provide(world.layer))
  })

  it.effect("delete by id after a store failure keeps the id, so it can be deleted again", () => {
    const world = makeWorld()
    let failing = true
    const flaky: ObjectStore.ObjectStore = {
      ...world.store,
      delete: (key) =>
        failing && !key.includes("/.ids/")
          ? Effect.fail(
              new ObjectStore.ObjectStoreError({
                store: "memory",
                reason: new ObjectStore.Unavailable({ message: "unreachable" })
              })
            )
          : world.store.delete(key)
    }
    return Effect.gen(function* () {
      const { key, attachment_id } = yield* uploaded(world)
      const attachments = yield* Attachments.make().pipe(Effect.provideService(ObjectStore.ObjectStore, flaky))
      assert.strictEqual((yield* Effect.flip(attachments.deleteById(acme, attachment_id)))._tag, "ObjectStoreError")
      failing = false
      assert.deepStrictEqual(yield* attachments.deleteById(acme, attachment_id), { deleted: true, attachment_id })
      assert.strictEqual((yield* Effect.flip(world.store.head(key)))._tag, "ObjectNotFound")
    }).pipe(Effect.provide(world.layer))
  })
})
