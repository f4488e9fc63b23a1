// The viewer's reading of the outbox directory: a message's blind copies from the outbox's own
// X-Mailroom-Bcc header, or from the `.json` sidecar that earlier versions wrote beside the `.eml`,
// and both files gone when a message is deleted.
import { readdir, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { OutboxEmailProvider } from "@mailroom/local"
import { scopedTempDir } from "@mailroom/test-support"
import { Effect } from "effect"
import { assert, describe, it } from "vitest"
import * as Index from "../src/internal/inbox/store.js"
import * as Outbox from "../src/internal/viewer/outbox.js"

const oldFormat = (id: string) =>
  [
    "From: billing@acme.example",
    "To: alice@example.com",
    "Subject: Before the header",
    `Message-ID: <${id}@outbox.mailroom>`,
    "MIME-Version: 1.0",
    "Content-Type: text/plain; charset=utf-8",
    "X-Mailroom-Organization: org_acme",
    "",
    "Hello.",
    ""
  ].join("\r\n")

describe("the viewer's outbox", () => {
  it("blind copies come from X-Mailroom-Bcc, or an earlier version's sidecar; delete takes both files", () =>
    Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const dir = yield* scopedTempDir("viewer-outbox")
          const provider = yield* OutboxEmailProvider.make({ dir })
          const { messageId } = yield* provider.send({
            from: { address: "billing@acme.example" },
            to: ["alice@example.com"],
            cc: [],
            bcc: ["dora@example.com", "erin@example.com"],
            replyTo: [],
            subject: "With the header",
            text: "Hello.",
            attachments: []
          })
          const old = "01900000-0000-7000-8000-000000000000"
          yield* Effect.promise(async () => {
            await writeFile(join(dir, `${old}.eml`), oldFormat(old))
            await writeFile(join(dir, `${old}.json`), JSON.stringify({ messageId: old, bcc: ["frank@example.com"] }))
          })
          const current = yield* Effect.promise(() => Outbox.read(dir, messageId))
          assert.deepStrictEqual(current?.bcc, ["dora@example.com", "erin@example.com"])
          const earlier = yield* Effect.promise(() => Outbox.read(dir, old))
          assert.deepStrictEqual(earlier?.bcc, ["frank@example.com"])
          const index = Index.make(dir)
          yield* Effect.addFinalizer(() => Effect.promise(() => index.close()))
          const found = yield* Effect.promise(() => index.list({ limit: 10, to: "erin@example.com" }))
          assert.deepStrictEqual(
            found.map((row) => row.id),
            [messageId],
            "search finds a blind copy"
          )
          assert.isTrue(yield* Effect.promise(() => index.remove(old)))
          assert.deepStrictEqual(
            (yield* Effect.promise(() => readdir(dir))).filter((name) => !name.startsWith(".mailroom-index")),
            [`${messageId}.eml`]
          )
        })
      )
    ))
})
