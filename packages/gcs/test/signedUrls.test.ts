// Proves the store's V4 signed URLs by re-deriving them: test/support/verifyV4.ts rebuilds the
// canonical request and string to sign as GCS does, and checks the RSA signature with the public key.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Storage } from "@google-cloud/storage"
import { Attachments, ObjectStore } from "@mailroom/core"
import * as Adapter from "@mailroom/core/adapter"
import { Effect, Redacted } from "effect"
import { GoogleAuth } from "google-auth-library"
import { GcsObjectStore } from "../src/index.js"
import { makeServiceAccount } from "./support/keys.js"
import { type SignedRequest, verifyV4 } from "./support/verifyV4.js"

const account = makeServiceAccount()
const bucket = "mailroom-attachments"
// Signing happens offline: the store never calls Google to produce these URLs.
const store = Effect.runSync(
  GcsObjectStore.make({ bucket, projectId: "demo-mailroom", credentials: account.credentials })
)
const key = "attachments/org_acme/1767312000000-Relevé de compte (été) 2026.pdf"
const hour = 3600_000

const check = (request: SignedRequest) => verifyV4(request, account)
const accepted = (request: SignedRequest) => {
  const verdict = check(request)
  assert.isTrue(verdict.ok, verdict.ok ? "" : verdict.reason)
}
const refused = (request: SignedRequest, because: RegExp) => {
  const verdict = check(request)
  assert.isFalse(verdict.ok, `accepted: ${request.method} ${request.url}`)
  if (!verdict.ok) assert.match(verdict.reason, because)
}
const withParam = (url: string, name: string, value: string) => {
  const changed = new URL(url)
  changed.searchParams.set(name, value)
  return changed.toString()
}

