// Resend's error table, code by code: each documented answer (produced by the stand-in's account state
// where one produces it, scripted with failNext otherwise) becomes the reason, retry and "possibly sent"
// a user relies on; retries are observed through core's Mailer, counting what the stand-in received.
import { createServer } from "node:net"
import { assert, describe, it } from "@effect/vitest"
import { Mailer, Mailroom, ObjectStore, Organizations, type ProviderError } from "@mailroom/core"
import { outboundEmail } from "@mailroom/core/testing"
import { Duration, Effect, Layer } from "effect"
import { ResendEmailProvider } from "../src/index.js"
import * as StandIn from "./ResendStandIn.js"

const message = outboundEmail

interface Setup {
  readonly standIn?: StandIn.StandInOptions
  readonly fault?: StandIn.Fault
  readonly apiKey?: string
  readonly path?: string
  readonly timeout?: Duration.Input
}

/** The error of one send through a fresh stand-in, and the stand-in, which the test may read. */
const failure = (setup: Setup = {}, email = message()) =>
  Effect.gen(function* () {
    const standIn = yield* StandIn.make(setup.standIn)
    if (setup.fault !== undefined) standIn.failNext(setup.fault)
    const apiKey = setup.apiKey ?? standIn.apiKey
    const provider = yield* ResendEmailProvider.make({
      apiKey,
      baseUrl: `${standIn.url}${setup.path ?? ""}`,
      timeout: setup.timeout ?? "5 seconds"
    })
    const error = yield* Effect.flip(provider.send(email))
    // The key is in no message and no reason, whatever happened.
    assert.notInclude(`${error.message} ${JSON.stringify(error.reason)}`, apiKey)
    return { error, standIn }
  }).pipe(Effect.scoped)

const scripted = (status: number, name: string, text: string) => ({
  fault: { status, body: { statusCode: status, name, message: text } }
})

