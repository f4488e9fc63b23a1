// `verify`, what a readiness probe runs: connect, EHLO, STARTTLS and AUTH as configured, QUIT; no message.
// A wrong password and a refused connection fail as a send would; an interrupted check closes its connection.
import { createServer, type Socket } from "node:net"
import { assert, describe, it } from "@effect/vitest"
import { freePort, type SelfSignedCertificate, selfSignedCertificate } from "@mailroom/test-support"
import { Effect } from "effect"
import { afterAll, beforeAll } from "vitest"
import { SmtpEmailProvider } from "../src/index.js"
import * as SmtpPeer from "./support/SmtpPeer.js"

let certificate: SelfSignedCertificate
let peer: SmtpPeer.Peer

beforeAll(async () => {
  certificate = await selfSignedCertificate()
  peer = await SmtpPeer.start({ key: certificate.key, cert: certificate.cert, users: { mailer: "right" } })
}, 30_000)
afterAll(async () => {
  await peer?.close()
  await certificate?.remove()
})

const options = (pass: string): SmtpEmailProvider.ConnectionOptions => ({
  host: "localhost",
  port: peer.port,
  auth: { user: "mailer", pass },
  tls: { ca: certificate.cert }
})

describe("verify", () => {
  it.effect("connects, upgrades, logs in and quits, sending nothing", () =>
    Effect.gen(function* () {
      const before = peer.connections()
      yield* SmtpEmailProvider.verify(options("right"))
      assert.strictEqual(peer.connections(), before + 1)
      assert.strictEqual(peer.attempts(), 0)
    })
  )

  it.effect("a wrong password fails as a send would, without the password", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(SmtpEmailProvider.verify(options("wrong-pass-123")))
      assert.strictEqual(error._tag, "ProviderError")
      assert.include(error.message, 'refused the login of user "mailer"')
      assert.notInclude(error.message, "wrong-pass-123")
    })
  )

  it.effect("a refused connection is Unavailable", () =>
    Effect.gen(function* () {
      const port = yield* Effect.promise(() => freePort())
      const error = yield* Effect.flip(SmtpEmailProvider.verify({ host: "127.0.0.1", port }))
      assert.isTrue(error._tag === "ProviderError" && error.reason._tag === "Unavailable")
    })
  )

  it.live("interrupted (a probe's time bound), it closes its connection", () =>
    Effect.gen(function* () {
      let closedNow = () => {}
      const closed = new Promise<void>((resolve) => {
        closedNow = resolve
      })
      const server = createServer((socket: Socket) => {
        socket.on("error", () => {})
        // Read (and drop) what comes, so that the client's FIN is seen and the socket closes.
        socket.resume()
        socket.once("close", () => closedNow())
        socket.write("220 slow.example ESMTP\r\n")
      })
      yield* Effect.promise(() => new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve)))
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      const result = yield* SmtpEmailProvider.verify({ host: "127.0.0.1", port }).pipe(
        Effect.timeoutOption("200 millis")
      )
      assert.strictEqual(result._tag, "None")
      // Resolves only when the client closed the socket: well before its 60 s socketTimeout.
      yield* Effect.promise(() => closed)
      yield* Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
    })
  )
})
