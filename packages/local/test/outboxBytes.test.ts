// The outbox's .eml files byte for byte as they were when the message was built whole in memory,
// now that it is streamed to the disk, and its size limit applied as the message is written.
import { createHash } from "node:crypto"
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { it as effectIt } from "@effect/vitest"
import { type EmailProvider, MailEvent } from "@mailroom/core"
import { outboundEmail } from "@mailroom/core/testing"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { simpleParser } from "mailparser"
import { afterAll, assert, beforeAll, describe } from "vitest"
import { OutboxEmailProvider } from "../src/index.js"

let base: string
beforeAll(async () => {
  base = await mkdtemp(path.join(tmpdir(), "mailroom-outbox-bytes-"))
})
afterAll(() => rm(base, { recursive: true, force: true }))
let count = 0
const freshDir = () => path.join(base, `outbox-${count++}`)

/** The same bytes on every run: an attachment's content, not compressible by accident. */
const bytes = (length: number, seed: number) => {
  const content = new Uint8Array(length)
  for (let i = 0; i < length; i++) content[i] = ((i + seed) * 2654435761) >>> 24
  return content
}

const message = (messageId: string, attachmentBytes: number) =>
  outboundEmail({
    from: { address: "billing@acme.example", name: "Acme Billing" },
    to: ["alice@example.com"],
    cc: ["carol@example.com"],
    bcc: ["audit@acme.example"],
    subject: "Your receipt — März",
    text: "Thanks for your order.\nZoë",
    html: '<p>Thanks for your order.</p><img src="cid:logo@acme">',
    metadata: { [MailEvent.messageKey]: messageId, [MailEvent.organizationKey]: "org_acme" },
    attachments: [
      { filename: "receipt.pdf", contentType: "application/pdf", content: bytes(attachmentBytes, 1) },
      { filename: "logo.png", contentType: "image/png", content: bytes(3_000, 2), contentId: "logo@acme" }
    ]
  })

/**
 * The digest of a file with its multipart boundaries' random part made constant (same length):
 * the composer draws it for every message.
 */
const digest = (raw: Buffer) =>
  createHash("sha256")
    .update(raw.toString("latin1").replace(/--_NmP-[0-9a-f]{16}-Part_/g, "--_NmP-0000000000000000-Part_"), "latin1")
    .digest("hex")

const sent = (dir: string, email: EmailProvider.OutboundEmail, limits?: EmailProvider.Limits) =>
  Effect.gen(function* () {
    yield* TestClock.setTime(Date.parse("2031-02-03T04:05:06Z"))
    const provider = yield* Effect.orDie(OutboxEmailProvider.make({ dir, ...(limits === undefined ? {} : { limits }) }))
    return yield* provider.send(email)
  })

describe("the outbox's .eml bytes", () => {
  // Recorded from the outbox that built each message whole with nodemailer's `build()` (before
  // issue 33), nodemailer 10.6.0: a small message, written in one piece, and one of 1.4 MB, streamed.
  const recorded = [
    {
      attachmentBytes: 20_000,
      size: 33_010,
      sha256: "d7a3cdb2191279d1cdc0dca343a948c5f12957514b1c37deb867104c09c3bb6b"
    },
    {
      attachmentBytes: 1_000_000,
      size: 1_374_064,
      sha256: "645e24dbfdbb2038e378b5b4bfe888634521efcd0fe4796bf829d0e71f4d6417"
    }
  ]
  for (const { attachmentBytes, size, sha256 } of recorded) {
    effectIt.effect(`are the ones recorded, with a ${attachmentBytes}-byte attachment`, () =>
      Effect.gen(function* () {
        const dir = freshDir()
        const messageId = "0190a0b0-c0d0-7000-8000-000000000001"
        yield* sent(dir, message(messageId, attachmentBytes))
        const raw = yield* Effect.promise(() => readFile(path.join(dir, `${messageId}.eml`)))
        assert.strictEqual(raw.byteLength, size)
        assert.strictEqual(digest(raw), sha256)
        const parsed = yield* Effect.promise(() => simpleParser(raw))
        assert.deepStrictEqual(
          new Uint8Array(parsed.attachments.find((a) => a.filename === "receipt.pdf")?.content ?? []),
          bytes(attachmentBytes, 1)
        )
      })
    )
  }

  effectIt.effect("a message over the limit is refused as it passes it, and the file it would replace stays", () =>
    Effect.gen(function* () {
      const dir = freshDir()
      const messageId = "0190a0b0-c0d0-7000-8000-000000000002"
      const limits = { ...OutboxEmailProvider.limits, maxMessageBytes: 1_000_000 }
      yield* sent(dir, message(messageId, 20_000), limits)
      const before = yield* Effect.promise(() => readFile(path.join(dir, `${messageId}.eml`)))
      // 1.2 MB once encoded: past the first write to a temporary file, over the limit before its end.
      const error = yield* Effect.flip(sent(dir, message(messageId, 900_000), limits))
      assert.strictEqual(error.reason._tag, "MessageTooLarge")
      assert.include(error.message, "1000000")
      assert.deepStrictEqual(yield* Effect.promise(() => readdir(dir)), [`${messageId}.eml`], "no temporary file stays")
      const after = yield* Effect.promise(() => readFile(path.join(dir, `${messageId}.eml`)))
      assert.isTrue(after.equals(before), "the earlier message was replaced")
    })
  )

  effectIt.effect("a large message is written again into a directory removed since the last one", () =>
    Effect.gen(function* () {
      const dir = freshDir()
      const provider = yield* Effect.orDie(OutboxEmailProvider.make({ dir }))
      yield* provider.send(message("0190a0b0-c0d0-7000-8000-000000000003", 1_000_000))
      yield* Effect.promise(() => rm(dir, { recursive: true }))
      const messageId = "0190a0b0-c0d0-7000-8000-000000000004"
      yield* provider.send(message(messageId, 1_000_000))
      assert.deepStrictEqual(yield* Effect.promise(() => readdir(dir)), [`${messageId}.eml`])
    })
  )
})
