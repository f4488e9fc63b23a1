import { execFile } from "node:child_process"
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises"
import type { Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { promisify } from "node:util"
import { it as effectIt } from "@effect/vitest"
import { createAdaptorServer } from "@hono/node-server"
import { ObjectStore, StoreRoutes } from "@mailroom/core"
import * as Adapter from "@mailroom/core/adapter"
import { expectConfigError, ObjectStoreSuite } from "@mailroom/core/testing"
import { Clock, Config, ConfigProvider, Effect, Layer, Redacted } from "effect"
import { TestClock } from "effect/testing"
import { afterAll, afterEach, assert, beforeAll, describe, it } from "vitest"
import { DiskObjectStore } from "../src/index.js"
import * as Signing from "../src/internal/signing.js"

const MiB = 1024 * 1024
const execFileAsync = promisify(execFile)

interface Served {
  readonly base: string
  readonly dir: string
  readonly origin: string
  readonly store: DiskObjectStore.DiskObjectStore
  readonly close: () => Promise<void>
}

/** A store in a fresh temporary directory, served over real HTTP on 127.0.0.1, on `clock` if given. */
const serve = async (options: Partial<DiskObjectStore.Options> = {}, clock?: Clock.Clock): Promise<Served> => {
  const base = await mkdtemp(path.join(tmpdir(), "mailroom-disk-"))
  const dir = path.join(base, "store")
  let handle = (_: Request): Promise<Response> => Promise.resolve(new Response(null, { status: 503 }))
  const server = createAdaptorServer({ fetch: (request: Request) => handle(request) }) as Server
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const make = DiskObjectStore.make({
    dir,
    publicUrl: origin,
    signingSecret: Redacted.make("test-signing-secret"),
    ...options
  })
  const store = await Effect.runPromise(clock === undefined ? make : Effect.provideService(make, Clock.Clock, clock))
  handle = store.routes.handle
  return {
    base,
    dir,
    origin,
    store,
    close: async () => {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
      await rm(base, { recursive: true, force: true })
    }
  }
}

const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect)
const failureOf = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(Effect.flip(effect))
const bytes = (text: string) => new TextEncoder().encode(text)

/** Every file under `dir`, relative, or [] when it does not exist. */
const filesUnder = async (dir: string): Promise<Array<string>> => {
  try {
    const entries = await readdir(dir, { recursive: true, withFileTypes: true })
    return entries
      .filter((e) => e.isFile())
      .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
      .sort()
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return []
    throw error
  }
}

/** The temporary base holds the store's directory (once something was written) and nothing else. */
const assertOnlyStoreIn = (entries: ReadonlyArray<string>) =>
  assert.deepStrictEqual(
    entries.filter((e) => e !== "store"),
    [],
    "something was written beside the store"
  )

const assertNothingStored = async (served: Served) => {
  assert.deepStrictEqual(await filesUnder(path.join(served.dir, "objects")), [], "objects/ is not empty")
  assert.deepStrictEqual(await filesUnder(path.join(served.dir, ".tmp")), [], ".tmp/ is not empty")
}

