// A failure without an HTTP answer whose causes mix "never connected" with "dropped mid-request": SES may
// have received the message, so it is possibly sent and core does not send it again.
import { SESv2Client } from "@aws-sdk/client-sesv2"
import { assert, describe, layer } from "@effect/vitest"
import { Mailer, Mailroom, ObjectStore, Organizations, type ProviderError } from "@mailroom/core"
import { Effect } from "effect"
import { SesEmailProvider } from "../src/index.js"
import { Stub, StubLive } from "./stub.js"

/**
 * A client whose transport reports the way Node does after trying two addresses (an AggregateError,
 * `code` from the first): one refused the connection, the other took the request and reset it. The
 * reset is real (the stand-in reads the request and drops the connection); the refusal is added to it,
 * as no local peer makes one connection attempt both refused and reset.
 */
const clientWithMixedFailure = (endpoint: string) => {
  const client = new SESv2Client({
    region: "us-east-1",
    endpoint,
    credentials: { accessKeyId: "AKIDSTUBEXAMPLE00001", secretAccessKey: "stub/Secret+Key/0123456789abcdefXYZ" },
    maxAttempts: 1
  })
  const seen: Array<unknown> = []
  client.middlewareStack.add(
    (next) => async (args) => {
      try {
        return await next(args)
      } catch (reset) {
        seen.push(reset)
        const refused = Object.assign(new Error("connect ECONNREFUSED 192.0.2.10:443"), {
          code: "ECONNREFUSED",
          syscall: "connect"
        })
        throw Object.assign(new AggregateError([refused, reset]), { code: "ECONNREFUSED" })
      }
    },
    { step: "build", name: "mixedTransportFailure" }
  )
  return { client, seen }
}

describe("SES transport failures with mixed causes", () => {
  const principal = { orgId: "org_acme", slug: "acme" }
  const request = { from: "sender@acme.example", to: ["alice@example.com"], subject: "Hi", body: { text: "Hi" } }

  layer(StubLive, { timeout: 30_000, excludeTestServices: true })((it) => {
    it.effect("ECONNREFUSED mixed with ECONNRESET is Unavailable, possibly sent, and reaches SES once", () =>
      Effect.gen(function* () {
        const stub = yield* Stub
        stub.answer = () => "reset"
        const { client, seen } = clientWithMixedFailure(stub.url)
        const outcome = yield* Effect.flatMap(Mailer.Mailer, (mailer) => mailer.send(principal, request)).pipe(
          Effect.provide(
            Mailroom.layer({
              provider: SesEmailProvider.layer({ client }),
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
        client.destroy()
        // The stand-in's reset reached the client as the mid-request failure it is.
        assert.strictEqual((seen[0] as { code?: unknown }).code, "ECONNRESET")
        assert.strictEqual(
          stub.requests.length,
          1,
          "a failure that may have reached SES (ECONNREFUSED mixed with ECONNRESET) must not be sent again"
        )
        assert.strictEqual(outcome._tag, "ProviderError", String(outcome))
        const reason = (outcome as ProviderError.ProviderError).reason
        assert.strictEqual(reason._tag, "Unavailable")
        assert.isTrue(
          (reason as ProviderError.Unavailable).possiblySent,
          "a transport failure mixing a never-connected code with a mid-request one must be possiblySent"
        )
      })
    )
  })
})
