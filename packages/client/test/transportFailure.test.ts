// The client reads a network failure with the same table as core's adapters: a copy of core's module
// (the client has no runtime dependency), held equal here, and the verdicts on real failures.
import { readFile } from "node:fs/promises"
import { networkFaultCases } from "@mailroom/test-support"
import { assert, describe, it } from "vitest"
import { MailroomClient, MailroomConnectionError } from "../src/index.js"

describe("the client's transport-failure table", () => {
  it("is core's, byte for byte", async () => {
    const read = (path: string) => readFile(new URL(path, import.meta.url), "utf8")
    const core = await read("../../core/src/internal/transportFailure.ts")
    const client = await read("../src/internal/transportFailure.ts")
    assert.strictEqual(client, core, "copy packages/core/src/internal/transportFailure.ts over the client's")
  })

  for (const fault of networkFaultCases) {
    const verdict = fault.possiblySent ? "Network, not retried" : "CouldNotConnect, retried"
    it(`${fault.name}: ${verdict}`, async () => {
      const target = await fault.start()
      let attempts = 0
      const client = MailroomClient.make({
        baseUrl: `${target.scheme}://${target.host}`,
        apiKey: "mr_test_acme",
        retry: { attempts: 3, initialDelay: 1, maxDelay: 5 },
        fetch: (input, init) => {
          attempts += 1
          return fetch(input, init)
        }
      })
      try {
        const error = await client.emails
          .send({ from: "hello@acme.example", to: ["alice@example.com"], subject: "Hi", body: { text: "Hi" } })
          .then(
            () => assert.fail("the send was answered"),
            (e: unknown) => e
          )
        assert.isTrue(MailroomConnectionError.isInstance(error))
        const failure = error as MailroomConnectionError
        assert.strictEqual(failure.reason, fault.possiblySent ? "Network" : "CouldNotConnect")
        assert.strictEqual(failure.isRetryable, !fault.possiblySent)
        assert.strictEqual(attempts, fault.possiblySent ? 1 : 3)
      } finally {
        await target.close()
      }
    })
  }
})
