import { rejection } from "@mailroom/test-support"
import { Effect, Layer } from "effect"
import { afterAll, assert, describe, it } from "vitest"
import { EmailProvider, Mailroom, MailroomError, ObjectStore, Organizations, ProviderError } from "../src/index.js"

const store = ObjectStore.makeMemory()
const provider = EmailProvider.makeMemory()
const mailroom = Mailroom.make({
  provider: Layer.succeed(EmailProvider.EmailProvider, provider),
  store: Layer.succeed(ObjectStore.ObjectStore, store),
  organizations: Organizations.layerStatic({
    serviceDomain: "mailroom.test",
    organizations: [
      {
        id: "org_acme",
        slug: "acme",
        verifiedDomains: ["acme.example"],
        apiKeys: ["mr_acme"],
        accessTokens: ["tok_acme"]
      },
      { id: "org_globex", slug: "globex", apiKeys: ["mr_globex"] }
    ]
  })
})
afterAll(() => mailroom.dispose())

const uploadPdf = async (caller: Mailroom.Caller) => {
  const presigned = await mailroom.presign(caller, { filename: "a.pdf", content_type: "application/pdf" })
  const put = await store.fetch(presigned.url, {
    method: "PUT",
    headers: { "content-type": "application/pdf" },
    body: "%PDF"
  })
  assert.strictEqual(put.status, 200)
  return presigned
}

describe("Mailroom.make (Promise client)", () => {
  it("acts for an API key, an access token or a trusted org id alike", async () => {
    const request = { from: "a@acme.example", to: ["b@example.com"], subject: "Hi", body: { text: "x" } }
    for (const caller of [{ apiKey: "mr_acme" }, { accessToken: "tok_acme" }, { orgId: "org_acme" }]) {
      const { response } = await mailroom.send(caller, request)
      assert.strictEqual(response.message_id, provider.sent.at(-1)?.messageId)
    }
    assert.strictEqual(provider.sent.length, 3)
  })

  it("rejects a bad credential with Unauthorized, and an unknown org id with NotFound", async () => {
    const unauthorized = await rejection(mailroom.presign({ apiKey: "tok_acme" }, { filename: "a.pdf" }))
    assert.isTrue(MailroomError.isMailroomError(unauthorized))
    assert.strictEqual((unauthorized as MailroomError.MailroomError)._tag, "Unauthorized")
    const missing = await rejection(mailroom.presign({ orgId: "org_nobody" }, { filename: "a.pdf" }))
    assert.strictEqual((missing as MailroomError.MailroomError)._tag, "NotFound")
  })

  it("rejects an unverified sender with a ProviderError whose reason says so", async () => {
    const error = await rejection(
      mailroom.send(
        { orgId: "org_acme" },
        { from: "a@evil.example", to: ["b@example.com"], subject: "Hi", body: { text: "x" } }
      )
    )
    assert.isTrue(ProviderError.isProviderError(error))
    const refused = error as ProviderError.ProviderError
    assert.strictEqual(refused.reason._tag, "SenderNotVerified")
    assert.isFalse(MailroomError.isMailroomError(error))
    // mailroom's own check, before any provider: the message says what to change, and that nothing went.
    assert.strictEqual(refused.provider, "mailroom")
    assert.strictEqual(
      refused.message,
      "from: a@evil.example is not on a verified domain of organization org_acme (its verified domains are acme.example, acme.mailroom.test, and their subdomains); nothing was sent"
    )
    assert.strictEqual(provider.sent.length, 3, "the provider saw no new message")
  })

  it("downloads and deletes by key and by attachment id, within the caller's organisation", async () => {
    const byKey = await uploadPdf({ apiKey: "mr_acme" })
    const download = await mailroom.download({ apiKey: "mr_acme" }, { key: byKey.key })
    assert.strictEqual(await (await store.fetch(download.download_url)).text(), "%PDF")
    const foreign = await rejection(mailroom.download({ apiKey: "mr_globex" }, { key: byKey.key }))
    assert.strictEqual((foreign as MailroomError.MailroomError)._tag, "NotFound")
    assert.deepStrictEqual(await mailroom.delete({ apiKey: "mr_acme" }, { key: byKey.key }), {
      deleted: true,
      key: byKey.key
    })

    const byId = await uploadPdf({ accessToken: "tok_acme" })
    const viaId = await mailroom.download({ accessToken: "tok_acme" }, { attachmentId: byId.attachment_id })
    assert.strictEqual(viaId.expires_in, 3600)
    assert.deepStrictEqual(await mailroom.delete({ accessToken: "tok_acme" }, { attachmentId: byId.attachment_id }), {
      deleted: true,
      attachment_id: byId.attachment_id
    })
    const gone = await rejection(mailroom.download({ accessToken: "tok_acme" }, { attachmentId: byId.attachment_id }))
    assert.strictEqual((gone as MailroomError.MailroomError)._tag, "NotFound")
  })
})