/** Waits until `.tmp` is empty: a refused upload's temporary file is removed once the request ends. */
const tmpEmptied = async (served: Served) => {
  for (let i = 0; i < 100; i++) {
    if ((await filesUnder(path.join(served.dir, ".tmp"))).length === 0) return
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

const put = (url: string, contentType: string, body: BodyInit, init: RequestInit = {}) =>
  fetch(url, { method: "PUT", headers: { "content-type": contentType }, body, ...init })

const refusal = async (response: Response, status: number) => {
  assert.strictEqual(response.status, status)
  assert.match(response.headers.get("content-type") ?? "", /^application\/json/)
  const body = (await response.json()) as { message?: unknown }
  assert.isString(body.message)
  assert.isAbove((body.message as string).length, 0)
  return body.message as string
}

// --- the conformance suite, over real HTTP -------------------------------------------------------

let suiteServer: Served | undefined
ObjectStoreSuite("DiskObjectStore over HTTP", {
  layer: Layer.effect(
    ObjectStore.ObjectStore,
    Effect.acquireRelease(
      Effect.promise(async () => {
        suiteServer = await serve()
        return suiteServer.store
      }),
      () => Effect.promise(() => suiteServer?.close() ?? Promise.resolve())
    )
  )
})

// --- vendor-specific cases ------------------------------------------------------------------------

describe("DiskObjectStore", () => {
  let served: Served
  let n = 0
  const keyFor = (filename: string) => `attachments/org_test/${Date.now()}${n++}-${filename}`

  beforeAll(async () => {
    served = await serve({ maxUploadBytes: MiB })
  })
  afterAll(() => served.close())
  // A failed case must not leave objects behind for the next one's "nothing stored" checks.
  afterEach(async () => {
    await rm(path.join(served.dir, "objects"), { recursive: true, force: true })
    await rm(path.join(served.dir, ".tmp"), { recursive: true, force: true })
  })

  describe("keys never leave the directory", () => {
    const invalidKeys: ReadonlyArray<readonly [string, string]> = [
      ["empty", ""],
      ["dot-dot", ".."],
      ["dot", "."],
      ["parent escape", "../escape.txt"],
      ["nested escape", "a/../../escape.txt"],
      ["absolute path", "/etc/passwd"],
      ["trailing slash", "attachments/"],
      ["doubled slash", "a//b"],
      ["dot segment", "a/./b"],
      ["NUL byte", "attachments/x\u0000.txt"],
      ["newline", "attachments/x\n.txt"],
      ["backslash", "a\\..\\..\\escape.txt"],
      ["lone surrogate", "attachments/\ud800.txt"],
      ["segment over 255 bytes", `attachments/${"a".repeat(256)}`],
      ["segment over 255 bytes in UTF-8", `attachments/${"é".repeat(128)}`],
      ["key over 1024 bytes", `${"abcdefgh/".repeat(114)}x`]
    ]

    it.each(invalidKeys)("%s: refused by presign and put, missing for head, get and delete", async (_, key) => {
      const { store } = served
      for (const operation of [
        store.presignPut({ key, contentType: "text/plain", expiresIn: 60 }),
        store.presignGet({ key, expiresIn: 60 }),
        store.put(key, bytes("x"), "text/plain")
      ]) {
        const error = await failureOf(operation as Effect.Effect<unknown, ObjectStore.ObjectStoreError>)
        assert.strictEqual(error._tag, "ObjectStoreError")
        assert.strictEqual(error.reason._tag, "Unknown")
        assert.match(error.message, /key/)
      }
      for (const operation of [store.head(key), store.get(key), store.delete(key)]) {
        const error = await failureOf(operation as Effect.Effect<unknown, { readonly _tag: string }>)
        assert.strictEqual(error._tag, "ObjectNotFound")
      }
      // Nothing was written anywhere: not in the store, not beside it.
      assertOnlyStoreIn(await readdir(served.base))
      await assertNothingStored(served)
    })

    it("keys at the limits are accepted: a 255-byte segment, a 1024-byte key", async () => {
      const { store } = served
      const longSegment = `attachments/${"é".repeat(127)}a`
      const longKey = `${"abcdefgh/".repeat(114).slice(0, 1023)}z`
      assert.strictEqual(Buffer.byteLength(longKey), 1024)
      for (const key of [longSegment, longKey]) {
        await run(store.put(key, bytes(key), "text/plain"))
        assert.strictEqual(new TextDecoder().decode(await run(store.get(key))), key)
        const url = await run(store.presignGet({ key, expiresIn: 60 }))
        assert.strictEqual(await (await fetch(url)).text(), key)
        await run(store.delete(key))
      }
      await assertNothingStored(served)
    })

    it("a URL signed for a key that would escape is still refused (defence in depth)", async () => {
      // Signed with the store's own secret: only the key rules stand between this URL and the disk.
      const expires = String(Math.floor(Date.now() / 1000) + 60)
      for (const key of ["../../escape.txt", "../escape.txt", "a/../../escape.txt"]) {
        const grant: Signing.Grant = { method: "PUT", key, expires, contentType: "text/plain" }
        const url = new URL(`${served.origin}/_mailroom/storage/${encodeURIComponent(key)}`)
        url.searchParams.set("content-type", "text/plain")
        url.searchParams.set("expires", expires)
        url.searchParams.set("signature", Signing.sign(Signing.keyOf("test-signing-secret"), grant))
        await refusal(await put(url.toString(), "text/plain", "escaped"), 403)
      }
      assertOnlyStoreIn(await readdir(served.base))
      await assertNothingStored(served)
    })
  })

  describe("signed uploads", () => {
    const presign = (key: string, extra: Partial<ObjectStore.PresignPutOptions> = {}) =>
      run(served.store.presignPut({ key, contentType: "application/pdf", expiresIn: 3600, ...extra }))

    it("the URL has the documented shape", async () => {
      const key = "attachments/org_test/1-Relevé été.pdf"
      const url = new URL(await presign(key, { contentLength: 4 }))
      assert.strictEqual(url.origin, served.origin)
      assert.strictEqual(url.pathname, "/_mailroom/storage/attachments/org_test/1-Relev%C3%A9%20%C3%A9t%C3%A9.pdf")
      assert.strictEqual(url.searchParams.get("content-type"), "application/pdf")
      assert.strictEqual(url.searchParams.get("content-length"), "4")
      const expires = Number(url.searchParams.get("expires"))
      assert.approximately(expires, Math.floor(Date.now() / 1000) + 3600, 2)
      assert.match(url.searchParams.get("signature") ?? "", /^[0-9a-f]{64}$/)
    })

    it("a key with URL characters in it (?, #, %, +, &, a space) is uploaded and read back through its URLs", async () => {
      const key = "attachments/org_test/1-a?b#c%41+d&e=f é.pdf"
      const url = await presign(key, { contentType: "text/plain" })
      assert.strictEqual(decodeURIComponent(new URL(url).pathname), `/_mailroom/storage/${key}`)
      assert.strictEqual((await put(url, "text/plain", "the bytes")).status, 200)
      assert.strictEqual(new TextDecoder().decode(await run(served.store.get(key))), "the bytes")
      const download = await run(served.store.presignGet({ key, expiresIn: 60, filename: "a?b #1.pdf" }))
      assert.strictEqual(await (await fetch(download)).text(), "the bytes")
      await run(served.store.delete(key))
      await assertNothingStored(served)
    })

    it("a tampered signature is refused and writes nothing", async () => {
      const url = new URL(await presign(keyFor("a.pdf")))
      const signature = url.searchParams.get("signature") ?? ""
      url.searchParams.set("signature", `${signature[0] === "0" ? "1" : "0"}${signature.slice(1)}`)
      await refusal(await put(url.toString(), "application/pdf", "%PDF"), 403)
      await assertNothingStored(served)
    })

    it("a tampered expiry or content type is refused and writes nothing", async () => {
      const url = new URL(await presign(keyFor("a.pdf")))
      const later = new URL(url)
      later.searchParams.set("expires", String(Number(url.searchParams.get("expires")) + 86_400))
      await refusal(await put(later.toString(), "application/pdf", "%PDF"), 403)
      const html = new URL(url)
      html.searchParams.set("content-type", "text/html")
      await refusal(await put(html.toString(), "text/html", "<script></script>"), 403)
      await assertNothingStored(served)
    })

    it("another Content-Type than signed is refused and writes nothing", async () => {
      const url = await presign(keyFor("a.pdf"))
      const message = await refusal(await put(url, "text/html", "<script>alert(1)</script>"), 403)
      assert.match(message, /Content-Type/)
      await refusal(await fetch(url, { method: "PUT", body: "%PDF" }), 403)
      await assertNothingStored(served)
    })

    it("another key than signed (the same query string on another path) is refused", async () => {
      const signed = new URL(await presign(keyFor("mine.pdf")))
      const other = new URL(`/_mailroom/storage/attachments/org_other/1-theirs.pdf${signed.search}`, served.origin)
      await refusal(await put(other.toString(), "application/pdf", "%PDF"), 403)
      await assertNothingStored(served)
    })

    it("another method than signed is refused: a PUT URL does not read, a GET URL does not write", async () => {
      const key = keyFor("a.pdf")
      await run(served.store.put(key, bytes("original"), "application/pdf"))
      const putUrl = await presign(key)
      await refusal(await fetch(putUrl), 403)
      const getUrl = await run(served.store.presignGet({ key, expiresIn: 60 }))
      await refusal(await put(getUrl, "application/pdf", "overwritten"), 403)
      assert.strictEqual(new TextDecoder().decode(await run(served.store.get(key))), "original")
      await run(served.store.delete(key))
      await assertNothingStored(served)
    })

    it("methods other than GET and PUT are 405 with a JSON body", async () => {
      const url = await presign(keyFor("a.pdf"))
      for (const method of ["POST", "DELETE", "PATCH"]) {
        const response = await fetch(url, { method, body: method === "DELETE" ? null : "x" })
        await refusal(response, 405)
        assert.strictEqual(response.headers.get("allow"), "GET, PUT")
      }
      await assertNothingStored(served)
    })

    it("a body longer than the signed Content-Length is refused and writes nothing", async () => {
      const url = await presign(keyFor("exact.bin"), { contentType: "application/octet-stream", contentLength: 10 })
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(bytes("0123456789"))
          controller.enqueue(bytes("overflow"))
          controller.close()
        }
      })
      const response = await put(url, "application/octet-stream", stream, { duplex: "half" } as RequestInit)
      await refusal(response, 403)
      await tmpEmptied(served)
      await assertNothingStored(served)
    })

    it("the size limit: exactly maxUploadBytes is stored, one byte more is 413", async () => {
      const key = keyFor("limit.bin")
      const url = await presign(key, { contentType: "application/octet-stream" })
      const exact = new Uint8Array(MiB).fill(7)
      const accepted = await put(url, "application/octet-stream", exact)
      assert.strictEqual(accepted.status, 200)
      assert.deepStrictEqual((await run(served.store.head(key))).size, MiB)
      await run(served.store.delete(key))
      await refusal(await put(url, "application/octet-stream", new Uint8Array(MiB + 1)), 413)
      await assertNothingStored(served)
    })

    it("an endless body is refused with 413 while streaming, and nothing stays on disk", async () => {
      const url = await presign(keyFor("endless.bin"), { contentType: "application/octet-stream" })
      const chunk = new Uint8Array(64 * 1024).fill(1)
      const bound = 200 * MiB
      let produced = 0
      const endless = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (produced >= bound) return controller.close()
          produced += chunk.byteLength
          controller.enqueue(chunk)
        }
      })
      const response = await put(url, "application/octet-stream", endless, { duplex: "half" } as RequestInit)
      const answeredAfter = produced
      await refusal(response, 413)
      // The answer came long before the client could finish: the server stopped reading at the limit.
      assert.isBelow(answeredAfter, 100 * MiB)
      await tmpEmptied(served)
      await assertNothingStored(served)
    })

    it("a Content-Length over the limit is refused before reading the body", async () => {
      const url = await presign(keyFor("big.bin"), { contentType: "application/octet-stream" })
      await refusal(await put(url, "application/octet-stream", new Uint8Array(2 * MiB)), 413)
      await assertNothingStored(served)
    })

    it("a half-finished upload never appears, and an interrupted one leaves nothing", async () => {
      const key = keyFor("slow.pdf")
      const url = await presign(key)
      let controller!: ReadableStreamDefaultController<Uint8Array>
      const body = new ReadableStream<Uint8Array>({
        start(c) {
          controller = c
        }
      })
      const abort = new AbortController()
      const response = put(url, "application/pdf", body, { duplex: "half", signal: abort.signal } as RequestInit)
      controller.enqueue(new Uint8Array(200_000).fill(3))
      // The upload is under way: its bytes are in .tmp, not under the key.
      for (let i = 0; i < 100 && (await filesUnder(path.join(served.dir, ".tmp"))).length === 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
      assert.strictEqual((await filesUnder(path.join(served.dir, ".tmp"))).length, 1)
      assert.strictEqual((await failureOf(served.store.head(key)))._tag, "ObjectNotFound")
      abort.abort()
      await response.catch(() => undefined)
      await tmpEmptied(served)
      await assertNothingStored(served)
      assert.strictEqual((await failureOf(served.store.head(key)))._tag, "ObjectNotFound")
    })
  })

  describe("transfers that stall, and the bound on open files", () => {
    let quick: Served
    beforeAll(async () => {
      quick = await serve({ transferIdleTimeout: "300 millis", maxOpenFiles: 2 })
    })
    afterAll(() => quick.close())

    const presignOn = (store: DiskObjectStore.DiskObjectStore, key: string, method: "PUT" | "GET") =>
      run(
        method === "PUT"
          ? store.presignPut({ key, contentType: "application/octet-stream", expiresIn: 60 })
          : store.presignGet({ key, expiresIn: 60 })
      )

    it("an upload that stops sending is cut off with 408 after the idle timeout, and nothing is stored", async () => {
      const key = keyFor("stalled.bin")
      const url = await presignOn(quick.store, key, "PUT")
      const body = new ReadableStream<Uint8Array>({
        start: (controller) => controller.enqueue(new Uint8Array(1000).fill(7))
      })
      const response = await put(url, "application/octet-stream", body, { duplex: "half" } as RequestInit)
      assert.match(await refusal(response, 408), /sent nothing for 300 ms/)
      await tmpEmptied(quick)
      assert.strictEqual((await failureOf(quick.store.head(key)))._tag, "ObjectNotFound")
    })

    it("a download nobody reads lets go of its file after the idle timeout; past maxOpenFiles it is 503", async () => {
      const key = keyFor("big.bin")
      await run(quick.store.put(key, new Uint8Array(4 * MiB).fill(1), "application/octet-stream"))
      const url = await presignOn(quick.store, key, "GET")
      // Each handler's answer is taken and never read, as a stalled client leaves it.
      const held = [
        await quick.store.routes.handle(new Request(url)),
        await quick.store.routes.handle(new Request(url))
      ]
      assert.deepStrictEqual(
        held.map((r) => r.status),
        [200, 200]
      )
      const third = await quick.store.routes.handle(new Request(url))
      assert.strictEqual(third.status, 503)
      assert.strictEqual(third.headers.get("retry-after"), "1")
      assert.match(await refusal(third, 503), /2 transfers under way, its limit/)
      // Idle: both streams error and their files close, so the next download is served.
      const readers = held.map((response) => (response.body as ReadableStream<Uint8Array>).getReader())
      await Promise.all(readers.map((reader) => reader.read()))
      // Not read again: each stream errors on its own once idle (no wait of a guessed length).
      for (const reader of readers) {
        const error = await reader.closed.then(
          () => undefined,
          (e: unknown) => e
        )
        assert.match(String(error), /idle for 300 ms/)
      }
      const after = await fetch(url)
      assert.strictEqual(after.status, 200)
      assert.strictEqual((await after.arrayBuffer()).byteLength, 4 * MiB)
    })

    it("a download read to its end, or cancelled, frees its slot at once", async () => {
      const key = keyFor("small.txt")
      await run(quick.store.put(key, bytes("hello"), "text/plain"))
      const url = await presignOn(quick.store, key, "GET")
      for (let i = 0; i < 5; i++) assert.strictEqual(await (await fetch(url)).text(), "hello")
      for (let i = 0; i < 5; i++) await (await quick.store.routes.handle(new Request(url))).body?.cancel()
      assert.strictEqual((await fetch(url)).status, 200)
    })
  })

  describe("downloads and replacement", () => {
    it("a download streams the bytes with the stored type, the length and the file name", async () => {
      const key = "attachments/org_test/1700000000000-Relevé août.pdf"
      const content = new Uint8Array(300_000).map((_, i) => i % 251)
      await run(served.store.put(key, content, "application/pdf"))

      const named = await fetch(await run(served.store.presignGet({ key, expiresIn: 60 })))
      assert.strictEqual(named.status, 200)
      assert.strictEqual(named.headers.get("content-type"), "application/pdf")
      assert.strictEqual(named.headers.get("content-length"), String(content.byteLength))
      assert.strictEqual(named.headers.get("x-content-type-options"), "nosniff")
      // Without a signed file name, the key's last segment without its timestamp.
      assert.strictEqual(named.headers.get("content-disposition"), Adapter.contentDisposition("Relevé août.pdf"))
      assert.deepStrictEqual(new Uint8Array(await named.arrayBuffer()), content)

      const renamed = await fetch(await run(served.store.presignGet({ key, expiresIn: 60, filename: "statement.pdf" })))
      assert.strictEqual(renamed.headers.get("content-disposition"), Adapter.contentDisposition("statement.pdf"))

      // The file name is signed: changing it breaks the URL.
      const forged = new URL(await run(served.store.presignGet({ key, expiresIn: 60, filename: "statement.pdf" })))
      forged.searchParams.set("filename", "invoice.exe")
      await refusal(await fetch(forged), 403)
      await run(served.store.delete(key))
    })

    it("curl -OJ, which reads only the ASCII filename=, saves a readable name: marks dropped, not _", async () => {
      const saved = async (name: string) => {
        const key = `attachments/org_test/1700000000000-${name}`
        await run(served.store.put(key, bytes(name), "text/plain"))
        const into = await mkdtemp(path.join(served.base, "curl-"))
        await execFileAsync("curl", ["-sSf", "-OJ", await run(served.store.presignGet({ key, expiresIn: 60 }))], {
          cwd: into
        })
        const [file, ...more] = await readdir(into)
        assert.deepStrictEqual(more, [])
        assert.strictEqual(await readFile(path.join(into, file ?? ""), "utf8"), name)
        await run(served.store.delete(key))
        return file
      }
      assert.strictEqual(await saved("Relevé août.pdf"), "Releve aout.pdf")
      assert.strictEqual(await saved("Crème brûlée 50%.txt"), "Creme brulee 50_.txt")
      // A script with no ASCII letters, or an emoji sequence, leaves one _ per run, not one per code unit.
      assert.strictEqual(await saved("日本語のファイル.txt"), "_.txt")
      assert.strictEqual(await saved("👨‍👩‍👧‍👦 family.jpg"), "_ family.jpg")
    })

    it("a download of a missing object is 404 JSON; a tampered download URL is 403", async () => {
      const key = "attachments/org_test/1-gone.txt"
      const url = await run(served.store.presignGet({ key, expiresIn: 60 }))
      await refusal(await fetch(url), 404)
      await refusal(await fetch(url.replace("gone.txt", "other.txt")), 403)
    })

    it("an empty object round-trips", async () => {
      const key = "attachments/org_test/1-empty.txt"
      const upload = await run(served.store.presignPut({ key, contentType: "text/plain", expiresIn: 60 }))
      assert.strictEqual((await put(upload, "text/plain", new Uint8Array(0))).status, 200)
      assert.deepStrictEqual(await run(served.store.head(key)), { size: 0, contentType: "text/plain" })
      const download = await fetch(await run(served.store.presignGet({ key, expiresIn: 60 })))
      assert.strictEqual(download.status, 200)
      assert.strictEqual(download.headers.get("content-length"), "0")
      assert.strictEqual((await download.arrayBuffer()).byteLength, 0)
      await run(served.store.delete(key))
    })

    it("a reader streaming the old object while a new one is renamed in gets the complete old bytes", async () => {
      const key = "attachments/org_test/1-replaced.bin"
      const old = new Uint8Array(8 * MiB).fill(0xaa)
      const replacement = new Uint8Array(MiB / 2).fill(0xbb)
      await run(served.store.put(key, old, "application/octet-stream"))

      const response = await fetch(await run(served.store.presignGet({ key, expiresIn: 60 })))
      const reader = (response.body as ReadableStream<Uint8Array>).getReader()
      const first = await reader.read()
      assert.isFalse(first.done)

      // Replaced through a signed upload while the download is under way.
      const upload = await run(served.store.presignPut({ key, contentType: "image/png", expiresIn: 60 }))
      assert.strictEqual((await put(upload, "image/png", replacement)).status, 200)

      const chunks: Array<Uint8Array> = [first.value as Uint8Array]
      for (let next = await reader.read(); !next.done; next = await reader.read()) chunks.push(next.value)
      const received = Buffer.concat(chunks)
      assert.strictEqual(received.byteLength, old.byteLength)
      assert.isTrue(
        received.every((b) => b === 0xaa),
        "the old download mixed in new bytes"
      )

      assert.deepStrictEqual(await run(served.store.head(key)), {
        size: replacement.byteLength,
        contentType: "image/png"
      })
      const fresh = await fetch(await run(served.store.presignGet({ key, expiresIn: 60 })))
      assert.strictEqual(fresh.headers.get("content-type"), "image/png")
      assert.deepStrictEqual(new Uint8Array(await fresh.arrayBuffer()), replacement)
      await run(served.store.delete(key))
    })
  })

  describe("the files on disk", () => {
    it("one file per object: a JSON header line, then the raw bytes", async () => {
      const key = "attachments/org_test/1-format.txt"
      await run(served.store.put(key, bytes("raw\nbytes"), "text/plain; charset=utf-8"))
      const file = await readFile(path.join(served.dir, "objects", "attachments", "org_test", "1-format.txt"))
      const newline = file.indexOf(0x0a)
      assert.deepStrictEqual(JSON.parse(file.subarray(0, newline).toString("utf8")), {
        contentType: "text/plain; charset=utf-8"
      })
      assert.strictEqual(file.subarray(newline + 1).toString("utf8"), "raw\nbytes")
      await run(served.store.delete(key))
    })

    it("delete removes the directories it leaves empty, and only those", async () => {
      await run(served.store.put("attachments/org_a/x/1-a.txt", bytes("a"), "text/plain"))
      await run(served.store.put("attachments/org_a/1-b.txt", bytes("b"), "text/plain"))
      await run(served.store.delete("attachments/org_a/x/1-a.txt"))
      const objects = path.join(served.dir, "objects")
      assert.deepStrictEqual(await filesUnder(objects), [path.join("attachments", "org_a", "1-b.txt")])
      const pruned = await stat(path.join(objects, "attachments", "org_a", "x")).then(
        () => false,
        () => true
      )
      assert.isTrue(pruned, "the empty directory was left behind")
      await run(served.store.delete("attachments/org_a/1-b.txt"))
      assert.deepStrictEqual(await readdir(objects), [])
    })

    it("a key that is a directory of other keys is missing; a key under a stored object fails to write", async () => {
      const { store } = served
      await run(store.put("attachments/org_d/1-x.txt", bytes("x"), "text/plain"))
      for (const operation of [store.head("attachments/org_d"), store.get("attachments/org_d")]) {
        assert.strictEqual(
          (await failureOf(operation as Effect.Effect<unknown, { _tag: string }>))._tag,
          "ObjectNotFound"
        )
      }
      assert.strictEqual((await failureOf(store.delete("attachments/org_d")))._tag, "ObjectNotFound")
      const error = await failureOf(store.put("attachments/org_d/1-x.txt/nested", bytes("y"), "text/plain"))
      assert.strictEqual(error._tag, "ObjectStoreError")
      assert.strictEqual(error.reason._tag, "Unknown")
      assert.isDefined(error.cause)
      assert.strictEqual(new TextDecoder().decode(await run(store.get("attachments/org_d/1-x.txt"))), "x")
      await run(store.delete("attachments/org_d/1-x.txt"))
      await tmpEmptied(served)
      await assertNothingStored(served)
    })

    it.skipIf(process.getuid?.() === 0)("a directory the process may not write is AccessDenied", async () => {
      const { chmod } = await import("node:fs/promises")
      const other = await serve()
      try {
        await run(other.store.put("a/1-x.txt", bytes("x"), "text/plain"))
        await chmod(path.join(other.dir, "objects", "a"), 0o000)
        const error = await failureOf(other.store.get("a/1-x.txt"))
        assert.strictEqual(error._tag, "ObjectStoreError")
        assert.strictEqual((error as ObjectStore.ObjectStoreError).reason._tag, "AccessDenied")
        await chmod(path.join(other.dir, "objects", "a"), 0o700)
      } finally {
        await other.close()
      }
    })

    it("a file that this store did not write is reported, not served as an object", async () => {
      const file = path.join(served.dir, "objects", "attachments", "org_test", "1-foreign.txt")
      await run(served.store.put("attachments/org_test/1-foreign.txt", bytes("x"), "text/plain"))
      await writeFile(file, "no header line")
      const error = await failureOf(served.store.head("attachments/org_test/1-foreign.txt"))
      assert.strictEqual(error._tag, "ObjectStoreError")
      await run(served.store.delete("attachments/org_test/1-foreign.txt"))
    })
  })

  describe("options", () => {
    const unused = { dir: "/tmp/unused", publicUrl: "http://127.0.0.1:1", signingSecret: "s" }
    const refusals: ReadonlyArray<readonly [Partial<DiskObjectStore.Options>, string]> = [
      [{ signingSecret: "" }, "signingSecret"],
      [{ signingSecret: Redacted.make("") }, "signingSecret"],
      [{ publicUrl: "ftp://x" }, "publicUrl"],
      [{ publicUrl: "not a url" }, "publicUrl"],
      [{ publicUrl: "http://127.0.0.1:1/?a=1" }, "publicUrl"],
      [{ pathPrefix: "storage" }, "pathPrefix"],
      [{ maxUploadBytes: 0 }, "maxUploadBytes"],
      [{ maxUploadBytes: 1.5 }, "maxUploadBytes"],
      [{ maxOpenFiles: 0 }, "maxOpenFiles"],
      [{ maxOpenFiles: 2.5 }, "maxOpenFiles"],
      [{ transferIdleTimeout: 0 }, "transferIdleTimeout"],
      [{ transferIdleTimeout: "soon" as never }, "transferIdleTimeout"],
      [{ dir: "" }, "dir"]
    ]

    it("make refuses each unusable option with a ConfigError naming it", async () => {
      for (const [bad, option] of refusals) {
        await run(expectConfigError(DiskObjectStore.make({ ...unused, ...bad }), option))
      }
    })

    it("layer fails to build with the same ConfigError", async () => {
      for (const [bad, option] of refusals) {
        await run(expectConfigError(DiskObjectStore.layer({ ...unused, ...bad }), option))
      }
    })

    it("the message never carries the value: a URL's password stays out of it", async () => {
      await run(
        expectConfigError(
          DiskObjectStore.make({ ...unused, publicUrl: "ftp://user:hunter2@files.example/" }),
          "publicUrl",
          {
            secrets: ["hunter2"]
          }
        )
      )
    })

    it("layerConfig fails with a ConfigError naming an option that was read but is unusable", async () => {
      const layer = DiskObjectStore.layerConfig({
        dir: Config.String("STORAGE_DIR"),
        publicUrl: Config.String("PUBLIC_URL"),
        signingSecret: Config.Redacted("STORAGE_SECRET"),
        maxUploadBytes: Config.Number("MAX_UPLOAD_BYTES"),
        pathPrefix: Config.String("PATH_PREFIX")
      })
      const good = {
        STORAGE_DIR: "/tmp/unused",
        PUBLIC_URL: "http://127.0.0.1:9",
        STORAGE_SECRET: "s",
        MAX_UPLOAD_BYTES: "1024",
        PATH_PREFIX: "/files/"
      }
      for (const [name, value, option] of [
        ["PUBLIC_URL", "ftp://127.0.0.1:9", "publicUrl"],
        ["MAX_UPLOAD_BYTES", "0", "maxUploadBytes"],
        ["PATH_PREFIX", "files", "pathPrefix"]
      ] as const) {
        await run(
          expectConfigError(layer, option).pipe(
            Effect.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({ ...good, [name]: value })))
          )
        )
      }
    })

    it("layerConfig reads the options from Config, the secret redacted", async () => {
      const layer = DiskObjectStore.layerConfig({
        dir: Config.String("STORAGE_DIR"),
        publicUrl: Config.String("PUBLIC_URL"),
        signingSecret: Config.Redacted("STORAGE_SECRET")
      })
      const presign = Effect.flatMap(ObjectStore.ObjectStore, (store) =>
        store.presignGet({ key: "a/b.txt", expiresIn: 60 })
      ).pipe(Effect.provide(layer))
      const withConfig = (values: Record<string, string>) =>
        presign.pipe(Effect.provide(ConfigProvider.layer(ConfigProvider.fromUnknown(values))))
      const url = await run(
        withConfig({ STORAGE_DIR: "/tmp/unused", PUBLIC_URL: "http://127.0.0.1:9", STORAGE_SECRET: "s" })
      )
      assert.isTrue(url.startsWith("http://127.0.0.1:9/_mailroom/storage/a/b.txt?"))
      const missing = await failureOf(withConfig({ STORAGE_DIR: "/tmp/unused", PUBLIC_URL: "http://127.0.0.1:9" }))
      assert.strictEqual(missing._tag, "ConfigError")
    })

    it("a publicUrl with a path and another pathPrefix shape the URLs", async () => {
      const store = await run(
        DiskObjectStore.make({
          dir: "/tmp/unused",
          publicUrl: "https://mail.example/api/",
          signingSecret: "s",
          pathPrefix: "/files/"
        })
      )
      // A path is where clients reach the service (behind a proxy): used as it is, whatever the mount.
      const presign = store.presignPut({ key: "a/b.txt", contentType: "text/plain", expiresIn: 60 })
      const url = new URL(await run(presign.pipe(Effect.provideService(StoreRoutes.MountPath, "/mail"))))
      assert.strictEqual(`${url.origin}${url.pathname}`, "https://mail.example/api/files/a/b.txt")
      assert.strictEqual(store.routes.pathPrefix, "/files/")
    })

    it("a publicUrl that is an origin alone signs under the mount the handler reached it at", async () => {
      const store = await run(
        DiskObjectStore.make({ dir: "/tmp/unused", publicUrl: "https://mail.example/", signingSecret: "s" })
      )
      const under = (mount: string | undefined) => {
        const key = "a/b.txt"
        const both = Effect.all([
          store.presignPut({ key, contentType: "text/plain", expiresIn: 60 }),
          store.presignGet({ key, expiresIn: 60 })
        ])
        const signed = mount === undefined ? both : both.pipe(Effect.provideService(StoreRoutes.MountPath, mount))
        return run(signed).then((urls) => urls.map((u) => `${new URL(u).origin}${new URL(u).pathname}`))
      }
      assert.deepStrictEqual(await under("/mail"), [
        "https://mail.example/mail/_mailroom/storage/a/b.txt",
        "https://mail.example/mail/_mailroom/storage/a/b.txt"
      ])
      assert.deepStrictEqual(await under(undefined), [
        "https://mail.example/_mailroom/storage/a/b.txt",
        "https://mail.example/_mailroom/storage/a/b.txt"
      ])
    })

    it("refuses a content type that is not a header value, and a non-positive lifetime", async () => {
      const { store } = served
      const key = "attachments/org_test/1-x.txt"
      for (const contentType of ["text/plain\r\nx-evil: 1", "", "téxt/plain"]) {
        assert.strictEqual(
          (await failureOf(store.presignPut({ key, contentType, expiresIn: 60 })))._tag,
          "ObjectStoreError"
        )
        assert.strictEqual((await failureOf(store.put(key, bytes("x"), contentType)))._tag, "ObjectStoreError")
      }
      assert.strictEqual(
        (await failureOf(store.presignPut({ key, contentType: "text/plain", expiresIn: 0 })))._tag,
        "ObjectStoreError"
      )
      assert.strictEqual(
        (await failureOf(store.presignGet({ key, expiresIn: 60, filename: "a\r\nb" })))._tag,
        "ObjectStoreError"
      )
      await assertNothingStored(served)
    })
  })
})

