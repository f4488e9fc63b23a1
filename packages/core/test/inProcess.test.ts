// What an application that embeds mailroom in process sees: one organisation and no principal to
// pass, attachments given as the bytes it holds, and a misconfiguration reported at start-up.

import { rejection } from "@mailroom/test-support"
import { Config, ConfigProvider, Effect, Layer } from "effect"
import { afterAll, assert, describe, it } from "vitest"
import { EmailProvider, Mailroom, type MailroomError, ObjectStore, Organizations, ProviderError } from "../src/index.js"

const message = { from: "hello@app.example", to: ["alice@example.com"], subject: "Hi", body: { text: "Hi" } }

describe("Organizations.single", () => {
  const provider = EmailProvider.makeMemory({
    limits: { ...EmailProvider.memoryLimits, forbiddenExtensions: ["exe"], maxMessageBytes: 4096 }
  })
  const store = ObjectStore.makeMemory()
  const mailroom = Mailroom.make({
    provider: Layer.succeed(EmailProvider.EmailProvider, provider),
    store: Layer.succeed(ObjectStore.ObjectStore, store),
    organizations: Organizations.single({ domains: ["app.example"] })
  })
  afterAll(() => mailroom.dispose())

  it("sends without a caller, from the application's domains and no others", async () => {
    await mailroom.ready
    const { response } = await mailroom.send(message)
    assert.strictEqual(provider.sent.at(-1)?.email.subject, "Hi")
    assert.strictEqual(response.message_id, provider.sent.at(-1)?.messageId)
    for (const from of ["x@elsewhere.example", "x@app.single.mailroom.invalid"]) {
      const refused = await rejection(mailroom.send({ ...message, from }))
      assert.isTrue(ProviderError.isProviderError(refused))
      assert.strictEqual((refused as ProviderError.ProviderError).reason._tag, "SenderNotVerified")
    }
  })

  it("presigns, downloads and deletes without a caller, under attachments/app/", async () => {
    const presigned = await mailroom.presign({ filename: "a.txt", content_type: "text/plain" })
    assert.match(presigned.key, /^attachments\/app\/\d+_[0-9a-f]+-a\.txt$/)
    await store.fetch(presigned.url, { method: "PUT", headers: { "content-type": "text/plain" }, body: "stored" })
    await mailroom.send({ ...message, attachments: [{ filename: "a.txt", key: presigned.key }] })
    assert.strictEqual(new TextDecoder().decode(provider.sent.at(-1)?.email.attachments[0]?.content), "stored")
    const download = await mailroom.download({ key: presigned.key })
    assert.strictEqual(await (await store.fetch(download.download_url)).text(), "stored")
    assert.deepStrictEqual(await mailroom.delete({ key: presigned.key }), { deleted: true, key: presigned.key })
  })

  it("reads records and keeps suppressions without a caller", async () => {
    const { response } = await mailroom.send(message)
    assert.strictEqual((await mailroom.getEmail(response.message_id)).subject, "Hi")
    assert.strictEqual((await mailroom.listEmails({ limit: 1 })).data[0]?.id, response.message_id)
    assert.isTrue((await mailroom.suppress({ email: "carol@example.com" })).created)
    assert.deepStrictEqual(
      (await mailroom.listSuppressions({ reason: "manual" })).data.map((s) => s.email),
      ["carol@example.com"]
    )
    assert.deepStrictEqual(await mailroom.unsuppress("carol@example.com"), {
      deleted: true,
      email: "carol@example.com"
    })
  })

  it("sends attachments given as bytes or text, beside stored ones", async () => {
    const pdf = new Uint8Array([0x25, 0x50, 0x44, 0x46, 0, 255])
    const { response } = await mailroom.send({
      ...message,
      attachments: [
        { filename: "invoice.pdf", content: pdf, content_type: "application/pdf" },
        { filename: "notes.txt", content: "été" }
      ]
    })
    const sent = provider.sent.at(-1)?.email.attachments ?? []
    assert.deepStrictEqual(
      sent.map((a) => [a.filename, a.contentType, [...a.content]]),
      [
        ["invoice.pdf", "application/pdf", [...pdf]],
        ["notes.txt", "application/octet-stream", [...new TextEncoder().encode("été")]]
      ]
    )
    assert.deepStrictEqual(response.attachments, [], "only stored files have keys")
  })

  it("checks bytes as it checks stored files: extension, size after base64, key or content", async () => {
    const refused = (await rejection(
      mailroom.send({
        ...message,
        attachments: [
          { filename: "run.exe", content: "MZ" },
          { filename: "big.bin", content: new Uint8Array(4000) },
          { filename: "both.txt", key: "attachments/app/1-x.txt", content: "x" },
          { filename: "none.txt" }
        ]
      })
    )) as MailroomError.ValidationError
    assert.strictEqual(refused._tag, "ValidationError")
    assert.deepStrictEqual(refused.errors, [
      "attachments[2]: must have either a key or content",
      "attachments[3]: must have either a key or content"
    ])
    const checked = (await rejection(
      mailroom.send({
        ...message,
        attachments: [
          { filename: "run.exe", content: "MZ" },
          { filename: "big.bin", content: new Uint8Array(4000) }
        ]
      })
    )) as MailroomError.ValidationError
    assert.deepStrictEqual(checked.errors, [
      "attachments[0].filename: .exe files are not accepted by the provider",
      "attachments: the message is 5342 bytes with attachments base64-encoded; the provider accepts at most 4096"
    ])
  })

  it("with several organisations, a call without a caller is refused, saying why", async () => {
    const several = Mailroom.make({
      provider: EmailProvider.layerMemory(),
      store: ObjectStore.layerMemory(),
      organizations: Organizations.layerStatic({
        serviceDomain: "mailroom.test",
        organizations: [
          { id: "a", slug: "a" },
          { id: "b", slug: "b" }
        ]
      })
    })
    const refused = (await rejection(several.send(message))) as MailroomError.Unauthorized
    assert.strictEqual(refused._tag, "Unauthorized")
    assert.match(refused.message, /there is not exactly one organisation/)
    await several.dispose()
  })

  it("refuses what cannot be an application's configuration, in its own field names", () => {
    assert.throws(() => Organizations.makeSingle({ domains: [] }), /^domains: give at least one/)
    assert.throws(() => Organizations.makeSingle({ domains: ["not a domain"] }), /^domains\[0\]: not a domain name/)
    assert.throws(() => Organizations.makeSingle({ domains: ["a.example"], apiKeys: ["k", "k"] }), /^apiKeys\[1\]/)
  })
})

