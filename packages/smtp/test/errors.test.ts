// The error table, row by row: smtp-server answers each reply code at each stage (the enhanced status
// code written as real servers write it), and the test reads the reason, whether core may retry, and
// how many messages the server took.
import { assert, describe, it, layer } from "@effect/vitest"
import { EmailProvider, type ProviderError } from "@mailroom/core"
import { outboundEmail } from "@mailroom/core/testing"
import { freePort } from "@mailroom/test-support"
import { Effect, Layer, Logger } from "effect"
import { SmtpEmailProvider } from "../src/index.js"
import { type Script, SmtpPeer } from "./support/SmtpPeer.js"

const message = outboundEmail

const reply = (code: number, text: string) => ({ code, text })

interface Row {
  readonly stage: string
  readonly script: Script
  readonly reason: ProviderError.Reason["_tag"]
  readonly retryable: boolean
  /** Words the message must hold: the server's reply, what to fix. */
  readonly says: ReadonlyArray<string>
  readonly check?: (reason: ProviderError.Reason) => void
}

const rows: ReadonlyArray<Row> = [
  {
    stage: "greeting 421 4.3.2 (shutting down)",
    script: { connect: reply(421, "4.3.2 Service shutting down") },
    reason: "Unavailable",
    retryable: true,
    says: ["421", "not sent"]
  },
  {
    stage: "greeting 554 5.3.2 (no SMTP service here)",
    script: { connect: reply(554, "5.3.2 No SMTP service here") },
    reason: "Unknown",
    retryable: false,
    says: ["5.3.2 No SMTP service here"]
  },
  {
    stage: "MAIL FROM 451 4.3.0 (local problem)",
    script: { mailFrom: reply(451, "4.3.0 Temporary local problem") },
    reason: "Unavailable",
    retryable: true,
    says: ["451", "not sent"]
  },
  {
    stage: "MAIL FROM 421 4.7.0 (too many connections)",
    script: { mailFrom: reply(421, "4.7.0 Too many connections, slow down") },
    reason: "RateLimited",
    retryable: true,
    says: ["throttling", "not sent"]
  },
  {
    stage: "MAIL FROM 450 4.7.1 (sending rate exceeded)",
    script: { mailFrom: reply(450, "4.7.1 Sending rate exceeded") },
    reason: "RateLimited",
    retryable: true,
    says: ["4.7.1 Sending rate exceeded"]
  },
  {
    stage: "MAIL FROM 553 5.7.1 (sender not owned by the user)",
    script: { mailFrom: reply(553, "5.7.1 Sender address rejected: not owned by user") },
    reason: "SenderNotVerified",
    retryable: false,
    says: ["billing@acme.example", "not owned by user"],
    check: (reason) => assert.strictEqual((reason as ProviderError.SenderNotVerified).sender, "billing@acme.example")
  },
  {
    stage: "MAIL FROM 550 5.1.8 (sender domain does not exist)",
    script: { mailFrom: reply(550, "5.1.8 Sender address rejected: Domain not found") },
    reason: "SenderNotVerified",
    retryable: false,
    says: ["Domain not found"]
  },
  {
    stage: "MAIL FROM 530 5.7.0 (authentication required)",
    script: { mailFrom: reply(530, "5.7.0 Authentication required") },
    reason: "Unknown",
    retryable: false,
    says: ["requires authentication", "auth.user"]
  },
  {
    stage: "MAIL FROM 530 5.7.0 (STARTTLS first)",
    script: { mailFrom: reply(530, "5.7.0 Must issue a STARTTLS command first") },
    reason: "Unknown",
    retryable: false,
    says: ["requires TLS first", "requireTLS"]
  },
  {
    stage: "MAIL FROM 552 5.3.4 (size over the limit)",
    script: { mailFrom: reply(552, "5.3.4 Message size exceeds fixed limit") },
    reason: "MessageTooLarge",
    retryable: false,
    says: ["too large"]
  },
  {
    stage: "MAIL FROM 501 5.5.4 (syntax)",
    script: { mailFrom: reply(501, "5.5.4 Syntax error in parameters") },
    reason: "InvalidRequest",
    retryable: false,
    says: ["Syntax error"]
  },
  {
    stage: "RCPT TO 450 4.2.1 (mailbox busy)",
    script: { rcptTo: () => reply(450, "4.2.1 Mailbox busy, try later") },
    reason: "Unavailable",
    retryable: true,
    says: ["450", "not sent"]
  },
  {
    stage: "RCPT TO 451 4.7.1 (greylisted)",
    script: { rcptTo: () => reply(451, "4.7.1 Greylisted, please come back later") },
    reason: "RateLimited",
    retryable: true,
    says: ["Greylisted"]
  },
  {
    stage: "RCPT TO 550 5.1.1 (no such user)",
    script: { rcptTo: () => reply(550, "5.1.1 <alice@example.com>: Recipient address rejected: User unknown") },
    reason: "RecipientSuppressed",
    retryable: false,
    says: ["alice@example.com", "User unknown"],
    check: (reason) =>
      assert.deepStrictEqual((reason as ProviderError.RecipientSuppressed).recipients, ["alice@example.com"])
  },
  {
    stage: "RCPT TO 552 5.2.2 (mailbox full): a recipient, not the size",
    script: { rcptTo: () => reply(552, "5.2.2 Mailbox full") },
    reason: "RecipientSuppressed",
    retryable: false,
    says: ["Mailbox full"]
  },
  {
    stage: "RCPT TO 550 5.7.1 (refused by policy)",
    script: { rcptTo: () => reply(550, "5.7.1 Recipient rejected by policy") },
    reason: "RecipientSuppressed",
    retryable: false,
    says: ["policy"]
  },
  {
    stage: "RCPT TO 554 5.7.1 (relay access denied): the client's configuration",
    script: { rcptTo: () => reply(554, "5.7.1 <alice@example.com>: Relay access denied") },
    reason: "Unknown",
    retryable: false,
    says: ["does not relay", "configure auth"]
  },
  {
    stage: "end of DATA 451 4.3.0 (local error): not taken",
    script: { data: reply(451, "4.3.0 Error: queue file write error") },
    reason: "Unavailable",
    retryable: true,
    says: ["451", "not sent"]
  },
  {
    stage: "end of DATA 421 4.4.2 (closing): not taken",
    script: { data: reply(421, "4.4.2 Connection timed out, closing") },
    reason: "Unavailable",
    retryable: true,
    says: ["not sent"]
  },
  {
    stage: "end of DATA 554 5.7.1 (spam)",
    script: { data: reply(554, "5.7.1 Message rejected as spam") },
    reason: "InvalidRequest",
    retryable: false,
    says: ["by policy", "rejected as spam"]
  },
  {
    stage: "end of DATA 552 5.3.4 (too big)",
    script: { data: reply(552, "5.3.4 Message too big for system") },
    reason: "MessageTooLarge",
    retryable: false,
    says: ["too large"]
  },
  {
    stage: "end of DATA 550 5.6.0 (content refused)",
    script: { data: reply(550, "5.6.0 Content rejected") },
    reason: "InvalidRequest",
    retryable: false,
    says: ["Content rejected"]
  }
]

