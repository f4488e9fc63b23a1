// TLS as a relay asks for it: STARTTLS and implicit TLS with a certificate made for the test (on
// smtp-server and on aiosmtpd), AUTH only over TLS, and the clear refusals when TLS cannot be had.
import { inspect } from "node:util"
import { assert, describe, it } from "@effect/vitest"
import { outboundEmail } from "@mailroom/core/testing"
import { type SelfSignedCertificate, selfSignedCertificate, startAll } from "@mailroom/test-support"
import { Effect, Redacted } from "effect"
import { afterAll, beforeAll } from "vitest"
import { SmtpEmailProvider } from "../src/index.js"
import * as Aiosmtpd from "./support/Aiosmtpd.js"
import { parseReceived } from "./support/received.js"
import * as SmtpPeer from "./support/SmtpPeer.js"

const message = (subject: string) => outboundEmail({ subject, text: "Over TLS." })

const password = "correct horse battery staple"

let certificate: SelfSignedCertificate
let starttls: SmtpPeer.Peer
let implicit: SmtpPeer.Peer
let plain: SmtpPeer.Peer
let python: Aiosmtpd.Aiosmtpd
let pythonPlain: Aiosmtpd.Aiosmtpd

beforeAll(async () => {
  certificate = await selfSignedCertificate()
  const { key, cert } = certificate
  ;[starttls, implicit, plain, python, pythonPlain] = await startAll([
    { start: () => SmtpPeer.start({ key, cert, users: { mailer: password } }), stop: (p) => p.close() },
    { start: () => SmtpPeer.start({ key, cert, secure: true, users: { mailer: password } }), stop: (p) => p.close() },
    { start: () => SmtpPeer.start({ hideSTARTTLS: true, refuseSTARTTLS: true }), stop: (p) => p.close() },
    {
      start: () => Aiosmtpd.start({ starttls: { cert: certificate.certFile, key: certificate.keyFile } }),
      stop: (p) => p.close()
    },
    { start: () => Aiosmtpd.start(), stop: (p) => p.close() }
  ])
}, 60_000)

afterAll(async () => {
  await Promise.all([starttls?.close(), implicit?.close(), plain?.close(), python?.close(), pythonPlain?.close()])
  await certificate?.remove()
})

/** Sends one message through a provider made for this test, closed after it. */
const sendWith = (options: SmtpEmailProvider.ConfigOptions, subject: string) =>
  Effect.scoped(
    Effect.flatMap(Effect.orDie(SmtpEmailProvider.make(options)), (provider) => provider.send(message(subject)))
  )

describe("TLS", () => {
  it.effect("STARTTLS with the server's CA, then AUTH: the message arrives encrypted and logged in", () =>
    Effect.gen(function* () {
      const { messageId } = yield* sendWith(
        {
          host: "localhost",
          port: starttls.port,
          auth: { user: "mailer", pass: Redacted.make(password) },
          tls: { ca: certificate.cert }
        },
        "starttls"
      )
      const received = yield* Effect.promise(() => starttls.byMessageId(messageId))
      assert.isTrue(received.secure)
      assert.strictEqual(received.user, "mailer")
    })
  )

  it.effect("AUTH LOGIN as well as PLAIN", () =>
    Effect.gen(function* () {
      const { messageId } = yield* sendWith(
        {
          host: "localhost",
          port: starttls.port,
          auth: { user: "mailer", pass: password, method: "LOGIN" },
          tls: { ca: certificate.cert }
        },
        "login"
      )
      assert.strictEqual((yield* Effect.promise(() => starttls.byMessageId(messageId))).user, "mailer")
    })
  )

  it.effect("implicit TLS (secure: true), as on port 465", () =>
    Effect.gen(function* () {
      const { messageId } = yield* sendWith(
        {
          host: "localhost",
          port: implicit.port,
          secure: true,
          auth: { user: "mailer", pass: password },
          tls: { ca: certificate.cert }
        },
        "implicit"
      )
      const received = yield* Effect.promise(() => implicit.byMessageId(messageId))
      assert.isTrue(received.secure)
      assert.strictEqual((yield* Effect.promise(() => parseReceived(received))).subject, "implicit")
    })
  )

  it.effect("STARTTLS with aiosmtpd, an implementation that shares no code with nodemailer", () =>
    Effect.gen(function* () {
      const { messageId } = yield* sendWith(
        { host: "localhost", port: python.port, requireTLS: true, tls: { ca: certificate.cert } },
        "python starttls"
      )
      const parsed = yield* Effect.promise(async () => parseReceived(await python.byMessageId(messageId)))
      assert.strictEqual(parsed.subject, "python starttls")
    })
  )

  it.effect("TLS required but not offered: a clear error, before the password or the message goes out", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        // With auth, requireTLS is the default: the password must not cross in clear text.
        sendWith({ host: "127.0.0.1", port: plain.port, auth: { user: "mailer", pass: password } }, "clear")
      )
      assert.strictEqual(error.reason._tag, "Unknown")
      assert.isFalse(error.isRetryable)
      assert.include(error.message, "does not offer STARTTLS")
      assert.include(error.message, "requireTLS")
      assert.notInclude(inspect(error, { depth: 10 }), password)
      assert.strictEqual(plain.attempts(), 0)
    })
  )

  it.effect("TLS required but not offered, by aiosmtpd: the same clear error", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        sendWith({ host: "127.0.0.1", port: pythonPlain.port, requireTLS: true }, "python clear")
      )
      assert.strictEqual(error.reason._tag, "Unknown")
      assert.include(error.message, "does not offer STARTTLS")
      assert.deepStrictEqual(yield* Effect.promise(() => pythonPlain.received()), [])
    })
  )

  it.effect("a certificate the client does not trust: not sent, and the message says why", () =>
    Effect.gen(function* () {
      const before = starttls.attempts()
      const error = yield* Effect.flip(
        sendWith({ host: "localhost", port: starttls.port, auth: { user: "mailer", pass: password } }, "untrusted")
      )
      assert.strictEqual(error.reason._tag, "Unavailable")
      assert.isFalse(error.reason._tag === "Unavailable" && error.reason.possiblySent)
      assert.match(error.message, /TLS .*self-signed certificate/)
      assert.strictEqual(starttls.attempts(), before)
    })
  )
})
