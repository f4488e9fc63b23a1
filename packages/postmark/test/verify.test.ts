// `verify`, which readiness probes and the server's start-up call: one `GET /server` with the token to
// the stand-in, failing only for what would fail a send too (a refused token, no Postmark to reach).
import { assert, it } from "@effect/vitest"
import { freePort } from "@mailroom/test-support"
import { Effect, Redacted } from "effect"
import { PostmarkEmailProvider } from "../src/index.js"
import * as StandIn from "./PostmarkStandIn.js"

const verifyWith = (host: string, token: string) =>
  Effect.flatMap(
    Effect.orDie(PostmarkEmailProvider.make({ serverToken: Redacted.make(token), requestHost: host, useHttps: false })),
    (provider) => provider.verify ?? Effect.die("the Postmark provider has no verify")
  )

it.effect("asks GET /server with the server token, and succeeds when Postmark answers", () =>
  Effect.gen(function* () {
    const standIn = yield* StandIn.make()
    yield* verifyWith(standIn.host, standIn.token)
    const [asked] = standIn.requests
    assert.strictEqual(`${asked?.method} ${asked?.path}`, "GET /server")
    assert.strictEqual(asked?.headers["x-postmark-server-token"], standIn.token)
    assert.deepStrictEqual(standIn.accepted, [], "nothing is sent")
  }).pipe(Effect.scoped)
)

it.effect("a token Postmark refuses fails it, never showing the token", () =>
  Effect.gen(function* () {
    const standIn = yield* StandIn.make()
    const error = yield* Effect.flip(verifyWith(standIn.host, "pm-wrong-token-0123"))
    assert.strictEqual(error.reason._tag, "Unknown")
    assert.strictEqual(error.message, "the Postmark server token was refused")
    assert.notInclude(JSON.stringify(error.reason), "pm-wrong-token-0123")
  }).pipe(Effect.scoped)
)

it.effect("a closed port is Unavailable, naming the host and the refused connection", () =>
  Effect.gen(function* () {
    const port = yield* Effect.promise(freePort)
    const error = yield* Effect.flip(verifyWith(`127.0.0.1:${port}`, "pm-token"))
    assert.strictEqual(error.reason._tag, "Unavailable")
    assert.strictEqual(error.message, `Postmark at 127.0.0.1:${port} could not be reached (ECONNREFUSED)`)
  })
)