describe("Mailroom.make: records and suppressions", () => {
  const records = Mailroom.make({
    // The memory provider as a layer reports each recipient delivered, as a vendor's webhook would.
    provider: EmailProvider.layerMemory(),
    store: Layer.succeed(ObjectStore.ObjectStore, ObjectStore.makeMemory()),
    organizations: Organizations.layerStatic({
      serviceDomain: "mailroom.test",
      organizations: [
        { id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"], apiKeys: ["mr_acme"] },
        { id: "org_globex", slug: "globex", verifiedDomains: ["globex.example"], apiKeys: ["mr_globex"] }
      ]
    })
  })
  afterAll(() => records.dispose())
  const acme = { apiKey: "mr_acme" }
  const globex = { orgId: "org_globex" }
  const message = (subject: string) => ({
    from: "a@acme.example",
    to: ["bob@example.com"],
    subject,
    body: { text: "x" },
    tags: [{ name: "kind", value: subject }]
  })

  it("reads a sent message back, delivered, and pages the organisation's records", async () => {
    const first = (await records.send(acme, message("one"))).response.message_id
    const second = (await records.send(acme, message("two"))).response.message_id
    await records.send(globex, { ...message("theirs"), from: "g@globex.example" })
    const detail = await records.getEmail(acme, first)
    assert.strictEqual(detail.status, "delivered")
    assert.deepStrictEqual(
      detail.recipients.map((r) => [r.email, r.state]),
      [["bob@example.com", "delivered"]]
    )
    assert.deepStrictEqual(
      detail.events.map((e) => e.type),
      ["delivered"]
    )
    const page = await records.listEmails(acme, { limit: 1 })
    assert.deepStrictEqual(
      page.data.map((r) => r.id),
      [second]
    )
    const next = await records.listEmails(acme, { limit: 1, cursor: page.next_cursor ?? "" })
    assert.deepStrictEqual(
      next.data.map((r) => r.id),
      [first]
    )
    assert.deepStrictEqual(
      (await records.listEmails(acme, { tag: "kind:two" })).data.map((r) => r.id),
      [second]
    )
    assert.deepStrictEqual(
      (await records.listEmails(globex)).data.map((r) => r.subject),
      ["theirs"]
    )
    const missing = await rejection(records.getEmail(globex, first))
    assert.isTrue(MailroomError.isNotFound(missing), "another organisation's id")
    const invalid = await rejection(records.listEmails(acme, { limit: 0 }))
    assert.isTrue(MailroomError.isValidationError(invalid))
    assert.deepStrictEqual((invalid as MailroomError.ValidationError).errors, [
      "limit: must be a whole number from 1 to 100"
    ])
  })

  it("suppresses, refuses a send to the suppressed address alone, and takes it off again", async () => {
    const added = await records.suppress(acme, { email: "eve@example.com" })
    assert.strictEqual(added.created, true)
    assert.strictEqual(added.suppression.reason, "manual")
    assert.strictEqual((await records.suppress(acme, { email: "eve@example.com" })).created, false)
    const refused = await rejection(records.send(acme, { ...message("x"), to: ["eve@example.com"] }))
    assert.isTrue(ProviderError.isProviderError(refused))
    assert.strictEqual((refused as ProviderError.ProviderError).reason._tag, "RecipientSuppressed")
    assert.deepStrictEqual(
      (await records.listSuppressions(acme)).data.map((s) => s.email),
      ["eve@example.com"]
    )
    assert.deepStrictEqual((await records.listSuppressions(globex)).data, [])
    assert.isTrue(MailroomError.isNotFound(await rejection(records.unsuppress(globex, "eve@example.com"))))
    assert.deepStrictEqual(await records.unsuppress(acme, "eve@example.com"), {
      deleted: true,
      email: "eve@example.com"
    })
    const { response } = await records.send(acme, { ...message("y"), to: ["eve@example.com"] })
    assert.strictEqual((await records.getEmail(acme, response.message_id)).status, "delivered")
  })
})

describe("Mailroom.make: dispose during a send", () => {
  it("waits for the send to answer before releasing the layers; a call made meanwhile is Unavailable", async () => {
    const memory = EmailProvider.makeMemory()
    const order: Array<string> = []
    let called = () => {}
    const reached = new Promise<void>((resolve) => {
      called = resolve
    })
    let answer = () => {}
    const gate = new Promise<void>((resolve) => {
      answer = resolve
    })
    // A provider that holds each message until the test lets it answer, and says when it is released.
    const slow = Layer.effect(
      EmailProvider.EmailProvider,
      Effect.as(
        Effect.addFinalizer(() => Effect.sync(() => order.push("released"))),
        EmailProvider.EmailProvider.of({
          ...memory,
          send: (email) =>
            Effect.andThen(
              Effect.promise(() => {
                called()
                return gate
              }),
              memory.send(email)
            )
        })
      )
    )
    const client = Mailroom.make({
      provider: slow,
      store: ObjectStore.layerMemory(),
      organizations: Organizations.single({ domains: ["app.example"] })
    })
    const request = { from: "a@app.example", to: ["b@example.com"], subject: "Hi", body: { text: "x" } }
    const sending = client.send(request).then(({ response }) => {
      order.push("answered")
      return response
    })
    await reached
    const disposed = client.dispose()
    const late = await rejection(client.send(request))
    assert.isTrue(MailroomError.isMailroomError(late))
    assert.strictEqual((late as MailroomError.MailroomError)._tag, "Unavailable")
    assert.match((late as Error).message, /shutting down.*nothing was done/)
    answer()
    const response = await sending
    await disposed
    assert.strictEqual(response.message_id, memory.sent[0]?.messageId)
    assert.strictEqual(memory.sent.length, 1, "the call made during dispose sent nothing")
    assert.deepStrictEqual(order, ["answered", "released"])
  })
})
