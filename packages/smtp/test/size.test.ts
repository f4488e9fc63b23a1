// The server's own size limit, as it advertises it in EHLO (SIZE, RFC 1870): a larger message is refused
// before MAIL FROM, so not a byte of it is transferred. On smtp-server and on aiosmtpd.
import { assert, describe, it } from "@effect/vitest"
import type { EmailProvider } from "@mailroom/core"
import { outboundEmail } from "@mailroom/core/testing"
import { Effect } from "effect"
import { afterAll, beforeAll } from "vitest"
import { SmtpEmailProvider } from "../src/index.js"
import * as Aiosmtpd from "./support/Aiosmtpd.js"
import { parseReceived } from "./support/received.js"
import * as SmtpPeer from "./support/SmtpPeer.js"

const message = (bytes: number) =>
  outboundEmail({
    subject: "Sized",
    text: "x",
    attachments: [{ filename: "data.bin", contentType: "application/octet-stream", content: new Uint8Array(bytes) }]
  })

let strict: SmtpPeer.Peer
let python: Aiosmtpd.Aiosmtpd

beforeAll(async () => {
  ;[strict, python] = await Promise.all([
    SmtpPeer.start({ hideSTARTTLS: true, size: 6_000 }),
    Aiosmtpd.start({ size: 6_000 })
  ])
}, 30_000)
afterAll(async () => {
  await Promise.all([strict?.close(), python?.close()])
})

const sendTo = (port: number, email: EmailProvider.OutboundEmail) =>
  Effect.scoped(
    Effect.flatMap(Effect.orDie(SmtpEmailProvider.make({ host: "127.0.0.1", port })), (provider) =>
      provider.send(email)
    )
  )

describe("the server's advertised SIZE", () => {
  for (const [name, port, received] of [
    ["smtp-server", () => strict.port, () => Promise.resolve(strict.attempts())],
    ["aiosmtpd", () => python.port, async () => (await python.received()).length]
  ] as const) {
    it.effect(`${name}: a message under it goes; one over it is MessageTooLarge before any DATA`, () =>
      Effect.gen(function* () {
        const before = yield* Effect.promise(received)
        const { messageId } = yield* sendTo(port(), message(1_000))
        const error = yield* Effect.flip(sendTo(port(), message(8_000)))
        assert.strictEqual(error.reason._tag, "MessageTooLarge")
        assert.isFalse(error.isRetryable)
        assert.include(error.message, "its EHLO SIZE")
        assert.strictEqual(yield* Effect.promise(received), before + 1, "only the smaller message reached DATA")
        if (name === "smtp-server") {
          const parsed = yield* Effect.promise(async () => parseReceived(await strict.byMessageId(messageId)))
          assert.strictEqual(parsed.attachments[0]?.size, 1_000)
        }
      })
    )
  }
})