describe("bytes given in process count in the attachment memory budget", () => {
  it("a send that would go over waits, then is Unavailable with nothing sent", async () => {
    let open = () => {}
    const gate = new Promise<void>((resolve) => {
      open = resolve
    })
    const inner = EmailProvider.makeMemory()
    const held: EmailProvider.EmailProvider = {
      ...inner,
      send: (email) =>
        Effect.andThen(
          Effect.promise(() => gate),
          inner.send(email)
        )
    }
    const mailroom = Mailroom.make({
      provider: Layer.succeed(EmailProvider.EmailProvider, held),
      store: ObjectStore.layerMemory(),
      organizations: Organizations.single({ domains: ["app.example"] }),
      mailer: { attachmentBytesInFlight: 10, attachmentBudgetWait: "50 millis" }
    })
    const withBytes = { ...message, attachments: [{ filename: "a.bin", content: new Uint8Array(8) }] }
    const first = mailroom.send(withBytes)
    await new Promise((resolve) => setTimeout(resolve, 20))
    const second = (await rejection(mailroom.send(withBytes))) as MailroomError.Unavailable
    assert.strictEqual(second._tag, "Unavailable")
    open()
    await first
    assert.strictEqual(inner.sent.length, 1)
    await mailroom.dispose()
  })
})

describe("Mailroom.make with a layer that cannot be built", () => {
  it("rejects ready at start-up, naming the missing variable", async () => {
    const organizations = Layer.effect(
      Organizations.Organizations,
      Effect.map(Config.String("MAILROOM_APP_DOMAIN"), (domain) => Organizations.makeSingle({ domains: [domain] }))
    ).pipe(Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({}))))
    const mailroom = Mailroom.make({
      provider: EmailProvider.layerMemory(),
      store: ObjectStore.layerMemory(),
      organizations
    })
    const error = (await rejection(mailroom.ready)) as Error
    assert.match(error.message, /^mailroom could not start: .*MAILROOM_APP_DOMAIN/s)
    await mailroom.dispose()
  })
})
