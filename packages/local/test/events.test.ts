// The outbox's delivery events on the embedded defaults, in process: a send through Mailroom.make
// reaches a subscriber as one event per recipient, and the .eml names the sending organisation.
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { type MailEvent, Mailroom, Organizations, type ProviderError } from "@mailroom/core"
import { Effect, Redacted } from "effect"
import { simpleParser } from "mailparser"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { DiskObjectStore, OutboxEmailProvider } from "../src/index.js"

let dir: string
let mailroom: Mailroom.Client
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "mailroom-outbox-events-"))
  mailroom = Mailroom.make({
    provider: OutboxEmailProvider.layer({
      dir: path.join(dir, "outbox"),
      sandbox: { enabled: true, verifiedRecipients: ["alice@example.com", "gone@example.com", "carol@example.com"] },
      suppressedRecipients: ["Gone@Example.com"]
    }),
    store: DiskObjectStore.layer({
      dir: path.join(dir, "storage"),
      publicUrl: "http://127.0.0.1:1",
      signingSecret: Redacted.make("s")
    }),
    organizations: Organizations.layerStatic({
      serviceDomain: "mailroom.test",
      organizations: [
        { id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"] },
        { id: "org_globex", slug: "globex" }
      ]
    })
  })
})
afterAll(async () => {
  await mailroom.dispose()
  await rm(dir, { recursive: true, force: true })
})

const rejection = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error("the send did not fail")
    },
    (error: unknown) => error as ProviderError.ProviderError
  )

