// Bad days: a wrong password, servers that greet and stall, and the one case where nobody knows whether
// the message went: the connection lost, or no reply, after the final `.` of DATA. Counted at the peer,
// and through core's Mailer, which must retry what was not sent and never what may have been.
import { createServer, type Server, type Socket } from "node:net"
import { inspect } from "node:util"
import { assert, describe, it } from "@effect/vitest"
import { Mailer, Mailroom, ObjectStore, Organizations, ProviderError } from "@mailroom/core"
import { outboundEmail } from "@mailroom/core/testing"
import { type SelfSignedCertificate, selfSignedCertificate, startAll } from "@mailroom/test-support"
import { Effect } from "effect"
import { afterAll, beforeAll, beforeEach } from "vitest"
import { SmtpEmailProvider } from "../src/index.js"
import * as SmtpPeer from "./support/SmtpPeer.js"

const message = outboundEmail()

const password = "s3cret-Pa55word"

/** A TCP server that accepts and then says `greeting` (or nothing) and never another word. */
const tarpit = async (greeting: string | undefined) => {
  const sockets = new Set<Socket>()
  const server: Server = createServer((socket) => {
    sockets.add(socket)
    socket.on("error", () => {})
    if (greeting !== undefined) socket.write(greeting)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  return {
    port: typeof address === "object" && address !== null ? address.port : 0,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      })
  }
}

let certificate: SelfSignedCertificate
let peer: SmtpPeer.Peer
let secured: SmtpPeer.Peer

beforeAll(async () => {
  certificate = await selfSignedCertificate()
  ;[peer, secured] = await startAll([
    { start: () => SmtpPeer.start({ hideSTARTTLS: true }), stop: (p) => p.close() },
    {
      start: () => SmtpPeer.start({ key: certificate.key, cert: certificate.cert, users: { mailer: password } }),
      stop: (p) => p.close()
    }
  ])
}, 30_000)
afterAll(async () => {
  await Promise.all([peer?.close(), secured?.close()])
  await certificate?.remove()
})
beforeEach(() => peer.reset())

const sendWith = (options: SmtpEmailProvider.ConfigOptions) =>
  Effect.scoped(Effect.flatMap(Effect.orDie(SmtpEmailProvider.make(options)), (provider) => provider.send(message)))

