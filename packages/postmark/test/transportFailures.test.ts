// A failure without an HTTP answer whose causes mix "never connected" with "dropped mid-request": Postmark
// may have received the message, so it is possibly sent and core does not send it again.
import { assert, describe, it } from "@effect/vitest"
import { Mailer, Mailroom, ObjectStore, Organizations, type ProviderError } from "@mailroom/core"
import { Effect } from "effect"
import { vi } from "vitest"
import { PostmarkEmailProvider } from "../src/index.js"
import * as StandIn from "./PostmarkStandIn.js"

/**
 * The global `fetch`, reporting a failure the way Node does after trying two addresses (an
 * AggregateError, `code` from the first): one refused the connection, the other took the request and
 * reset it. The drop is real (the stand-in reads the request and closes the connection); the refusal
 * is added to it, as no local peer makes one connection attempt both refused and reset.
 */
const fetchWithMixedFailure = (realFetch: typeof fetch): typeof fetch => {
  return (input, init) =>
    realFetch(input, init).catch((failure: unknown) => {
      const refused = Object.assign(new Error("connect ECONNREFUSED 192.0.2.10:443"), {
        code: "ECONNREFUSED",
        syscall: "connect"
      })
      const reset = Object.assign(new Error("read ECONNRESET"), {
        code: "ECONNRESET",
        syscall: "read",
        cause: (failure as Error).cause
      })
      throw new TypeError("fetch failed", {
        cause: Object.assign(new AggregateError([refused, reset]), { code: "ECONNREFUSED" })
      })
    })
}

describe("Postmark transport failures with mixed causes", () => {
  const principal = { orgId: "org_acme", slug: "acme" }
  const request = { from: "billing@acme.example", to: ["alice@example.com"], subject: "Hi", body: { text: "Hi" } }

  it.live("ECONNREFUSED mixed with ECONNRESET is Unavailable, possibly sent, and reaches Postmark once", () =>
    Effect.gen(function* () {
      const standIn = yield* StandIn.make()
      for (let i = 0; i < 3; i++) standIn.failNext("drop")
      yield* Effect.acquireRelease(
        Effect.sync(() => vi.stubGlobal("fetch", fetchWithMixedFailure(globalThis.fetch))),
        () => Effect.sync(() => vi.unstubAllGlobals())
      )
      const outcome = yield* Effect.flatMap(Mailer.Mailer, (mailer) => mailer.send(principal, request)).pipe(
        Effect.provide(
          Mailroom.layer({
            provider: PostmarkEmailProvider.layer({
              serverToken: standIn.token,
              requestHost: standIn.host,
              useHttps: false,
              timeout: "5 seconds"
            }),
            store: ObjectStore.layerMemory(),
            organizations: Organizations.layerStatic({
              serviceDomain: "mailroom.test",
              organizations: [{ id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"] }]
            }),
            mailer: { retry: { maxAttempts: 3, baseDelay: "5 millis" } }
          })
        ),
        Effect.flip
      )
      assert.strictEqual(
        standIn.requests.length,
        1,
        "a failure that may have reached Postmark (ECONNREFUSED mixed with ECONNRESET) must not be sent again"
      )
      assert.strictEqual(outcome._tag, "ProviderError", String(outcome))
      const reason = (outcome as ProviderError.ProviderError).reason
      assert.strictEqual(reason._tag, "Unavailable")
      assert.isTrue(
        (reason as ProviderError.Unavailable).possiblySent,
        "a transport failure mixing a never-connected code with a mid-request one must be possiblySent"
      )
    }).pipe(Effect.scoped)
  )
})
