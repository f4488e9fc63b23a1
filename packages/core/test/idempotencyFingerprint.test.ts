// What makes a second send under an Idempotency-Key the same request: every field the message is
// built from. A reuse that changes any of them is a Conflict, never a replay of another message.
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { Attachments, Mailer } from "../src/index.js"
import { acme, makeWorld } from "./fixtures.js"

const world = makeWorld()

const upload = (filename: string) =>
  Effect.gen(function* () {
    const { key, url } = yield* (yield* Attachments.Attachments).presign(acme, {
      filename,
      content_type: "application/pdf"
    })
    const put = yield* Effect.promise(() =>
      world.store.fetch(url, { method: "PUT", headers: { "content-type": "application/pdf" }, body: "%PDF-1.7" })
    )
    assert.strictEqual(put.status, 200)
    return key
  })

/** The first send under `key` is sent; what the second one under the same key gets. */
const reuse = (
  key: string,
  first: Record<string, unknown>,
  second: Record<string, unknown>,
  via: "send" | "sendInProcess" = "send"
) =>
  Effect.gen(function* () {
    const mailer = yield* Mailer.Mailer
    const send = (request: Record<string, unknown>) =>
      via === "send"
        ? mailer.send(acme, request as never, { idempotencyKey: key })
        : mailer.sendInProcess(acme, request as never, { idempotencyKey: key })
    const sent = yield* send(first)
    assert.isFalse(sent.replayed)
    return yield* Effect.result(send(second))
  })

describe("an Idempotency-Key reused", () => {
  it.effect("with any field of the message changed is a Conflict", () =>
    Effect.gen(function* () {
      const invoice = yield* upload("invoice.pdf")
      const other = yield* upload("other.pdf")
      const message = {
        from: "billing@acme.example",
        from_name: "Acme Billing",
        to: ["alice@example.com"],
        subject: "Your invoice",
        body: { text: "See attached.", html: "<p>See attached.</p>" },
        attachments: [{ filename: "invoice.pdf", key: invoice }]
      }
      const changes: Record<string, Record<string, unknown>> = {
        from: { from: "sales@acme.example" },
        from_name: { from_name: "Acme Sales" },
        to: { to: ["bob@example.com"] },
        cc: { cc: ["carol@example.com"] },
        bcc: { bcc: ["dave@example.com"] },
        reply_to: { reply_to: ["help@acme.example"] },
        subject: { subject: "Your other invoice" },
        "body.text": { body: { ...message.body, text: "See the attachment." } },
        "body.html": { body: { ...message.body, html: "<p>See the attachment.</p>" } },
        "body without html": { body: { text: message.body.text } },
        "no attachments": { attachments: [] },
        "attachment key": { attachments: [{ filename: "invoice.pdf", key: other }] },
        "attachment filename": { attachments: [{ filename: "facture.pdf", key: invoice }] },
        "attachment content_type": {
          attachments: [{ filename: "invoice.pdf", key: invoice, content_type: "application/octet-stream" }]
        }
      }
      for (const [field, change] of Object.entries(changes)) {
        const second = yield* reuse(`change-${field.replace(/\W/g, "-")}`, message, { ...message, ...change })
        assert.isTrue(second._tag === "Failure" && second.failure._tag === "Conflict", `${field}: ${second._tag}`)
      }
      // The same message again, fields in another order, is a replay: the key is not simply spent.
      const { attachments, ...rest } = message
      const again = yield* reuse("unchanged", message, { attachments, ...rest })
      assert.isTrue(again._tag === "Success" && again.success.replayed)
    }).pipe(Effect.provide(world.layer))
  )

  it.effect("in process, with other attachment bytes is a Conflict; the same bytes replay", () =>
    Effect.gen(function* () {
      const message = (content: Uint8Array) => ({
        from: "billing@acme.example",
        to: ["alice@example.com"],
        subject: "Your invoice",
        body: { text: "See attached." },
        attachments: [{ filename: "invoice.pdf", content }]
      })
      const bytes = () => new Uint8Array([0x25, 0x50, 0x44, 0x46, 1])
      const changed = yield* reuse(
        "bytes",
        message(bytes()),
        message(new Uint8Array([0x25, 0x50, 0x44, 0x46, 2])),
        "sendInProcess"
      )
      assert.isTrue(changed._tag === "Failure" && changed.failure._tag === "Conflict", changed._tag)
      const same = yield* reuse("same-bytes", message(bytes()), message(bytes()), "sendInProcess")
      assert.isTrue(same._tag === "Success" && same.success.replayed)
    }).pipe(Effect.provide(world.layer))
  )
})