// --- the Clock ------------------------------------------------------------------------------------

describe("DiskObjectStore on a TestClock", () => {
  // The store is served over real HTTP; only time is the test's.
  const servedOn = (clock: Clock.Clock) =>
    Effect.acquireRelease(
      Effect.promise(() => serve({}, clock)),
      (served) => Effect.promise(() => served.close())
    )

  effectIt.effect("a URL signed under a TestClock expires when the clock is moved past its lifetime", () =>
    Effect.gen(function* () {
      const served = yield* servedOn(yield* Clock.Clock)
      const key = "attachments/org_test/1-clock.txt"
      yield* served.store.put(key, bytes("on time"), "text/plain")
      const download = yield* served.store.presignGet({ key, expiresIn: 60 })
      const upload = yield* served.store.presignPut({ key: `${key}.new`, contentType: "text/plain", expiresIn: 60 })
      // TestClock starts at the epoch: the URLs expire 60 seconds after it, not a minute from now.
      assert.strictEqual(new URL(download).searchParams.get("expires"), "60")

      yield* TestClock.adjust("60 seconds")
      const inTime = yield* Effect.promise(() => fetch(download))
      assert.strictEqual(inTime.status, 200)
      assert.strictEqual(yield* Effect.promise(() => inTime.text()), "on time")

      yield* TestClock.adjust("1 second")
      const late = yield* Effect.promise(() => fetch(download))
      assert.match(yield* Effect.promise(() => refusal(late, 403)), /expired/)
      const lateUpload = yield* Effect.promise(() => put(upload, "text/plain", "too late"))
      assert.match(yield* Effect.promise(() => refusal(lateUpload, 403)), /expired/)
      assert.deepStrictEqual(yield* Effect.promise(() => filesUnder(path.join(served.dir, "objects"))), [
        path.join("attachments", "org_test", "1-clock.txt")
      ])
      assert.deepStrictEqual(yield* Effect.promise(() => filesUnder(path.join(served.dir, ".tmp"))), [])
    }).pipe(Effect.scoped)
  )
})
