// Each way Postmark refuses or fails, produced by the stand-in as Postmark answers it and sent through the
// real `postmark` client: the reason core receives, whether it is retried, and that no token leaks.
import { createServer } from "node:net"
import { inspect } from "node:util"
import { assert, describe, it } from "@effect/vitest"
import type { EmailProvider, ProviderError } from "@mailroom/core"
import { outboundEmail } from "@mailroom/core/testing"
import { networkFaultCases } from "@mailroom/test-support"
import { type Duration, Effect, Redacted } from "effect"
import { PostmarkEmailProvider } from "../src/index.js"
import * as StandIn from "./PostmarkStandIn.js"

const message = (parts: Partial<EmailProvider.OutboundEmail> = {}) =>
  outboundEmail({ from: { address: "billing@acme.example", name: "Acme Billing" }, ...parts })

interface Setup {
  readonly standIn?: StandIn.StandInOptions
  readonly fault?: StandIn.Fault
  /** The token the provider sends; default the one the stand-in accepts. */
  readonly token?: string
  readonly timeout?: Duration.Input
}

/** Sends `email` through a fresh stand-in and returns the failure, checking no token shows anywhere in it. */
const failure = (setup: Setup, email: EmailProvider.OutboundEmail = message()) =>
  Effect.scoped(
    Effect.gen(function* () {
      const standIn = yield* StandIn.make(setup.standIn)
      if (setup.fault !== undefined) standIn.failNext(setup.fault)
      const token = setup.token ?? standIn.token
      const provider = yield* PostmarkEmailProvider.make({
        serverToken: Redacted.make(token),
        requestHost: standIn.host,
        useHttps: false,
        timeout: setup.timeout ?? "5 seconds"
      })
      const error = yield* Effect.flip(provider.send(email))
      assertNoSecret(error, [token, standIn.token])
      assert.strictEqual(error.provider, "postmark")
      return { error, standIn }
    })
  )

const assertNoSecret = (error: ProviderError.ProviderError, secrets: ReadonlyArray<string>) => {
  const shown = [error.message, String(error), JSON.stringify(error), inspect(error, { depth: 10 })]
  for (const secret of secrets) for (const text of shown) assert.notInclude(text, secret)
}

/** The `postmark` client error kept as cause, with the HTTP status and ErrorCode it read. */
const causeOf = (error: ProviderError.ProviderError) =>
  error.cause as { name: string; statusCode: number; code: number }

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

