// Core's errors share one scaffolding (internal/reasonError.ts): the message and isRetryable of the
// reason, and a guard that knows an error from any copy of the package, not only from this one.
import { assert, describe, it } from "@effect/vitest"
import { Data, Duration } from "effect"
import { EventSource, MailEvents, MailroomError, ObjectStore, ProviderError } from "../src/index.js"

/** An error as another copy of @mailroom/core would build it: another class, the same marker. */
const fromAnotherCopy = (tag: string) =>
  Object.assign(new (class extends Data.TaggedError(tag) {})(), { [Symbol.for(`@mailroom/core/${tag}`)]: true })

describe("core's errors", () => {
  it("take their message and isRetryable from their reason", () => {
    const throttled = new ProviderError.ProviderError({
      provider: "ses",
      reason: new ProviderError.RateLimited({ message: "slow down", retryAfter: Duration.seconds(1) })
    })
    assert.strictEqual(throttled.message, "slow down")
    assert.isTrue(throttled.isRetryable)
    const store = ObjectStore.failure("s3", "AccessDenied", "403")
    assert.strictEqual(store.message, "403")
    assert.isFalse(store.isRetryable)
    const source = EventSource.refusal("ses", "Unavailable", "no certificate")
    assert.deepStrictEqual(
      [source.message, source.isRetryable, source.reason._tag],
      ["no certificate", true, "Unavailable"]
    )
  })

  it("a provider's Unavailable is retried only when the message was certainly not sent", () => {
    const unsent = new ProviderError.Unavailable({ message: "refused", possiblySent: false })
    const maybe = new ProviderError.Unavailable({ message: "reset", possiblySent: true })
    assert.isTrue(unsent.isRetryable)
    assert.isFalse(maybe.isRetryable)
    assert.isFalse(new ProviderError.ProviderError({ provider: "smtp", reason: maybe }).isRetryable)
  })

  it("each guard knows its errors from any copy of the package, and nothing else", () => {
    const guards = [
      ["ProviderError", ProviderError.isProviderError],
      ["ObjectStoreError", ObjectStore.isObjectStoreError],
      ["EventSourceError", EventSource.isEventSourceError],
      ["MailEventsError", MailEvents.isMailEventsError],
      ["MailroomError", MailroomError.isMailroomError]
    ] as const
    for (const [tag, guard] of guards) {
      assert.isTrue(guard(fromAnotherCopy(tag)), tag)
      for (const [other] of guards) if (other !== tag) assert.isFalse(guard(fromAnotherCopy(other)), `${tag} ${other}`)
      assert.isFalse(guard(new Error(tag)))
      assert.isFalse(guard(null))
    }
    assert.isTrue(MailEvents.isMailEventsError(new MailEvents.MailEventsError({ message: "queue down" })))
    assert.isTrue(MailroomError.isNotFound(new MailroomError.NotFound({ message: "none" })))
    assert.isFalse(MailroomError.isNotFound(new MailroomError.Conflict({ message: "twice" })))
  })
})
