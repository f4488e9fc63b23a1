// The error classes as a caller tests them: by status class, through the base class, and with
// `isInstance` across two copies of the package, where `instanceof` fails.
import { assert, describe, it } from "vitest"
import {
  ConflictError,
  MailroomApiError,
  MailroomConnectionError,
  NotFoundError,
  RateLimitError,
  ServiceUnavailableError,
  ValidationError
} from "../src/index.js"
import { fromDetails } from "../src/MailroomApiError.js"

const details = (status: number, messages: ReadonlyArray<string>) => ({
  status,
  messages,
  method: "POST",
  url: "http://mail.example/emails?key=secret"
})

describe("error classes", () => {
  it("isInstance tells the classes apart and every one is a MailroomApiError", () => {
    const notFound = new NotFoundError(details(404, ["attachment not found"]))
    assert.isTrue(NotFoundError.isInstance(notFound))
    assert.isTrue(MailroomApiError.isInstance(notFound))
    assert.isFalse(ConflictError.isInstance(notFound))
    assert.isFalse(MailroomConnectionError.isInstance(notFound))
    assert.isFalse(MailroomApiError.isInstance(new Error("x")))
    assert.isFalse(MailroomApiError.isInstance(null))
    assert.strictEqual(notFound.name, "NotFoundError")
  })

  it("isInstance holds for an error made by another copy of the package, where instanceof does not", async () => {
    // The query makes the module load a second time, as a second installed copy would.
    // @ts-expect-error TypeScript does not resolve Vite's query suffix; Vite does.
    const copy = (await import("../src/MailroomApiError.ts?copy")) as typeof import("../src/MailroomApiError.js")
    const foreign = new copy.RateLimitError({ ...details(429, ["slow down"]), retryAfter: 3 })
    assert.notInstanceOf(foreign, RateLimitError)
    assert.isTrue(RateLimitError.isInstance(foreign))
    assert.isTrue(MailroomApiError.isInstance(foreign))
    assert.isFalse(ValidationError.isInstance(foreign))
  })

  it("the message names the operation and the server's words, never the query string", () => {
    const error = new ValidationError(
      details(400, ["to: must contain at least 1 recipient", "subject: must not be empty"])
    )
    assert.strictEqual(
      error.message,
      "POST /emails answered 400: to: must contain at least 1 recipient; subject: must not be empty"
    )
    assert.deepStrictEqual(error.errors, error.messages)
  })

  it("only 429 and a 503 that sent nothing are retryable", () => {
    assert.isTrue(new RateLimitError(details(429, [])).isRetryable)
    assert.isTrue(new ServiceUnavailableError(details(503, ["sending is paused"])).isRetryable)
    const maybeSent = "it may have been sent, so check before sending it again"
    assert.isFalse(
      new ServiceUnavailableError({
        ...details(503, [maybeSent]),
        body: { error: maybeSent, may_have_been_sent: true }
      }).isRetryable
    )
    assert.isFalse(new ConflictError(details(409, [])).isRetryable)
    assert.isFalse(new MailroomApiError(details(502, [])).isRetryable)
  })

  it("a 503's may_have_been_sent field alone decides, whatever its wording", () => {
    const answer = (mayHaveBeenSent: boolean, error: string) =>
      new ServiceUnavailableError({ ...details(503, [error]), body: { error, may_have_been_sent: mayHaveBeenSent } })
    const cut = answer(true, "the server shut down while the provider had not answered")
    assert.isTrue(cut.mayHaveBeenSent)
    assert.isFalse(cut.isRetryable)
    const paused = answer(false, "sending is paused; a message that may have been sent earlier is unaffected")
    assert.isFalse(paused.mayHaveBeenSent)
    assert.isTrue(paused.isRetryable)
    // Words are for people: without the field, nothing says the message may have gone out.
    const worded = new ServiceUnavailableError(details(503, ["the message may have been sent"]))
    assert.isFalse(worded.mayHaveBeenSent)
  })

  it("each status has its class, name and marker; another status is a plain MailroomApiError", () => {
    const classes = [
      [400, ValidationError],
      [409, ConflictError],
      [404, NotFoundError],
      [429, RateLimitError],
      [503, ServiceUnavailableError]
    ] as const
    for (const [status, Class] of classes) {
      const error = fromDetails(details(status, []))
      assert.instanceOf(error, Class)
      assert.strictEqual(error.name, Class.name)
      for (const [, Other] of classes) assert.strictEqual(Other.isInstance(error), Other === Class, `${status}`)
    }
    const other = fromDetails(details(502, []))
    assert.strictEqual(other.constructor, MailroomApiError)
    assert.strictEqual(other.name, "MailroomApiError")
  })
})