describe("upload URLs", () => {
  it.live("are accepted for the PUT a client makes with only Content-Type, for one hour", () =>
    Effect.gen(function* () {
      const before = Date.now()
      const url = yield* store.presignPut({ key, contentType: "application/pdf", expiresIn: 3600 })
      const parsed = new URL(url)
      assert.strictEqual(parsed.origin, "https://storage.googleapis.com")
      assert.strictEqual(decodeURIComponent(parsed.pathname), `/${bucket}/${key}`)
      assert.strictEqual(parsed.searchParams.get("X-Goog-Expires"), "3600")
      assert.strictEqual(parsed.searchParams.get("X-Goog-SignedHeaders"), "content-type;host")
      const day = new Date(before).toISOString().slice(0, 10).replaceAll("-", "")
      assert.strictEqual(
        parsed.searchParams.get("X-Goog-Credential"),
        `${account.clientEmail}/${day}/auto/storage/goog4_request`
      )

      const upload = { method: "PUT", url, headers: { "Content-Type": "application/pdf" }, at: Date.now() }
      accepted(upload)
      accepted({ ...upload, at: before + hour - 2000 })
      refused({ ...upload, at: before + hour + 2000 }, /expired/)
    })
  )

  it.live("are refused for another method, path, bucket or content type, or without Content-Type", () =>
    Effect.gen(function* () {
      const url = yield* store.presignPut({ key, contentType: "application/pdf", expiresIn: 3600 })
      const upload = { method: "PUT", url, headers: { "content-type": "application/pdf" }, at: Date.now() }
      accepted(upload)
      refused({ ...upload, method: "GET" }, /signature does not match/)
      refused({ ...upload, method: "DELETE" }, /signature does not match/)
      refused({ ...upload, url: url.replace("org_acme", "org_other") }, /signature does not match/)
      refused({ ...upload, url: url.replace(`/${bucket}/`, "/another-bucket/") }, /signature does not match/)
      refused({ ...upload, url: url.replace("storage.googleapis.com", "evil.example") }, /signature does not match/)
      refused({ ...upload, headers: { "content-type": "text/html" } }, /signature does not match/)
      refused({ ...upload, headers: {} }, /content-type was not sent/)
    })
  )

  it.live("are refused when a signed query parameter is changed or the signature is not the account's", () =>
    Effect.gen(function* () {
      const url = yield* store.presignPut({ key, contentType: "application/pdf", expiresIn: 3600 })
      const upload = { method: "PUT", url, headers: { "content-type": "application/pdf" }, at: Date.now() }
      refused({ ...upload, url: withParam(url, "X-Goog-Expires", "604800") }, /signature does not match/)
      refused({ ...upload, url: withParam(url, "X-Goog-SignedHeaders", "host") }, /signature does not match/)
      refused({ ...upload, url: withParam(url, "X-Goog-Signature", "ab".repeat(256)) }, /signature does not match/)
      const stranger = makeServiceAccount(account.clientEmail)
      assert.isFalse(verifyV4(upload, stranger).ok, "another key verified the signature")
    })
  )

  it.live("bind a declared length through the Content-Length every client sends", () =>
    Effect.gen(function* () {
      const url = yield* store.presignPut({ key, contentType: "image/png", expiresIn: 3600, contentLength: 70_000 })
      assert.strictEqual(new URL(url).searchParams.get("X-Goog-SignedHeaders"), "content-length;content-type;host")
      const upload = {
        method: "PUT",
        url,
        headers: { "content-type": "image/png", "content-length": "70000" },
        at: Date.now()
      }
      accepted(upload)
      refused({ ...upload, headers: { "content-type": "image/png", "content-length": "70001" } }, /does not match/)
      // A streamed (chunked) upload sends no length, so it cannot be sized: GCS must refuse it.
      refused({ ...upload, headers: { "content-type": "image/png" } }, /content-length was not sent/)
    })
  )

  it.live("sign x-goog-content-length-range only when maxUploadBytes asks for it", () =>
    Effect.gen(function* () {
      const bounded = yield* GcsObjectStore.make({
        bucket,
        credentials: account.credentials,
        maxUploadBytes: 25 * 1024 * 1024
      })
      const url = yield* bounded.presignPut({ key, contentType: "application/pdf", expiresIn: 3600 })
      assert.strictEqual(
        new URL(url).searchParams.get("X-Goog-SignedHeaders"),
        "content-type;host;x-goog-content-length-range"
      )
      const upload = { method: "PUT", url, at: Date.now() }
      accepted({
        ...upload,
        headers: { "content-type": "application/pdf", "x-goog-content-length-range": "0,26214400" }
      })
      refused({ ...upload, headers: { "content-type": "application/pdf" } }, /x-goog-content-length-range was not sent/)
      refused(
        { ...upload, headers: { "content-type": "application/pdf", "x-goog-content-length-range": "0,999999999" } },
        /does not match/
      )
      // A declared length is the tighter bound; it replaces the range.
      const exact = yield* bounded.presignPut({
        key,
        contentType: "application/pdf",
        expiresIn: 3600,
        contentLength: 9
      })
      assert.strictEqual(new URL(exact).searchParams.get("X-Goog-SignedHeaders"), "content-length;content-type;host")
    })
  )

  it.live("through core's Attachments with requireContentLength, every URL binds the size the presign declared", () =>
    Effect.gen(function* () {
      const attachments = yield* Attachments.make({ requireContentLength: true }).pipe(
        Effect.provideService(ObjectStore.ObjectStore, store)
      )
      const principal = { orgId: "org_acme", slug: "acme" }
      const refusedPresign = yield* Effect.flip(
        attachments.presign(principal, { filename: "a.pdf", content_type: "application/pdf" })
      )
      assert.deepStrictEqual((refusedPresign as { errors?: unknown }).errors, [
        "content_length: is required: upload URLs are issued for a declared size only"
      ])
      const { url } = yield* attachments.presign(principal, {
        filename: "a.pdf",
        content_type: "application/pdf",
        content_length: 1234
      })
      // What a client that follows the API sends: Content-Type, and the Content-Length of its body.
      const upload = { method: "PUT", url, headers: { "content-type": "application/pdf" }, at: Date.now() }
      accepted({ ...upload, headers: { ...upload.headers, "content-length": "1234" } })
      refused({ ...upload, headers: { ...upload.headers, "content-length": "1235" } }, /does not match/)
      refused({ ...upload, headers: { ...upload.headers, "content-length": "999999999" } }, /does not match/)
      refused(upload, /content-length was not sent/)
    })
  )
})

