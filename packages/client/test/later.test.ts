// emails.send with scheduled_at, emails.reschedule, emails.cancel and emails.sendBatch against a real
// server: each answer, each error as its class, a batch retried under its key sending nothing.

import { rejection } from "@mailroom/test-support"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { ConflictError, MailroomClient, NotFoundError, ValidationError } from "../src/index.js"
import { acme, globex, type Mailroom, startMailroom } from "./support/mailroom.js"

const email = (subject: string) => ({
  from: "hello@acme.example",
  to: ["alice@example.com"],
  subject,
  body: { text: "Hi" }
})

describe("sending later and sending many against a running server", () => {
  let mailroom: Mailroom
  let client: MailroomClient.MailroomClient
  let other: MailroomClient.MailroomClient
  beforeAll(async () => {
    mailroom = await startMailroom()
    client = MailroomClient.make({ baseUrl: mailroom.url, apiKey: acme.apiKey })
    other = MailroomClient.make({ baseUrl: mailroom.url, apiKey: globex.apiKey })
  })
  afterAll(async () => {
    await mailroom?.close()
  })

  it("send with scheduled_at answers the 202; reschedule moves it; cancel takes it back, once and again", async () => {
    const inAnHour = new Date(Date.now() + 3_600_000)
    const scheduled = await client.emails.send({ ...email("later"), scheduled_at: inAnHour.toISOString() })
    // Typed by the request: a scheduled send's answer.
    assert.strictEqual(scheduled.status, "scheduled")
    assert.strictEqual(scheduled.scheduled_at, inAnHour.toISOString())
    assert.isFalse(scheduled.replayed)
    const inTwo = new Date(Date.now() + 7_200_000)
    assert.deepStrictEqual(await client.emails.reschedule(scheduled.message_id, inTwo), {
      message_id: scheduled.message_id,
      status: "scheduled",
      scheduled_at: inTwo.toISOString()
    })
    assert.strictEqual((await client.emails.get(scheduled.message_id)).scheduled_at, inTwo.toISOString())
    const refused = await rejection(client.emails.reschedule(scheduled.message_id, "in a while"))
    assert.isTrue(ValidationError.isInstance(refused))
    assert.deepStrictEqual((refused as ValidationError).errors, [
      "scheduled_at: must be an RFC 3339 date-time with an offset, such as 2026-05-01T09:00:00Z"
    ])
    assert.isTrue(NotFoundError.isInstance(await rejection(other.emails.cancel(scheduled.message_id))))
    const cancelled = { message_id: scheduled.message_id, status: "cancelled" }
    assert.deepStrictEqual(await client.emails.cancel(scheduled.message_id), cancelled)
    assert.deepStrictEqual(await client.emails.cancel(scheduled.message_id), cancelled)
    const sent = await client.emails.send(email("now"))
    const late = await rejection(client.emails.cancel(sent.message_id))
    assert.isTrue(ConflictError.isInstance(late))
    assert.deepStrictEqual(
      (await mailroom.sent()).filter((name) => name.startsWith(scheduled.message_id)),
      []
    )
  })

  it("sendBatch answers each item by index; retried under its key it sends nothing again", async () => {
    const before = (await mailroom.sent()).length
    const batch = [email("b0"), { ...email("b1"), to: [] }, email("b2")]
    const first = await client.emails.sendBatch(batch, { idempotencyKey: "client-batch" })
    assert.deepStrictEqual(
      first.data.map((d) => [d.index, d.status]),
      [
        [0, "sent"],
        [2, "sent"]
      ]
    )
    assert.deepStrictEqual(first.errors, [{ index: 1, errors: ["to: must contain at least 1 recipient"] }])
    assert.isFalse(first.replayed)
    const again = await client.emails.sendBatch(batch, { idempotencyKey: "client-batch" })
    assert.isTrue(again.replayed)
    assert.deepStrictEqual(again.data, first.data)
    assert.strictEqual((await mailroom.sent()).length, before + 2)
  })

  it("sendBatch resolves when no item was accepted, and rejects a body that is no batch", async () => {
    const none = await client.emails.sendBatch([{ ...email("x"), subject: "" }])
    assert.deepStrictEqual(none.data, [])
    assert.deepStrictEqual(none.errors, [{ index: 0, errors: ["subject: must not be empty"] }])
    const tooMany = await rejection(client.emails.sendBatch(Array.from({ length: 101 }, () => email("x"))))
    assert.isTrue(ValidationError.isInstance(tooMany))
    assert.deepStrictEqual((tooMany as ValidationError).errors, ["request: must be an array of 1 to 100 send requests"])
  })
})
