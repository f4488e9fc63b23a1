// The store signs URLs in process with the key it parsed once: each URL must be the one the SDK's
// getSignedUrl makes for the same request at the same instant, byte for byte. Credentials without a
// private key at hand (IAM signBlob) keep the SDK's own path.
import { createPrivateKey, sign } from "node:crypto"
import { assert, describe, it } from "@effect/vitest"
import { Storage } from "@google-cloud/storage"
import * as Adapter from "@mailroom/core/adapter"
import { Effect, Redacted } from "effect"
import { TestClock } from "effect/testing"
import { GoogleAuth, JWT } from "google-auth-library"
import { GcsObjectStore } from "../src/index.js"
import { makeServiceAccount } from "./support/keys.js"
import { verifyV4 } from "./support/verifyV4.js"

const account = makeServiceAccount()
const pem = Redacted.value(account.credentials.private_key)

/**
 * The SDK's own signer, set up without GoogleAuth's deprecated `credentials` option (which warns on
 * every construction): a JWT client with the key, and the email where the signer looks it up.
 */
const sdkAuth = () => {
  const scopes = ["https://www.googleapis.com/auth/devstorage.read_write"]
  const auth = new GoogleAuth({ authClient: new JWT({ email: account.clientEmail, key: pem, scopes }), scopes })
  auth.jsonContent = { client_email: account.clientEmail, private_key: pem }
  return auth
}
const bucket = "mailroom-attachments"
// Tomorrow (the SDK refuses an expiry in the past by the real clock), with a fraction of a second,
// so flooring to seconds is exercised too.
const instant = Math.floor(Date.now() / 1000) * 1000 + 86_400_000 + 678

/** The SDK alone, with the same service account, signing as a user of it would. */
const sdkUrl = (
  apiEndpoint: string | undefined,
  key: string,
  config: {
    action: "read" | "write"
    contentType?: string
    extensionHeaders?: Record<string, string>
    responseDisposition?: string
  },
  expiresIn: number
) => {
  const storage = new Storage({
    projectId: "demo-mailroom",
    ...(apiEndpoint === undefined ? {} : { apiEndpoint }),
    authClient: sdkAuth()
  })
  return storage
    .bucket(bucket)
    .file(key)
    .getSignedUrl({ version: "v4", accessibleAt: instant, expires: instant + expiresIn * 1000, ...config })
    .then(([url]) => url)
}

const keys = [
  "attachments/org_acme/1767312000000-report.pdf",
  "attachments/org_acme/1767312000000-Relevé de compte (été) 2026 ✓.pdf",
  "attachments/org_acme/1767312000000-it's a *draft* [v2]!~.txt"
]

describe("URLs signed in process", () => {
  for (const apiEndpoint of [undefined, "http://127.0.0.1:9199"]) {
    it.effect(`are the SDK's own, byte for byte (${apiEndpoint ?? "Google's endpoint"})`, () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(instant)
        const store = yield* GcsObjectStore.make({
          bucket,
          credentials: account.credentials,
          maxUploadBytes: 5_000_000,
          ...(apiEndpoint === undefined ? {} : { apiEndpoint })
        })
        for (const key of keys) {
          for (const expiresIn of [60, 3600, 604_800]) {
            const put = yield* store.presignPut({ key, contentType: "application/pdf", expiresIn })
            const expectedPut = yield* Effect.promise(() =>
              sdkUrl(
                apiEndpoint,
                key,
                {
                  action: "write",
                  contentType: "application/pdf",
                  extensionHeaders: { "x-goog-content-length-range": "0,5000000" }
                },
                expiresIn
              )
            )
            assert.strictEqual(put, expectedPut)
            const sized = yield* store.presignPut({ key, contentType: "text/plain", expiresIn, contentLength: 42 })
            assert.strictEqual(
              sized,
              yield* Effect.promise(() =>
                sdkUrl(
                  apiEndpoint,
                  key,
                  { action: "write", contentType: "text/plain", extensionHeaders: { "content-length": "42" } },
                  expiresIn
                )
              )
            )
            const get = yield* store.presignGet({ key, expiresIn, filename: "Relevé août (final).pdf" })
            assert.strictEqual(
              get,
              yield* Effect.promise(() =>
                sdkUrl(
                  apiEndpoint,
                  key,
                  { action: "read", responseDisposition: Adapter.contentDisposition("Relevé août (final).pdf") },
                  expiresIn
                )
              )
            )
            const plain = yield* store.presignGet({ key, expiresIn })
            assert.strictEqual(
              plain,
              yield* Effect.promise(() => sdkUrl(apiEndpoint, key, { action: "read" }, expiresIn))
            )
          }
        }
      })
    )
  }

  it.effect("a lifetime over seven days is refused as the SDK refuses it", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(instant)
      const store = yield* GcsObjectStore.make({ bucket, credentials: account.credentials })
      const error = yield* Effect.flip(store.presignGet({ key: keys[0] ?? "", expiresIn: 604_801 }))
      assert.strictEqual(error._tag, "ObjectStoreError")
      assert.include(error.message, "seven days")
    })
  )

  it.live("credentials with no private key at hand sign through the SDK (IAM signBlob)", () =>
    Effect.gen(function* () {
      // What GoogleAuth does for a workload identity: it knows the email and asks IAM to sign.
      const auth = new GoogleAuth()
      const blobs: Array<string> = []
      const key = createPrivateKey(pem)
      Object.assign(auth, {
        getCredentials: async () => ({ client_email: account.clientEmail }),
        sign: async (blob: string) => {
          blobs.push(blob)
          return sign("sha256", Buffer.from(blob), key).toString("base64")
        }
      })
      const store = yield* GcsObjectStore.make({
        bucket,
        client: new Storage({ projectId: "demo-mailroom", authClient: auth })
      })
      const url = yield* store.presignPut({ key: keys[1] ?? "", contentType: "application/pdf", expiresIn: 3600 })
      assert.strictEqual(blobs.length, 1, "the SDK's signer was not asked")
      const verdict = verifyV4(
        { method: "PUT", url, headers: { "content-type": "application/pdf" }, at: Date.now() },
        account
      )
      assert.isTrue(verdict.ok, verdict.ok ? "" : verdict.reason)
    })
  )
})
