// `mailroom.testing` against a real server's inbox API: awaitEmail for a message already there and for
// the next one, emailsTo, lastEmailTo, links, clear, the error when nothing arrives, and its types
// equal to the server's schemas.
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import type * as InboxSchema from "../../server/src/internal/inbox/schema.js"
import { EmailNotReceivedError, MailroomClient, NotFoundError } from "../src/index.js"
import { acme, type Mailroom, startMailroom } from "./support/mailroom.js"

type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false
// Compiles only while the client's inbox types are exactly the server's schema types.
const sameTypes: {
  readonly summary: Equals<MailroomClient.InboxMessageSummary, InboxSchema.Summary>
  readonly message: Equals<Omit<MailroomClient.InboxMessage, "events">, Omit<InboxSchema.Detail, "events">>
} = { summary: true, message: true }

describe("mailroom.testing against a running server", () => {
  let mailroom: Mailroom
  let client: MailroomClient.MailroomClient
  beforeAll(async () => {
    mailroom = await startMailroom()
    client = MailroomClient.make({ baseUrl: mailroom.url, apiKey: acme.apiKey })
  })
  afterAll(async () => {
    await mailroom?.close()
  })

  const signUp = (to: string, subject = "Confirm your address") =>
    client.emails.send({
      from: "hello@acme.example",
      to: [to],
      subject,
      body: {
        html: `<p><a href="https://app.example/confirm?to=${encodeURIComponent(to)}">Confirm</a></p>`,
        text: `Confirm: https://app.example/confirm?to=${encodeURIComponent(to)}`
      }
    })

  it("awaitEmail answers a message that arrived before it was called, and one that arrives while it waits", async () => {
    assert.isTrue(sameTypes.summary && sameTypes.message)
    const sent = await signUp("alice@example.com")
    const already = await client.testing.awaitEmail({ to: "alice@example.com", subject: "confirm" })
    assert.strictEqual(already.id, sent.message_id)
    assert.deepStrictEqual(client.testing.links(already)[0], {
      url: "https://app.example/confirm?to=alice%40example.com",
      text: "Confirm",
      source: "html"
    })
    const since = new Date()
    const next = client.testing.awaitEmail({ to: "alice@example.com", since, timeout: 15_000 })
    const again = await signUp("alice@example.com", "Your receipt")
    assert.strictEqual((await next).id, again.message_id)
    assert.strictEqual((await next).subject, "Your receipt")
  })

  it("emailsTo and lastEmailTo read the outbox for an address, newest first; clear empties it", async () => {
    const first = await signUp("bob@example.com")
    const second = await signUp("Bob@example.com")
    assert.deepStrictEqual(
      (await client.testing.emailsTo("bob@example.com")).map((m) => m.id),
      [second.message_id, first.message_id]
    )
    const last = await client.testing.lastEmailTo("bob@example.com")
    assert.strictEqual(last?.id, second.message_id)
    assert.include(last?.html ?? "", "Confirm")
    assert.deepStrictEqual(
      last?.events.map((e) => e.type),
      ["delivered"]
    )
    assert.isUndefined(await client.testing.lastEmailTo("nobody@example.com"))
    assert.isAbove(await client.testing.clear(), 1)
    assert.deepStrictEqual(await client.testing.emailsTo("bob@example.com"), [])
    const missing = await client.testing.getEmail(first.message_id).catch((error: unknown) => error)
    assert.isTrue(NotFoundError.isInstance(missing))
  })

  it("messages from before the client was made are not this run's, unless since says so", async () => {
    const old = await signUp("carol@example.com")
    const later = MailroomClient.make({ baseUrl: mailroom.url })
    assert.deepStrictEqual(await later.testing.emailsTo("carol@example.com"), [])
    const all = await later.testing.emailsTo("carol@example.com", { since: new Date(0) })
    assert.deepStrictEqual(
      all.map((m) => m.id),
      [old.message_id]
    )
  })

  it("awaitEmail rejects with EmailNotReceivedError, naming what did not arrive", async () => {
    const error = await client.testing
      .awaitEmail({ to: "dave@example.com", subject: "reset", timeout: 300 })
      .catch((e: unknown) => e)
    assert.isTrue(EmailNotReceivedError.isInstance(error))
    assert.strictEqual(
      (error as EmailNotReceivedError).message,
      'no email to dave@example.com with "reset" in its subject reached the outbox within 300 ms'
    )
  })
})