describe("the outbox's events", () => {
  it("a suppressed and a normal recipient: rejected and delivered, each with the send's message id", async () => {
    const events: Array<MailEvent.MailEvent> = []
    const stop = await mailroom.onEvent((event) => void events.push(event))
    const { response } = await mailroom.send(
      { orgId: "org_acme" },
      {
        from: "hi@acme.example",
        to: ["alice@example.com"],
        cc: ["gone@example.com"],
        subject: "Hi",
        body: { text: "x" }
      }
    )
    await new Promise((resolve) => setTimeout(resolve, 20))
    await stop()
    assert.deepStrictEqual(
      events.map((e) => [e.type, e.recipient, e.message_id, e.organization_id, e.provider]),
      [
        ["delivered", "alice@example.com", response.message_id, "org_acme", "outbox"],
        ["rejected", "gone@example.com", response.message_id, "org_acme", "outbox"]
      ]
    )
    assert.notStrictEqual(events[0]?.id, events[1]?.id)
    // The .eml names the organisation, for whoever reads the outbox.
    const raw = await readFile(path.join(dir, "outbox", `${response.message_id}.eml`), "utf8")
    assert.match(raw, /^X-Mailroom-Organization: org_acme\r$/m)
    assert.strictEqual((await simpleParser(raw)).headers.get("x-mailroom-organization"), "org_acme")
  })

  it("an unverified recipient in the sandbox is refused at send, and no event is published", async () => {
    const events: Array<MailEvent.MailEvent> = []
    const stop = await mailroom.onEvent((event) => void events.push(event))
    const error = await rejection(
      mailroom.send(
        { orgId: "org_acme" },
        {
          from: "hi@acme.example",
          to: ["alice@example.com", "stranger@example.com"],
          subject: "Hi",
          body: { text: "x" }
        }
      )
    )
    assert.strictEqual(error.reason._tag, "RecipientNotVerified")
    const sent = await mailroom.send(
      { orgId: "org_globex" },
      { from: "hi@globex.mailroom.test", to: ["carol@example.com"], subject: "Hi", body: { text: "x" } }
    )
    await new Promise((resolve) => setTimeout(resolve, 20))
    await stop()
    assert.deepStrictEqual(
      events.map((e) => [e.type, e.recipient, e.message_id, e.organization_id]),
      [["delivered", "carol@example.com", sent.response.message_id, "org_globex"]]
    )
  })

  it("only suppressed recipients: RecipientSuppressed, as Postmark answers when every recipient is inactive", async () => {
    const error = await rejection(
      mailroom.send(
        { orgId: "org_acme" },
        { from: "hi@acme.example", to: ["gone@example.com"], subject: "Hi", body: { text: "x" } }
      )
    )
    assert.strictEqual(error.reason._tag, "RecipientSuppressed")
    assert.deepStrictEqual((error.reason as ProviderError.RecipientSuppressed).recipients, ["gone@example.com"])
  })

  it("metadata that could not be a header is refused, and nothing is written", async () => {
    const provider = await Effect.runPromise(OutboxEmailProvider.make({ dir: path.join(dir, "metadata") }))
    const error = await Effect.runPromise(
      Effect.flip(
        provider.send({
          from: { address: "a@acme.example" },
          to: ["b@example.com"],
          cc: [],
          bcc: [],
          replyTo: [],
          subject: "Hi",
          text: "x",
          attachments: [],
          metadata: { "mailroom-org": "org_acme\r\nBcc: victim@example.com" }
        })
      )
    )
    assert.strictEqual(error.reason._tag, "InvalidRequest")
  })

  it("simulator addresses pass the sandbox and act out their outcomes: states, suppressions, a delayed delivery", async () => {
    const events: Array<MailEvent.MailEvent> = []
    let delivered: () => void = () => {}
    const laterDelivery = new Promise<void>((resolve) => {
      delivered = resolve
    })
    const stop = await mailroom.onEvent((event) => {
      events.push(event)
      if (event.type === "delivered" && event.recipient === "delayed+x@simulator.mailroom.test") delivered()
    })
    const { response } = await mailroom.send(
      { orgId: "org_acme" },
      {
        from: "hi@acme.example",
        to: ["bounced@simulator.mailroom.test", "complained+bob@simulator.mailroom.test"],
        cc: ["delayed+x@simulator.mailroom.test"],
        subject: "Hi",
        body: { text: "x" }
      }
    )
    const now = await mailroom.getEmail({ orgId: "org_acme" }, response.message_id)
    assert.deepStrictEqual(
      now.recipients.map((r) => [r.email, r.state]),
      [
        ["bounced@simulator.mailroom.test", "bounced"],
        ["complained+bob@simulator.mailroom.test", "complained"],
        ["delayed+x@simulator.mailroom.test", "delivery_delayed"]
      ]
    )
    await laterDelivery
    await stop()
    const later = await mailroom.getEmail({ orgId: "org_acme" }, response.message_id)
    assert.strictEqual(later.recipients[2]?.state, "delivered")
    assert.deepStrictEqual(
      events.map((e) => [e.type, e.recipient, e.provider]),
      [
        ["bounced", "bounced@simulator.mailroom.test", "outbox"],
        ["delivered", "complained+bob@simulator.mailroom.test", "outbox"],
        ["complained", "complained+bob@simulator.mailroom.test", "outbox"],
        ["deferred", "delayed+x@simulator.mailroom.test", "outbox"],
        ["delivered", "delayed+x@simulator.mailroom.test", "outbox"]
      ]
    )
    const list = await mailroom.listSuppressions({ orgId: "org_acme" })
    assert.deepStrictEqual(list.data.map((s) => [s.email, s.reason]).sort(), [
      ["bounced@simulator.mailroom.test", "bounced"],
      ["complained+bob@simulator.mailroom.test", "complained"]
    ])
    // The message was written as any other.
    const raw = await readFile(path.join(dir, "outbox", `${response.message_id}.eml`), "utf8")
    assert.match(raw, /^To: bounced@simulator\.mailroom\.test, complained\+bob@simulator\.mailroom\.test\r$/m)
  })

  it("a mailbox the simulator domain does not have is refused with the ones it has, and nothing is written", async () => {
    const before = await readdir(path.join(dir, "outbox"))
    const error = await rejection(
      mailroom.send(
        { orgId: "org_acme" },
        { from: "hi@acme.example", to: ["bounce@simulator.mailroom.test"], subject: "Hi", body: { text: "x" } }
      )
    )
    assert.strictEqual(error.reason._tag, "InvalidRequest")
    assert.include(
      error.reason.message,
      "no mailbox bounce@simulator.mailroom.test: use delivered@simulator.mailroom.test"
    )
    assert.deepStrictEqual(await readdir(path.join(dir, "outbox")), before)
  })
})
