// attachments.* against a real server with local storage: uploads of every kind of data read back
// byte for byte, both variants (key with x-api-key, attachment id with Bearer), and their errors.

import { rejection } from "@mailroom/test-support"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { AuthenticationError, ForbiddenError, MailroomClient, NotFoundError, ValidationError } from "../src/index.js"
import { type Gateway, startGateway } from "./support/gateway.js"
import { acme, globex, type Mailroom, startMailroom } from "./support/mailroom.js"

const bytes = (n: number) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + 7) % 256)

const streamOf = (content: Uint8Array, chunk = 1000) =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      for (let i = 0; i < content.length; i += chunk) controller.enqueue(content.slice(i, i + chunk))
      controller.close()
    }
  })

describe("attachments against a running server", () => {
  let mailroom: Mailroom
  // Every API call goes through a forwarding gateway, so a test can see what the client asked.
  let gateway: Gateway
  beforeAll(async () => {
    mailroom = await startMailroom()
    gateway = await startGateway(mailroom.url, () => ({ kind: "forward" }))
  })
  afterAll(async () => {
    await gateway?.close()
    await mailroom?.close()
  })
  const withKey = () => MailroomClient.make({ baseUrl: gateway.url, apiKey: acme.apiKey })
  const withToken = () => MailroomClient.make({ baseUrl: gateway.url, accessToken: acme.accessToken })
  const presignsSince = (from: number) =>
    gateway.seen
      .slice(from)
      .filter((s) => s.path.endsWith("/attachments/presign"))
      .map((s) => ({ path: s.path, body: JSON.parse(s.body) as Record<string, unknown> }))

  const kinds: ReadonlyArray<[string, (content: Uint8Array) => MailroomClient.UploadData]> = [
    ["Uint8Array", (content) => content],
    ["ArrayBuffer", (content) => content.slice().buffer],
    ["Blob", (content) => new Blob([content.slice()])],
    ["ReadableStream", (content) => streamOf(content)]
  ]
  for (const [kind, as] of kinds) {
    it(`uploads a ${kind} in one call; the stored file reads back the same, with its content type`, async () => {
      const content = bytes(5000)
      const client = withKey()
      const { key, attachmentId } = await client.attachments.upload({
        filename: `report-${kind}.pdf`,
        contentType: "application/pdf",
        data: as(content)
      })
      assert.match(key, new RegExp(`^attachments/org_acme/\\d+_[0-9a-f]{20}-report-${kind}\\.pdf$`))
      assert.match(attachmentId, /^att_[0-9a-f]+$/)
      assert.deepStrictEqual(await client.attachments.read({ key }), content)
      // And without the client: the download URL itself.
      const { download_url, expires_in } = await client.attachments.download({ key })
      assert.strictEqual(expires_in, 3600)
      const fetched = await fetch(download_url)
      assert.strictEqual(fetched.headers.get("content-type"), "application/pdf")
      assert.deepStrictEqual(new Uint8Array(await fetched.arrayBuffer()), content)
    })
  }

  it("binds the size in the presign when it is known, so the URL takes exactly that many bytes", async () => {
    const from = gateway.seen.length
    const client = withKey()
    await client.attachments.upload({ filename: "a.bin", data: bytes(10) })
    await client.attachments.upload({ filename: "b.bin", data: streamOf(bytes(20)) })
    await client.attachments.upload({ filename: "c.bin", data: streamOf(bytes(30)), contentLength: 30 })
    assert.deepStrictEqual(
      presignsSince(from).map((p) => p.body),
      [
        { filename: "a.bin", content_type: "application/octet-stream", content_length: 10 },
        { filename: "b.bin", content_type: "application/octet-stream" },
        { filename: "c.bin", content_type: "application/octet-stream", content_length: 30 }
      ]
    )
  })

  it("takes a Blob's own type when no contentType is given", async () => {
    const client = withKey()
    const { key } = await client.attachments.upload({
      filename: "notes.txt",
      data: new Blob(["hello"], { type: "text/plain" })
    })
    const fetched = await fetch((await client.attachments.download({ key })).download_url)
    assert.strictEqual(fetched.headers.get("content-type"), "text/plain")
    assert.strictEqual(await fetched.text(), "hello")
  })

  it("by key: delete answers {deleted, key}, after which download is a NotFoundError", async () => {
    const client = withKey()
    const { key } = await client.attachments.upload({ filename: "old.txt", contentType: "text/plain", data: bytes(3) })
    assert.deepStrictEqual(await client.attachments.delete({ key }), { deleted: true, key })
    const error = await rejection(client.attachments.download({ key }))
    assert.isTrue(NotFoundError.isInstance(error))
    assert.strictEqual((error as NotFoundError).status, 404)
    assert.isNotEmpty((error as NotFoundError).messages)
  })

  it("by attachment id with only an access token: the /v1 variant from presign to delete", async () => {
    const from = gateway.seen.length
    const client = withToken()
    const content = bytes(64)
    const { attachmentId } = await client.attachments.upload({ filename: "v1.bin", data: content })
    assert.deepStrictEqual(await client.attachments.read({ attachmentId }), content)
    assert.deepStrictEqual(await client.attachments.delete({ attachmentId }), {
      deleted: true,
      attachment_id: attachmentId
    })
    const error = await rejection(client.attachments.download({ attachmentId }))
    assert.isTrue(NotFoundError.isInstance(error))
    assert.deepStrictEqual(
      gateway.seen.slice(from).map((s) => `${s.method} ${s.path.split("?")[0]} ${s.headers.authorization}`),
      [
        `POST /v1/attachments/presign Bearer ${acme.accessToken}`,
        `GET /v1/attachments/download Bearer ${acme.accessToken}`,
        `DELETE /v1/attachments Bearer ${acme.accessToken}`,
        `GET /v1/attachments/download Bearer ${acme.accessToken}`
      ]
    )
  })

  it("another organisation's attachment is a NotFoundError, by key and by id", async () => {
    const { key, attachmentId } = await withKey().attachments.upload({ filename: "private.txt", data: bytes(5) })
    const other = MailroomClient.make({ baseUrl: gateway.url, apiKey: globex.apiKey, accessToken: globex.accessToken })
    assert.isTrue(NotFoundError.isInstance(await rejection(other.attachments.download({ key }))))
    assert.isTrue(NotFoundError.isInstance(await rejection(other.attachments.download({ attachmentId }))))
    assert.isTrue(NotFoundError.isInstance(await rejection(other.attachments.delete({ key }))))
  })

  it("an orgId that is not the caller's is a ForbiddenError", async () => {
    const error = await rejection(
      withKey().attachments.upload({ filename: "x.txt", data: bytes(1), orgId: "org_globex" })
    )
    assert.isTrue(ForbiddenError.isInstance(error))
    assert.strictEqual((error as ForbiddenError).status, 403)
  })

  it("a bad access token on /v1 is an AuthenticationError; an empty filename a ValidationError", async () => {
    const bad = MailroomClient.make({ baseUrl: gateway.url, accessToken: "tok_wrong" })
    assert.isTrue(AuthenticationError.isInstance(await rejection(bad.attachments.download({ attachmentId: "att_00" }))))
    const invalid = await rejection(withKey().attachments.presign({ filename: " " }))
    assert.isTrue(ValidationError.isInstance(invalid))
    assert.deepStrictEqual((invalid as ValidationError).errors, ["filename: must not be empty"])
  })

  it("an operation needing the credential the client lacks fails before any request", async () => {
    const from = gateway.seen.length
    const error = await rejection(withKey().attachments.download({ attachmentId: "att_00" }))
    assert.instanceOf(error, TypeError)
    assert.match((error as TypeError).message, /needs an accessToken/)
    assert.isTrue(
      (await rejection(withToken().emails.send({ from: "a@acme.example", to: [], subject: "", body: {} }))) instanceof
        TypeError
    )
    assert.strictEqual(gateway.seen.length, from)
  })

  it("an uploaded file goes out attached to a send", async () => {
    const client = withKey()
    const { key } = await client.attachments.upload({
      filename: "invoice.txt",
      contentType: "text/plain",
      data: new TextEncoder().encode("Invoice 42")
    })
    const sent = await client.emails.send({
      from: "billing@acme.example",
      to: ["alice@example.com"],
      subject: "Your invoice",
      body: { text: "Attached." },
      attachments: [{ filename: "invoice.txt", key, content_type: "text/plain" }]
    })
    assert.deepStrictEqual(sent.attachments, [key])
    const eml = await mailroom.readSent(`${sent.message_id}.eml`)
    assert.match(eml, /filename="?invoice\.txt"?/)
    assert.include(eml, Buffer.from("Invoice 42").toString("base64"))
  })
})
