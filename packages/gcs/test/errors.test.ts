// Fault paths the emulator never produces (refused credentials, a failing backend, an unreachable
// endpoint), from a stand-in that answers as the GCS JSON API documents its errors.
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Storage } from "@google-cloud/storage"
import type { ObjectStore } from "@mailroom/core"
import { Effect } from "effect"
import { GcsObjectStore } from "../src/index.js"

// https://cloud.google.com/storage/docs/json_api/v1/status-codes: `{error: {errors: [...], code, message}}`.
const documented: Record<number, { readonly reason: string; readonly message: string }> = {
  400: { reason: "invalid", message: "Invalid argument." },
  401: { reason: "required", message: "Login Required" },
  403: {
    reason: "forbidden",
    message:
      "mailroom@demo.iam.gserviceaccount.com does not have storage.objects.get access to the Google Cloud Storage object."
  },
  404: { reason: "notFound", message: "The specified bucket does not exist." },
  429: { reason: "rateLimitExceeded", message: "The rate of change requests to the object is too high." },
  503: { reason: "backendError", message: "Backend Error" }
}

let answer = 503
const received: Array<string> = []
const server = createServer((request, response) => {
  received.push(`${request.method} ${request.url}`)
  request.resume()
  const { reason, message } = documented[answer] ?? { reason: "unknown", message: "?" }
  response.writeHead(answer, { "content-type": "application/json; charset=UTF-8" })
  response.end(JSON.stringify({ error: { errors: [{ domain: "global", reason, message }], code: answer, message } }))
})
let endpoint = ""
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

// The SDK retries 5xx, 429 and network errors with backoff for seconds; without that the outcome shows at once.
const storeAt = (apiEndpoint: string) =>
  GcsObjectStore.make({
    bucket: "mailroom-attachments",
    client: new Storage({ apiEndpoint, projectId: "demo-mailroom", retryOptions: { autoRetry: false } })
  })

const operations = (store: ObjectStore.ObjectStore) =>
  [
    ["head", store.head("attachments/org_acme/a.pdf")],
    ["get", store.get("attachments/org_acme/a.pdf")],
    ["delete", store.delete("attachments/org_acme/a.pdf")],
    ["put", store.put("attachments/org_acme/a.pdf", new Uint8Array([1]), "application/pdf")]
  ] as const

describe("vendor errors become core's", () => {
  for (const [status, reason] of [
    [401, "AccessDenied"],
    [403, "AccessDenied"],
    [429, "Unavailable"],
    [503, "Unavailable"],
    [400, "Unknown"]
  ] as const) {
    it.effect(`${status} -> ObjectStoreError ${reason}, keeping the SDK's error as cause`, () =>
      Effect.gen(function* () {
        answer = status
        received.length = 0
        for (const [name, operation] of operations(yield* storeAt(endpoint))) {
          const error = yield* Effect.flip(operation as Effect.Effect<unknown, ObjectStore.ObjectStoreError>)
          assert.strictEqual(error._tag, "ObjectStoreError", name)
          assert.strictEqual(error.reason._tag, reason, name)
          assert.strictEqual(error.isRetryable, reason === "Unavailable", name)
          assert.strictEqual((error.cause as { code?: unknown }).code, status, name)
          assert.include(error.message, documented[status]?.message ?? "", name)
        }
        // One request each: the adapter adds no retries of its own.
        assert.deepStrictEqual(
          received.map((line) => line.split("?")[0]),
          [
            "GET /storage/v1/b/mailroom-attachments/o/attachments%2Forg_acme%2Fa.pdf",
            "GET /storage/v1/b/mailroom-attachments/o/attachments%2Forg_acme%2Fa.pdf",
            "DELETE /storage/v1/b/mailroom-attachments/o/attachments%2Forg_acme%2Fa.pdf",
            "POST /upload/storage/v1/b/mailroom-attachments/o"
          ]
        )
      })
    )
  }

  it.effect("404 is ObjectNotFound for head, get and delete, but not for put (the bucket is missing)", () =>
    Effect.gen(function* () {
      answer = 404
      for (const [name, operation] of operations(yield* storeAt(endpoint))) {
        const error = yield* Effect.flip(operation as Effect.Effect<unknown, { readonly _tag: string }>)
        assert.strictEqual(error._tag, name === "put" ? "ObjectStoreError" : "ObjectNotFound", name)
      }
    })
  )

  it.effect("an unreachable endpoint is Unavailable", () =>
    Effect.gen(function* () {
      // A port that was just free: nothing listens there.
      const closed = createServer()
      yield* Effect.promise(() => new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve)))
      const { port } = closed.address() as AddressInfo
      yield* Effect.promise(() => new Promise<void>((resolve) => closed.close(() => resolve())))
      for (const [name, operation] of operations(yield* storeAt(`http://127.0.0.1:${port}`))) {
        const error = yield* Effect.flip(operation as Effect.Effect<unknown, ObjectStore.ObjectStoreError>)
        assert.strictEqual(error.reason._tag, "Unavailable", name)
        assert.strictEqual((error.cause as { code?: unknown }).code, "ECONNREFUSED", name)
      }
    })
  )
})
