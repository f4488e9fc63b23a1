// An attachment's content type on a server in process, read back from the .eml the outbox writes: a
// multipart type would make the file a container of parts, which mail clients drop, so it never is one.
import { readdir, readFile } from "node:fs/promises"
import { join } from "node:path"
import { type TempDir, tempDir } from "@mailroom/test-support"
import { simpleParser } from "mailparser"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { Server, ServerConfig } from "../src/index.js"

let temp: TempDir
let dir: string
let server: Server.RunningServer

beforeAll(async () => {
  temp = await tempDir("attachment-types")
  dir = temp.path
  const config = ServerConfig.parse(
    {
      port: 0,
      serviceDomain: "mailroom.test",
      organizations: [{ id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"], apiKeys: ["mr_test_acme"] }],
      storage: { kind: "local", dir: "storage", signingSecret: "attachment-types-test" },
      provider: { kind: "outbox", dir: "outbox" }
    },
    { baseDir: dir, source: "test config" }
  )
  server = await Server.start(config, { log: () => {} })
})
afterAll(async () => {
  await server?.close()
  await temp?.remove()
})

const call = async (path: string, body: unknown) => {
  const response = await fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { "x-api-key": "mr_test_acme", "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  return { status: response.status, body: (await response.json()) as Record<string, unknown> }
}

/** A file uploaded through a presigned URL with this content type; its key. */
const upload = async (contentType: string, bytes: string) => {
  const presigned = await call("/attachments/presign", { filename: "report.txt", content_type: contentType })
  assert.strictEqual(presigned.status, 201, JSON.stringify(presigned.body))
  const put = await fetch(String(presigned.body.url), {
    method: "PUT",
    headers: { "content-type": contentType },
    body: bytes
  })
  assert.strictEqual(put.status, 200)
  return String(presigned.body.key)
}

const message = {
  from: "billing@acme.example",
  to: ["alice@example.com"],
  subject: "Your report",
  body: { text: "Hi" }
}
const outbox = async () => (await readdir(join(dir, "outbox")).catch(() => [])).filter((f) => f.endsWith(".eml"))

describe("an attachment's content type", () => {
  it("given as multipart/*, is a 400 naming it, on a send and in a batch, and nothing is sent", async () => {
    const key = await upload("application/pdf", "%PDF-1.7 the report")
    const before = await outbox()
    for (const contentType of ['multipart/mixed; boundary="--_NmP"', "Multipart/Related"]) {
      const attachments = [{ filename: "report.pdf", key, content_type: contentType }]
      const sent = await call("/emails", { ...message, attachments })
      assert.strictEqual(sent.status, 400, JSON.stringify(sent.body))
      assert.deepStrictEqual(sent.body, {
        errors: [
          `attachments[0].content_type: ${contentType} is a container of parts, not a file's type; give the file's own type, or application/octet-stream`
        ]
      })
      const batch = await call("/emails/batch", [{ ...message, attachments }])
      assert.strictEqual(batch.status, 400, JSON.stringify(batch.body))
      assert.deepStrictEqual(batch.body.errors, [{ index: 0, errors: (sent.body.errors as Array<string>).slice() }])
    }
    assert.deepStrictEqual(await outbox(), before, "nothing reached the outbox")
  })

  it("stored as multipart/* and not given, the file is sent whole as application/octet-stream", async () => {
    const key = await upload("multipart/related", "the report's bytes")
    const sent = await call("/emails", { ...message, attachments: [{ filename: "report.txt", key }] })
    assert.strictEqual(sent.status, 201, JSON.stringify(sent.body))
    const id = String(sent.body.message_id)
    const eml = await simpleParser(await readFile(join(dir, "outbox", `${id}.eml`)))
    // The part's own header: mailparser would guess text/plain from the file name.
    assert.deepStrictEqual(
      eml.attachments.map((a) => [a.filename, a.headers.get("content-type"), a.content.toString("utf8")]),
      [["report.txt", { value: "application/octet-stream", params: { name: "report.txt" } }, "the report's bytes"]]
    )
    const record = await fetch(`${server.url}/emails/${id}`, { headers: { "x-api-key": "mr_test_acme" } })
    const { attachments } = (await record.json()) as { attachments: Array<{ content_type: string }> }
    assert.deepStrictEqual(
      attachments.map((a) => a.content_type),
      ["application/octet-stream"],
      "the record says the type it was sent with"
    )
  })
})