/** What a user of core's Mailer sees of one send through `standIn`: its outcome, after core's retries. */
const throughMailer = (standIn: StandIn.StandIn) =>
  Effect.flatMap(Mailer.Mailer, (mailer) =>
    mailer.send(
      { orgId: "org_acme", slug: "acme" },
      { from: "billing@acme.example", to: ["alice@example.com"], subject: "Hi", body: { text: "x" } }
    )
  ).pipe(
    Effect.provide(
      Mailroom.layer({
        provider: ResendEmailProvider.layer({ apiKey: standIn.apiKey, baseUrl: standIn.url, timeout: "5 seconds" }),
        store: Layer.succeed(ObjectStore.ObjectStore, ObjectStore.makeMemory()),
        organizations: Organizations.layerStatic({
          serviceDomain: "mailroom.test",
          organizations: [{ id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"] }]
        }),
        mailer: { retry: { maxAttempts: 3, baseDelay: "10 millis", maxDelay: "3 seconds" } }
      })
    )
  )

const reasonOf = <T extends ProviderError.Reason["_tag"]>(error: ProviderError.ProviderError, tag: T) => {
  assert.strictEqual(error.reason._tag, tag)
  return error.reason as Extract<ProviderError.Reason, { _tag: T }>
}

describe("the API key refused: an internal error that names no key, never retried", () => {
  const cases: ReadonlyArray<readonly [string, Setup]> = [
    ["401 validation_error, a key that does not exist (the stand-in)", { apiKey: "re_not_the_key_7d1f" }],
    ["401 missing_api_key", scripted(401, "missing_api_key", "Missing API key in the authorization header.")],
    ["401 restricted_api_key", scripted(401, "restricted_api_key", "This API key is restricted to only send emails.")],
    ["403 invalid_api_key (the errors page's earlier entry)", scripted(403, "invalid_api_key", "API key is invalid.")],
    ["400 validation_error, API key is invalid", scripted(400, "validation_error", "API key is invalid")]
  ]
  for (const [what, setup] of cases) {
    it.effect(what, () =>
      Effect.gen(function* () {
        const { error } = yield* failure(setup)
        reasonOf(error, "Unknown")
        assert.strictEqual(error.message, "the Resend API key was refused")
        assert.isFalse(error.isRetryable)
      })
    )
  }
})

describe("refusals of the message: not sent, not retried", () => {
  it.effect("403 validation_error, a From on a domain not verified: SenderNotVerified", () =>
    Effect.gen(function* () {
      const { error, standIn } = yield* failure({}, message({ from: { address: "billing@globex.example" } }))
      assert.strictEqual(reasonOf(error, "SenderNotVerified").sender, "billing@globex.example")
      assert.isFalse(error.isRetryable)
      assert.strictEqual(standIn.requests[0]?.status, 403)
      assert.strictEqual(standIn.accepted.length, 0)
    })
  )

  it.effect("403 validation_error, the testing sender to others than the owner: RecipientNotVerified", () =>
    Effect.gen(function* () {
      const { error } = yield* failure(
        { standIn: { ownerEmail: "owner@acme.example" } },
        message({ from: { address: "onboarding@resend.dev" }, to: ["owner@acme.example", "alice@example.com"] })
      )
      assert.deepStrictEqual(reasonOf(error, "RecipientNotVerified").recipients, ["alice@example.com"])
      assert.include(error.message, "owner@acme.example")
      assert.isFalse(error.isRetryable)
    })
  )

  it.effect("422 validation_error, an invalid from: InvalidRequest with Resend's explanation", () =>
    Effect.gen(function* () {
      const { error } = yield* failure({}, message({ from: { address: "not-an-address" } }))
      reasonOf(error, "InvalidRequest")
      assert.include(error.message, "Invalid `from` field")
      assert.isFalse(error.isRetryable)
    })
  )

  it.effect("422 validation_error, more than 50 recipients in to: InvalidRequest", () =>
    Effect.gen(function* () {
      const to = Array.from({ length: 51 }, (_, i) => `r${i}@example.com`)
      const { error } = yield* failure({}, message({ to }))
      reasonOf(error, "InvalidRequest")
      assert.include(error.message, "50")
    })
  )

  it.effect("422 validation_error, a file type Resend does not send: InvalidRequest naming the attachment", () =>
    Effect.gen(function* () {
      const bytes = new Uint8Array([1, 2, 3])
      const { error, standIn } = yield* failure(
        {},
        message({
          attachments: [
            { filename: "invoice.pdf", contentType: "application/pdf", content: bytes },
            { filename: "setup.exe", contentType: "application/octet-stream", content: bytes }
          ]
        })
      )
      reasonOf(error, "InvalidRequest")
      assert.include(error.message, ".exe")
      assert.strictEqual(standIn.accepted.length, 0)
    })
  )

  it.effect("422 invalid_attachment: InvalidRequest naming the attachments", () =>
    Effect.gen(function* () {
      const attachments = [{ filename: "a.pdf", contentType: "application/pdf", content: new Uint8Array([1]) }]
      const { error } = yield* failure(
        scripted(422, "invalid_attachment", "Attachment must have either a `content` or `path`."),
        message({ attachments })
      )
      reasonOf(error, "InvalidRequest")
      assert.include(error.message, '"a.pdf"')
    })
  )

  const invalid: ReadonlyArray<readonly [number, string, string]> = [
    [422, "missing_required_field", "Missing `subject` field."],
    [422, "invalid_from_address", "Invalid `from` field."],
    [422, "invalid_parameter", "The parameter must be a valid UUID."],
    [451, "security_error", "We may have found a security issue with the request."],
    [400, "validation_error", "We found an error with one or more fields in the request."]
  ]
  for (const [status, name, text] of invalid) {
    it.effect(`${status} ${name}: InvalidRequest with Resend's message`, () =>
      Effect.gen(function* () {
        const { error } = yield* failure(scripted(status, name, text))
        reasonOf(error, "InvalidRequest")
        assert.include(error.message, text)
        assert.isFalse(error.isRetryable)
      })
    )
  }

  it.effect("413 over 40 MB (Resend documents no body): MessageTooLarge", () =>
    Effect.gen(function* () {
      const { error } = yield* failure({ fault: { status: 413 } })
      reasonOf(error, "MessageTooLarge")
      assert.isFalse(error.isRetryable)
    })
  )

  it.effect("404 not_found, a baseUrl with a path Resend does not serve: an internal error naming the option", () =>
    Effect.gen(function* () {
      const { error } = yield* failure({ path: "/v1" })
      reasonOf(error, "Unknown")
      assert.include(error.message, "baseUrl")
    })
  )
})

describe("Idempotency-Key", () => {
  it.effect("400 invalid_idempotency_key, a key over 256 characters: an internal error", () =>
    Effect.gen(function* () {
      const { error } = yield* failure({}, message({ idempotencyKey: "k".repeat(257) }))
      reasonOf(error, "Unknown")
      assert.include(error.message, "Idempotency-Key")
    })
  )

  it.effect("409 invalid_idempotent_request, the key reused with another message: InvalidRequest, nothing sent", () =>
    Effect.gen(function* () {
      const standIn = yield* StandIn.make()
      const provider = yield* ResendEmailProvider.make({ apiKey: standIn.apiKey, baseUrl: standIn.url })
      yield* provider.send(message({ idempotencyKey: "mailroom-k1" }))
      const error = yield* Effect.flip(provider.send(message({ idempotencyKey: "mailroom-k1", subject: "Other" })))
      reasonOf(error, "InvalidRequest")
      assert.strictEqual(standIn.requests[1]?.status, 409)
      assert.strictEqual(standIn.accepted.length, 1)
    }).pipe(Effect.scoped)
  )

  it.effect("409 concurrent_idempotent_requests: Unavailable, not sent, retried", () =>
    Effect.gen(function* () {
      const { error } = yield* failure(
        scripted(
          409,
          "concurrent_idempotent_requests",
          "Same idempotency key used while original request is still in progress."
        )
      )
      assert.isFalse(reasonOf(error, "Unavailable").possiblySent)
      assert.isTrue(error.isRetryable)
    })
  )
})

describe("limits and quotas", () => {
  it.effect("429 rate_limit_exceeded: RateLimited with retry-after", () =>
    Effect.gen(function* () {
      const { error } = yield* failure({ fault: StandIn.rateLimited(2) })
      assert.deepStrictEqual(reasonOf(error, "RateLimited").retryAfter, Duration.seconds(2))
      assert.isTrue(error.isRetryable)
    })
  )

  it.effect("429 without retry-after: the wait from ratelimit-reset", () =>
    Effect.gen(function* () {
      const { fault } = scripted(429, "rate_limit_exceeded", "Too many requests.")
      const { error } = yield* failure({ fault: { ...fault, headers: { "ratelimit-reset": "3" } } })
      assert.deepStrictEqual(reasonOf(error, "RateLimited").retryAfter, Duration.seconds(3))
    })
  )

  it.live("429 rate_limit_exceeded through core: waited for, retried once, sent once", () =>
    Effect.gen(function* () {
      const standIn = yield* StandIn.make()
      standIn.failNext(StandIn.rateLimited(1))
      const started = Date.now()
      const { response } = yield* throughMailer(standIn)
      assert.isAtLeast(Date.now() - started, 900, "the retry waited for retry-after")
      assert.deepStrictEqual(
        standIn.requests.map((r) => r.status),
        [429, 200]
      )
      assert.strictEqual(standIn.accepted.length, 1)
      assert.deepStrictEqual(
        standIn.requests.map((r) => r.headers["idempotency-key"]),
        [`mailroom-${response.message_id}`, `mailroom-${response.message_id}`],
        "both attempts carry one key, the message's own, so Resend takes the message once"
      )
    }).pipe(Effect.scoped)
  )

  it.live("429 daily_quota_exceeded: SendingPaused, not permanent, not retried", () =>
    Effect.gen(function* () {
      const standIn = yield* StandIn.make({ dailyQuota: 0 })
      const error = yield* Effect.flip(throughMailer(standIn))
      assert.strictEqual(error._tag, "ProviderError")
      const reason = reasonOf(error as ProviderError.ProviderError, "SendingPaused")
      assert.isFalse(reason.permanent)
      assert.include(error.message, "daily")
      assert.strictEqual(standIn.requests.length, 1)
    }).pipe(Effect.scoped)
  )

  it.effect("429 monthly_quota_exceeded: SendingPaused", () =>
    Effect.gen(function* () {
      const { error } = yield* failure(
        scripted(429, "monthly_quota_exceeded", "You have reached your monthly email sending quota.")
      )
      assert.include(reasonOf(error, "SendingPaused").message, "monthly")
    })
  )
})

/** A port on 127.0.0.1 that nothing listens on. */
const closedPort = () =>
  Effect.promise(
    () =>
      new Promise<number>((resolve, reject) => {
        const server = createServer()
        server.once("error", reject)
        server.listen(0, "127.0.0.1", () => {
          const { port } = server.address() as { port: number }
          server.close(() => resolve(port))
        })
      })
  )

describe("failures after the request may have reached Resend: possibly sent, never retried", () => {
  for (const name of ["application_error", "internal_server_error"]) {
    it.live(`500 ${name}: Unavailable, possibly sent; core sends it once`, () =>
      Effect.gen(function* () {
        const standIn = yield* StandIn.make()
        standIn.failNext(scripted(500, name, "An unexpected error occurred.").fault)
        const error = yield* Effect.flip(throughMailer(standIn))
        const reason = reasonOf(error as ProviderError.ProviderError, "Unavailable")
        assert.isTrue(reason.possiblySent)
        assert.strictEqual(standIn.requests.length, 1)
      }).pipe(Effect.scoped)
    )
  }

  it.effect("a 502 page from a proxy, not JSON: Unavailable, possibly sent", () =>
    Effect.gen(function* () {
      const { error } = yield* failure({ fault: { status: 502, body: "<html>Bad gateway</html>" } })
      assert.isTrue(reasonOf(error, "Unavailable").possiblySent)
      assert.isFalse(error.isRetryable)
    })
  )

  it.live("a connection reset after the request was written: possibly sent, not retried, received once", () =>
    Effect.gen(function* () {
      const standIn = yield* StandIn.make()
      standIn.failNext("drop")
      const error = yield* Effect.flip(throughMailer(standIn))
      const reason = reasonOf(error as ProviderError.ProviderError, "Unavailable")
      assert.isTrue(reason.possiblySent)
      assert.isFalse((error as ProviderError.ProviderError).isRetryable)
      // Resend did receive the whole request: a retry could have sent it twice.
      assert.strictEqual(standIn.requests.length, 1)
      assert.include(standIn.requests[0]?.body ?? "", '"subject":"Hi"')
    }).pipe(Effect.scoped)
  )

  it.live("no answer within the timeout: Unavailable, possibly sent, received once", () =>
    Effect.gen(function* () {
      const { error, standIn } = yield* failure({ fault: "hang", timeout: "300 millis" })
      assert.isTrue(reasonOf(error, "Unavailable").possiblySent)
      assert.include(error.message, "did not answer within")
      assert.strictEqual(standIn.requests.length, 1)
    })
  )

  it.effect("a 200 without an id: Unavailable, possibly sent", () =>
    Effect.gen(function* () {
      const { error } = yield* failure({ fault: { status: 200, body: {} } })
      assert.isTrue(reasonOf(error, "Unavailable").possiblySent)
    })
  )

  it.effect("a refused connection: Unavailable, not sent, retried", () =>
    Effect.gen(function* () {
      const port = yield* closedPort()
      const provider = yield* ResendEmailProvider.make({
        apiKey: "re_closed_port",
        baseUrl: `http://127.0.0.1:${port}`
      })
      const error = yield* Effect.flip(provider.send(message()))
      assert.isFalse(reasonOf(error, "Unavailable").possiblySent)
      assert.isTrue(error.isRetryable)
      assert.include(error.message, "ECONNREFUSED")
      assert.notInclude(error.message, "re_closed_port")
    })
  )
})
