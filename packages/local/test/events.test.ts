// The outbox's delivery events on the embedded defaults, in process: a send through Mailroom.make
// reaches a subscriber as one event per recipient, and the .eml names the sending organisation.
import { mkdtemp, readFile, rm } from "node:fs/promises"
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
})