describe("download URLs", () => {
  it.live("are accepted for GET and offer the file under its name through a signed response-content-disposition", () =>
    Effect.gen(function* () {
      const before = Date.now()
      const url = yield* store.presignGet({ key, expiresIn: 3600, filename: "Relevé août.pdf" })
      const parsed = new URL(url)
      assert.strictEqual(
        parsed.searchParams.get("response-content-disposition"),
        Adapter.contentDisposition("Relevé août.pdf")
      )
      assert.strictEqual(parsed.searchParams.get("X-Goog-SignedHeaders"), "host")
      const download = { method: "GET", url, at: Date.now() }
      accepted(download)
      refused({ ...download, method: "PUT" }, /signature does not match/)
      refused({ ...download, at: before + hour + 2000 }, /expired/)
      refused(
        { ...download, url: withParam(url, "response-content-disposition", 'attachment; filename="invoice.html"') },
        /signature does not match/
      )
    })
  )

  it.live("carry no disposition when no file name is given", () =>
    Effect.gen(function* () {
      const url = yield* store.presignGet({ key, expiresIn: 600 })
      assert.isNull(new URL(url).searchParams.get("response-content-disposition"))
      assert.strictEqual(new URL(url).searchParams.get("X-Goog-Expires"), "600")
      accepted({ method: "GET", url, at: Date.now() })
    })
  )
})

describe("signing failures", () => {
  it.live(
    "credentials IAM does not let sign (no signBlob permission) are AccessDenied, keeping the signer's error",
    () =>
      Effect.gen(function* () {
        // The default chain with no private key at hand: the SDK asks IAM's signBlob, which answers 403.
        const auth = new GoogleAuth()
        Object.assign(auth, {
          getCredentials: async () => ({ client_email: account.clientEmail }),
          sign: async () => {
            throw new Error("Permission 'iam.serviceAccounts.signBlob' denied on resource (or it may not exist).")
          }
        })
        const denied = yield* GcsObjectStore.make({
          bucket,
          client: new Storage({ projectId: "demo-mailroom", authClient: auth })
        })
        const error = yield* Effect.flip(denied.presignPut({ key, contentType: "application/pdf", expiresIn: 3600 }))
        assert.strictEqual(error._tag, "ObjectStoreError")
        assert.strictEqual(error.reason._tag, "AccessDenied")
        assert.strictEqual((error.cause as Error).name, "SigningError")
        assert.include(error.message, "iam.serviceAccounts.signBlob")
      })
  )

  it.live("a lifetime GCS does not allow (over seven days) is refused before any URL is issued", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(store.presignGet({ key, expiresIn: 8 * 24 * 3600 }))
      assert.strictEqual(error.reason._tag, "Unknown")
      assert.match(error.message, /seven days/)
    })
  )
})

describe("credentials given as a key file or a plain string", () => {
  it.live("sign URLs GCS accepts, without the SDK's deprecation notice", () =>
    Effect.gen(function* () {
      const dir = mkdtempSync(join(tmpdir(), "mailroom-gcs-"))
      const keyFile = join(dir, "sa.json")
      const pem = Redacted.value(account.credentials.private_key)
      writeFileSync(
        keyFile,
        JSON.stringify({ type: "service_account", client_email: account.clientEmail, private_key: pem })
      )
      const warnings: Array<string> = []
      const warn = console.warn
      console.warn = (...args: Array<unknown>) => void warnings.push(args.join(" "))
      try {
        for (const options of [
          { bucket, keyFilename: keyFile },
          { bucket, credentials: { client_email: account.clientEmail, private_key: pem } }
        ]) {
          const signer = yield* GcsObjectStore.make(options)
          const url = yield* signer.presignPut({ key, contentType: "text/plain", expiresIn: 60 })
          accepted({ method: "PUT", url, headers: { "content-type": "text/plain" }, at: Date.now() })
        }
      } finally {
        console.warn = warn
        rmSync(dir, { recursive: true })
      }
      assert.deepStrictEqual(warnings, [])
    })
  )
})