/** One message through core's Mailer (three attempts allowed) to the server at `port`: the outcome. */
const mailerTo = (port: number) =>
  Effect.flatMap(Mailer.Mailer, (mailer) =>
    mailer.send(
      { orgId: "org_acme", slug: "acme" },
      {
        from: "billing@acme.example",
        to: ["alice@example.com"],
        subject: "Your invoice",
        body: { text: "See attached." }
      }
    )
  ).pipe(
    Effect.provide(
      Mailroom.layer({
        provider: SmtpEmailProvider.layer({ host: "127.0.0.1", port, socketTimeout: "10 seconds" }),
        store: ObjectStore.layerMemory(),
        organizations: Organizations.layerStatic({
          serviceDomain: "mailroom.test",
          organizations: [{ id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"] }]
        }),
        mailer: { retry: { maxAttempts: 3, baseDelay: "5 millis" } }
      })
    ),
    Effect.result
  )

describe("bad days", () => {
  it.effect("a wrong password: a clear error naming the user and what to check, never the password", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        sendWith({
          host: "localhost",
          port: secured.port,
          auth: { user: "mailer", pass: "not-the-password" },
          tls: { ca: certificate.cert }
        })
      )
      assert.strictEqual(error.reason._tag, "Unknown")
      assert.isFalse(error.isRetryable)
      assert.include(error.message, 'refused the login of user "mailer" (535 5.7.8)')
      assert.include(error.message, "check auth.user and auth.pass")
      assert.notInclude(inspect(error, { depth: 10 }), "not-the-password")
      assert.strictEqual(secured.attempts(), 0)
    })
  )

  it.effect("a server that greets, then never answers EHLO: not sent, within socketTimeout", () =>
    Effect.gen(function* () {
      const server = yield* Effect.promise(() => tarpit("220 tarpit.example ESMTP\r\n"))
      const error = yield* Effect.flip(sendWith({ host: "127.0.0.1", port: server.port, socketTimeout: "300 millis" }))
      yield* Effect.promise(() => server.close())
      assert.strictEqual(error.reason._tag, "Unavailable")
      assert.isTrue(error.isRetryable)
      assert.include(error.message, "stopped answering (socketTimeout)")
      assert.include(error.message, "not sent")
    })
  )

  it.effect("a server that accepts the connection and never greets: not sent, within greetingTimeout", () =>
    Effect.gen(function* () {
      const server = yield* Effect.promise(() => tarpit(undefined))
      const error = yield* Effect.flip(
        sendWith({ host: "127.0.0.1", port: server.port, greetingTimeout: "300 millis" })
      )
      yield* Effect.promise(() => server.close())
      assert.strictEqual(error.reason._tag, "Unavailable")
      assert.include(error.message, "did not greet within greetingTimeout")
    })
  )

  it.effect("no reply to RCPT TO: not sent (nothing of the message went)", () =>
    Effect.gen(function* () {
      peer.script({ rcptTo: () => "stall" })
      const error = yield* Effect.flip(sendWith({ host: "127.0.0.1", port: peer.port, socketTimeout: "300 millis" }))
      assert.strictEqual(error.reason._tag, "Unavailable")
      assert.isTrue(error.isRetryable)
      assert.strictEqual(peer.attempts(), 0)
    })
  )

  it.effect("the connection lost after the final dot: possibly sent, never retried, received exactly once", () =>
    Effect.gen(function* () {
      peer.script({ data: "drop" })
      const error = yield* Effect.flip(sendWith({ host: "127.0.0.1", port: peer.port }))
      assert.strictEqual(error.reason._tag, "Unavailable")
      assert.isTrue(error.reason._tag === "Unavailable" && error.reason.possiblySent)
      assert.isFalse(error.isRetryable)
      assert.include(error.message, "may have been sent")
      assert.strictEqual(peer.received.length, 1)
    })
  )

  it.effect("no reply to the final dot within socketTimeout: possibly sent, never retried", () =>
    Effect.gen(function* () {
      peer.script({ data: "stall" })
      // Long enough that a busy machine answers every earlier command well within it.
      const error = yield* Effect.flip(sendWith({ host: "127.0.0.1", port: peer.port, socketTimeout: "2 seconds" }))
      assert.isTrue(error.reason._tag === "Unavailable" && error.reason.possiblySent)
      assert.isFalse(error.isRetryable)
      assert.include(error.message, "did not answer the end of the message in time")
      assert.strictEqual(peer.received.length, 1)
    })
  )
})

describe("through core's Mailer", () => {
  it.live("a drop after the final dot is not retried: one attempt, one message at the server, outcome unknown", () =>
    Effect.gen(function* () {
      peer.script({ data: "drop" })
      const outcome = yield* mailerTo(peer.port)
      assert.isTrue(outcome._tag === "Failure" && ProviderError.isProviderError(outcome.failure))
      if (outcome._tag === "Failure" && ProviderError.isProviderError(outcome.failure)) {
        assert.isTrue(outcome.failure.reason._tag === "Unavailable" && outcome.failure.reason.possiblySent)
      }
      assert.strictEqual(peer.attempts(), 1)
      assert.strictEqual(peer.received.length, 1)
    })
  )

  it.live("a 4xx before DATA is retried by core, and the message goes out once", () =>
    Effect.gen(function* () {
      let refused = 0
      peer.script({ rcptTo: () => (refused++ === 0 ? { code: 451, text: "4.3.0 Try again" } : undefined) })
      const outcome = yield* mailerTo(peer.port)
      assert.strictEqual(outcome._tag, "Success")
      assert.strictEqual(refused, 2)
      assert.strictEqual(peer.received.length, 1)
    })
  )
})