const ProviderLive = Layer.effect(
  EmailProvider.EmailProvider,
  SmtpPeer.use((peer) => SmtpEmailProvider.make({ host: "127.0.0.1", port: peer.port }))
).pipe(Layer.provideMerge(SmtpPeer.layer({ hideSTARTTLS: true, hideENHANCEDSTATUSCODES: true })))

describe("SMTP replies, code by code", () => {
  layer(ProviderLive)((it) => {
    for (const row of rows) {
      it.effect(`${row.stage}: ${row.reason}, ${row.retryable ? "retried" : "not retried"}`, () =>
        Effect.gen(function* () {
          const peer = yield* SmtpPeer
          peer.reset()
          peer.script(row.script)
          const error = yield* Effect.flip((yield* EmailProvider.EmailProvider).send(message()))
          assert.strictEqual(error.provider, "smtp")
          assert.strictEqual(error.reason._tag, row.reason, error.message)
          assert.strictEqual(error.isRetryable, row.retryable)
          if (error.reason._tag === "Unavailable") assert.isFalse(error.reason.possiblySent)
          for (const words of row.says) assert.include(error.message, words)
          row.check?.(error.reason)
          assert.strictEqual(peer.received.length, 0, "the server took nothing")
        })
      )
    }

    it.effect("one recipient refused, the others taken: sent to them, with no error (a retry would send twice)", () =>
      Effect.gen(function* () {
        const peer = yield* SmtpPeer
        peer.reset()
        peer.script({
          rcptTo: (recipient) => (recipient === "bob@example.com" ? reply(550, "5.1.1 User unknown") : undefined)
        })
        const lines: Array<string> = []
        const logger = Logger.make(({ message }) => {
          lines.push((Array.isArray(message) ? message : [message]).map(String).join(" "))
        })
        const { messageId } = yield* (yield* EmailProvider.EmailProvider)
          .send(message({ to: ["alice@example.com", "bob@example.com"] }))
          .pipe(Effect.provide(Logger.layer([logger])))
        const received = yield* Effect.promise(() => peer.byMessageId(messageId))
        assert.deepStrictEqual(received.rcptTo, ["alice@example.com"])
        assert.strictEqual(peer.received.length, 1)
        // The refusal is not lost: a warning names the recipient and the message.
        assert.strictEqual(lines.length, 1)
        assert.include(lines[0], "refused bob@example.com")
        assert.include(lines[0], messageId)
      })
    )
  })
})

describe("no SMTP answer at all", () => {
  it.effect("a refused connection: Unavailable, not sent, retried", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const port = yield* Effect.promise(() => freePort())
        const provider = yield* SmtpEmailProvider.make({ host: "127.0.0.1", port })
        const error = yield* Effect.flip(provider.send(message()))
        assert.strictEqual(error.reason._tag, "Unavailable")
        assert.isTrue(error.isRetryable)
        assert.include(error.message, "ECONNREFUSED")
        assert.include(error.message, "not sent")
      })
    )
  )

  it.effect("a host that does not resolve: Unavailable, not sent, retried", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const provider = yield* SmtpEmailProvider.make({ host: "smtp.nonexistent.invalid", port: 587 })
        const error = yield* Effect.flip(provider.send(message()))
        assert.strictEqual(error.reason._tag, "Unavailable")
        assert.isTrue(error.isRetryable)
        assert.include(error.message, "smtp.nonexistent.invalid")
        assert.include(error.message, "not sent")
      })
    )
  )
})