describe("PostmarkEmailProvider errors", () => {
  it.effect("ErrorCode 400, a From that is no sender signature: SenderNotVerified", () =>
    Effect.gen(function* () {
      const { error } = yield* failure({}, message({ from: { address: "billing@globex.example" } }))
      assert.strictEqual(error.reason._tag, "SenderNotVerified")
      assert.strictEqual((error.reason as ProviderError.SenderNotVerified).sender, "billing@globex.example")
      assert.isFalse(error.isRetryable)
      assert.deepInclude(causeOf(error), { name: "ApiInputError", statusCode: 422, code: 400 })
    })
  )

  it.effect("ErrorCode 401, a sender signature not confirmed: SenderNotVerified", () =>
    Effect.gen(function* () {
      const { error } = yield* failure({ standIn: { unconfirmedSenders: ["billing@acme.example"] } })
      assert.strictEqual(error.reason._tag, "SenderNotVerified")
      assert.include(error.message, "not confirmed")
      assert.isFalse(error.isRetryable)
      assert.strictEqual(causeOf(error).code, 401)
    })
  )

  it.effect("ErrorCode 412, an account pending approval: RecipientNotVerified with the outside recipients", () =>
    Effect.gen(function* () {
      const { error } = yield* failure(
        { standIn: { account: "pending" } },
        message({ to: ["team@acme.example"], cc: ["alice@example.com"], bcc: ["bob@example.org"] })
      )
      assert.strictEqual(error.reason._tag, "RecipientNotVerified")
      assert.deepStrictEqual((error.reason as ProviderError.RecipientNotVerified).recipients, [
        "alice@example.com",
        "bob@example.org"
      ])
      assert.isFalse(error.isRetryable)
      assert.strictEqual(causeOf(error).code, 412)
    })
  )

  it.effect("ErrorCode 406, inactive recipients: RecipientSuppressed naming them, nothing sent", () =>
    Effect.gen(function* () {
      const { error, standIn } = yield* failure(
        { standIn: { inactiveRecipients: ["bounced@example.com", "complained@example.org"] } },
        message({ to: ["alice@example.com", "bounced@example.com"], bcc: ["complained@example.org"] })
      )
      assert.strictEqual(error.reason._tag, "RecipientSuppressed")
      assert.deepStrictEqual((error.reason as ProviderError.RecipientSuppressed).recipients, [
        "bounced@example.com",
        "complained@example.org"
      ])
      assert.isFalse(error.isRetryable)
      assert.strictEqual(causeOf(error).name, "InactiveRecipientsError")
      assert.strictEqual(standIn.accepted.length, 0)
    })
  )

  it.effect("ErrorCode 413, an account not approved to send: SendingPaused, permanent", () =>
    Effect.gen(function* () {
      const { error } = yield* failure({ standIn: { account: "not-approved" } })
      assert.strictEqual(error.reason._tag, "SendingPaused")
      assert.isTrue((error.reason as ProviderError.SendingPaused).permanent)
      assert.isFalse(error.isRetryable)
      assert.strictEqual(causeOf(error).code, 413)
    })
  )

  it.effect("ErrorCode 405, not allowed to send: SendingPaused, permanent", () =>
    Effect.gen(function* () {
      const { error } = yield* failure({
        fault: { status: 422, body: { ErrorCode: 405, Message: "Not allowed to send" } }
      })
      assert.strictEqual(error.reason._tag, "SendingPaused")
      assert.isTrue((error.reason as ProviderError.SendingPaused).permanent)
      assert.isFalse(error.isRetryable)
    })
  )

  it.effect("ErrorCode 300, an invalid email request: InvalidRequest with Postmark's explanation", () =>
    Effect.gen(function* () {
      const { error } = yield* failure({}, message({ to: ["not-an-address"] }))
      assert.strictEqual(error.reason._tag, "InvalidRequest")
      assert.include(error.message, "Invalid 'To' address: 'not-an-address'.")
      assert.isFalse(error.isRetryable)
      assert.deepInclude(causeOf(error), { name: "InvalidEmailRequestError", code: 300 })
    })
  )

  it.effect("ErrorCode 409, JSON required: InvalidRequest", () =>
    Effect.gen(function* () {
      const { error } = yield* failure({ fault: { status: 422, body: { ErrorCode: 409, Message: "JSON required" } } })
      assert.strictEqual(error.reason._tag, "InvalidRequest")
      assert.isFalse(error.isRetryable)
    })
  )

  it.effect("ErrorCode 411, a forbidden attachment type: InvalidRequest naming the attachment", () =>
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
      assert.strictEqual(error.reason._tag, "InvalidRequest")
      assert.include(error.message, '"setup.exe"')
      assert.notInclude(error.message, "invoice.pdf")
      assert.strictEqual(causeOf(error).code, 411)
      assert.strictEqual(standIn.accepted.length, 0)
    })
  )

  it.effect("HTTP 401, a refused server token: an internal error that names no token", () =>
    Effect.gen(function* () {
      const { error } = yield* failure({ token: "pm-wrong-token-5f1c2a" })
      assert.strictEqual(error.reason._tag, "Unknown")
      assert.strictEqual(error.message, "the Postmark server token was refused")
      assert.isFalse(error.isRetryable)
      assert.deepInclude(causeOf(error), { name: "InvalidAPIKeyError", statusCode: 401, code: 10 })
    })
  )

  it.effect("HTTP 429: RateLimited, retried", () =>
    Effect.gen(function* () {
      const { error } = yield* failure({
        fault: { status: 429, body: { ErrorCode: 429, Message: "Rate limit exceeded" } }
      })
      assert.strictEqual(error.reason._tag, "RateLimited")
      assert.isTrue(error.isRetryable)
      assert.strictEqual(causeOf(error).name, "RateLimitExceededError")
    })
  )

  it.effect("HTTP 413, a request over 10 MB: MessageTooLarge", () =>
    Effect.gen(function* () {
      const content = new Uint8Array(8 * 1024 * 1024)
      const { error } = yield* failure(
        {},
        message({ attachments: [{ filename: "huge.pdf", contentType: "application/pdf", content }] })
      )
      assert.strictEqual(error.reason._tag, "MessageTooLarge")
      assert.isFalse(error.isRetryable)
      assert.strictEqual(causeOf(error).statusCode, 413)
    })
  )

  it.effect("HTTP 503, Postmark offline: Unavailable, not sent, retried", () =>
    Effect.gen(function* () {
      const { error } = yield* failure({
        fault: { status: 503, body: { ErrorCode: 100, Message: "The Postmark API is offline for maintenance." } }
      })
      assert.strictEqual(error.reason._tag, "Unavailable")
      assert.isFalse((error.reason as ProviderError.Unavailable).possiblySent)
      assert.isTrue(error.isRetryable)
      assert.strictEqual(causeOf(error).name, "ServiceUnavailablerError")
    })
  )

  it.effect("HTTP 500: Unavailable, possibly sent, not retried", () =>
    Effect.gen(function* () {
      const { error } = yield* failure({
        fault: {
          status: 500,
          body: { ErrorCode: 101, Message: "You encountered an error that shouldn't have occurred." }
        }
      })
      assert.strictEqual(error.reason._tag, "Unavailable")
      assert.isTrue((error.reason as ProviderError.Unavailable).possiblySent)
      assert.isFalse(error.isRetryable)
      assert.strictEqual(causeOf(error).name, "InternalServerError")
    })
  )

  it.effect("a connection dropped after the request went out: Unavailable, possibly sent", () =>
    Effect.gen(function* () {
      const { error, standIn } = yield* failure({ fault: "drop" })
      assert.strictEqual(error.reason._tag, "Unavailable")
      assert.isTrue((error.reason as ProviderError.Unavailable).possiblySent)
      assert.isFalse(error.isRetryable)
      // Postmark did receive the whole request: retrying could send twice.
      assert.include(standIn.requests[0]?.body ?? "", '"Subject":"Your invoice"')
    })
  )

  it.effect("a 200 that carries an ErrorCode instead of a MessageID is read as that refusal", () =>
    Effect.gen(function* () {
      const { error } = yield* failure({
        fault: {
          status: 200,
          body: {
            ErrorCode: 406,
            Message:
              "You tried to send to recipient(s) that have been marked as inactive. Found inactive addresses: alice@example.com. Inactive recipients are ones that have generated a hard bounce, a spam complaint, or a manual suppression."
          }
        }
      })
      assert.strictEqual(error.reason._tag, "RecipientSuppressed")
      assert.deepStrictEqual((error.reason as ProviderError.RecipientSuppressed).recipients, ["alice@example.com"])
      const { error: bare } = yield* failure({ fault: { status: 200, body: { ErrorCode: 0, Message: "OK" } } })
      assert.strictEqual(bare.reason._tag, "Unknown")
      assert.include(bare.message, "without a MessageID")
    })
  )

  it.effect("no answer within the timeout: Unavailable, possibly sent", () =>
    Effect.gen(function* () {
      const { error, standIn } = yield* failure({ fault: "hang", timeout: "300 millis" })
      assert.strictEqual(error.reason._tag, "Unavailable")
      assert.isTrue((error.reason as ProviderError.Unavailable).possiblySent)
      assert.isFalse(error.isRetryable)
      assert.strictEqual(standIn.requests.length, 1)
    })
  )

  it.effect("a refused connection: Unavailable, not sent, retried", () =>
    Effect.gen(function* () {
      const port = yield* closedPort()
      const token = "pm-server-token-closed-port"
      const provider = yield* PostmarkEmailProvider.make({
        serverToken: token,
        requestHost: `127.0.0.1:${port}`,
        useHttps: false,
        timeout: "5 seconds"
      })
      const error = yield* Effect.flip(provider.send(message()))
      assertNoSecret(error, [token])
      assert.strictEqual(error.reason._tag, "Unavailable")
      assert.isFalse((error.reason as ProviderError.Unavailable).possiblySent)
      assert.isTrue(error.isRetryable)
      assert.include(error.message, "ECONNREFUSED")
    })
  )

  // The same failures, with the same verdicts and words, as packages/ses/test/errors.test.ts.
  for (const fault of networkFaultCases) {
    it.effect(
      `${fault.name}: Unavailable, ${fault.possiblySent ? "possibly sent, not retried" : "not sent, retried"}`,
      () =>
        Effect.gen(function* () {
          const target = yield* Effect.acquireRelease(Effect.promise(fault.start), (t) => Effect.promise(t.close))
          const token = "pm-server-token-network-fault"
          const provider = yield* PostmarkEmailProvider.make({
            serverToken: token,
            requestHost: target.host,
            useHttps: target.scheme === "https",
            timeout: "5 seconds"
          })
          const error = yield* Effect.flip(provider.send(message()))
          assertNoSecret(error, [token])
          assert.strictEqual(error.reason._tag, "Unavailable")
          assert.strictEqual((error.reason as ProviderError.Unavailable).possiblySent, fault.possiblySent)
          assert.strictEqual(error.isRetryable, !fault.possiblySent)
          assert.match(error.message, fault.message("Postmark"))
        }).pipe(Effect.scoped)
    )
  }
})
