// The outbox writes messages in one synchronous pass over nodemailer's compiled tree: every byte must
// be the one nodemailer's own streaming build() writes for the same tree.
import { randomBytes } from "node:crypto"
import MailComposer from "nodemailer/lib/mail-composer"
import { assert, describe, it } from "vitest"
import { serialize } from "../src/internal/mime.js"

type Mail = ConstructorParameters<typeof MailComposer>[0]

const base: Mail = {
  from: { name: "Acme Billing", address: "billing@acme.example" },
  to: ["alice@example.com", "bob@example.com"],
  cc: ["carol@example.com"],
  subject: "Your invoice",
  messageId: "<0190-test@outbox.mailroom>",
  date: new Date(Date.UTC(2026, 0, 2, 3, 4, 5)),
  headers: [{ key: "X-Mailroom-Organization", value: "org_acme" }],
  disableFileAccess: true,
  disableUrlAccess: true
}

const cases: Record<string, Mail> = {
  "plain ASCII text": { ...base, text: "Thanks for your order." },
  "text and html": { ...base, text: "See attached.", html: "<p>See <b>attached</b>.</p>" },
  "html only": { ...base, html: "<p>Only HTML</p>" },
  "Unicode everywhere": {
    ...base,
    from: { name: "Zoë Ångström — Açme", address: "billing@acme.example" },
    subject: "Relevé de compte été 2026 📎 日本語",
    text: "Bonjour Zoë,\r\nvotre relevé est prêt. ✓\r\n",
    html: "<p>Grüße, 日本語のテキスト</p>"
  },
  "long lines, trailing spaces and tabs": {
    ...base,
    text: `${"word ".repeat(60)}\nend with spaces   \n\ttabbed line\t\n${"x".repeat(200)}`,
    html: `<p>${"long ".repeat(100)}</p>   `
  },
  "lone CR and LF, and no final line break": { ...base, text: "a\rb\nc\r\nd" },
  attachments: {
    ...base,
    text: "Files attached.",
    attachments: [
      { filename: "report.pdf", contentType: "application/pdf", content: randomBytes(10_000) },
      { filename: "notes.txt", contentType: "text/plain", content: Buffer.from("plain notes\r\nline two é") },
      { filename: "Relevé août (final).csv", contentType: "text/csv", content: Buffer.from("a,b\r\n1,2\r\n") },
      { filename: "empty.bin", contentType: "application/octet-stream", content: Buffer.alloc(0) },
      { filename: "odd.bin", contentType: "application/octet-stream", content: randomBytes(57 * 3 + 1) },
      // Written a chunk of 1024 lines at a time: exactly one chunk, one byte short, and across chunks.
      { filename: "chunk.bin", contentType: "application/octet-stream", content: randomBytes(57 * 1024) },
      { filename: "short.bin", contentType: "application/octet-stream", content: randomBytes(57 * 1024 - 1) },
      { filename: "long.bin", contentType: "application/octet-stream", content: randomBytes(57 * 2048 + 5) }
    ]
  },
  "custom headers folded, an inline part and names in the caller's case": {
    ...base,
    text: "Hi",
    html: '<img src="cid:logo@acme.example">',
    headers: [
      {
        key: "List-Unsubscribe",
        value: `<https://acme.example/u/${"0123456789".repeat(12)}>, <mailto:u@acme.example>`
      },
      { key: "X-MyApp-ID", value: "Été 2026" }
    ],
    normalizeHeaderKey: (key) => (key.toLowerCase() === "x-myapp-id" ? "X-MyApp-ID" : key),
    attachments: [
      {
        filename: "logo.png",
        contentType: "image/png",
        content: randomBytes(500),
        cid: "logo@acme.example",
        contentDisposition: "inline",
        contentTransferEncoding: "base64"
      }
    ]
  },
  "a forwarded message, base64 and attached as the outbox sends it": {
    ...base,
    text: "Forwarded.",
    attachments: [
      {
        filename: "forwarded.eml",
        contentType: "message/rfc822",
        content: Buffer.from("Subject: inner\r\n\r\n--boundary\nbare LF é\r\n"),
        contentDisposition: "attachment",
        contentTransferEncoding: "base64"
      }
    ]
  },
  "html with attachments and no text": {
    ...base,
    html: "<p>Hi</p>",
    attachments: [{ filename: "a.png", contentType: "image/png", content: randomBytes(300) }]
  }
}

describe("the outbox's MIME writer", () => {
  for (const [name, mail] of Object.entries(cases)) {
    it(`writes nodemailer's bytes: ${name}`, async () => {
      const node = new MailComposer(mail).compile()
      const written = serialize(node)
      assert.isDefined(written, "the writer declined a message the outbox makes")
      const built = await node.build()
      assert.strictEqual(written?.toString("latin1"), built.toString("latin1"))
    })
  }

  it("declines what only build() can write: a stream as content", async () => {
    const { Readable } = await import("node:stream")
    const node = new MailComposer({ ...base, text: Readable.from(["streamed"]) }).compile()
    assert.isUndefined(serialize(node))
  })
})
