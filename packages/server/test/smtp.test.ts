// `"provider": {"kind": "smtp"}`: the config section (secrets from the environment, unknown fields named),
// /readyz reaching the SMTP server, and the built server in its own process sending through smtp-server
// over STARTTLS with a login and a DKIM key: the message received parses back and its signature verifies.
import { writeFile } from "node:fs/promises"
import { join } from "node:path"
import { type SelfSignedCertificate, selfSignedCertificate, type TempDir, tempDir } from "@mailroom/test-support"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { dkimTestKey, headerValues, parseReceived, verifyDkim } from "../../smtp/test/support/received.js"
import * as SmtpPeer from "../../smtp/test/support/SmtpPeer.js"
import { Server, ServerConfig } from "../src/index.js"
import { configFor, problemsOf } from "./support/providerConfig.js"
import { startServer } from "./support/serverProcess.js"

describe('the "smtp" provider section', () => {
  it("takes nodemailer's option names, with secrets plain or from the environment", () => {
    const config = ServerConfig.parse(
      configFor({
        kind: "smtp",
        host: "smtp.acme.example",
        port: 465,
        secure: true,
        auth: { user: "mailer", pass: { env: "SMTP_PASS" } },
        dkim: { domainName: "acme.example", keySelector: "mr1", privateKey: { env: "DKIM_KEY" } },
        socketTimeout: "30 seconds",
        maxConnections: 2
      }),
      { env: { SMTP_PASS: "from-env", DKIM_KEY: "-----BEGIN PRIVATE KEY-----" } }
    )
    assert.deepStrictEqual(config.provider, {
      kind: "smtp",
      host: "smtp.acme.example",
      port: 465,
      secure: true,
      auth: { user: "mailer", pass: "from-env" },
      dkim: { domainName: "acme.example", keySelector: "mr1", privateKey: "-----BEGIN PRIVATE KEY-----" },
      socketTimeout: "30 seconds",
      maxConnections: 2
    })
  })

  it("refuses an unknown field, a bad port and an unset variable, naming each", () => {
    assert.deepStrictEqual(problemsOf(configFor({ kind: "smtp", host: "smtp.acme.example", hots: "x" })), [
      "provider.hots: is not a known field"
    ])
    assert.deepStrictEqual(problemsOf(configFor({ kind: "smtp", host: "smtp.acme.example", port: 0 })), [
      "provider.port: must be a port number (1-65535)"
    ])
    assert.deepStrictEqual(
      problemsOf(
        configFor({ kind: "smtp", host: "smtp.acme.example", auth: { user: "mailer", pass: { env: "NOPE" } } })
      ),
      ["provider.auth.pass: the environment variable NOPE is not set"]
    )
    assert.deepStrictEqual(problemsOf(configFor({ kind: "smtp" })), ["provider.host: is required"])
  })

  it("a DKIM key that is no key stops start-up, naming provider.dkim.privateKey, never the key", async () => {
    const dir = await tempDir("server-smtp-key")
    try {
      const config = ServerConfig.parse(
        configFor({
          kind: "smtp",
          host: "127.0.0.1",
          port: 2525,
          dkim: { domainName: "acme.example", keySelector: "mr1", privateKey: "secret-looking-garbage" }
        }),
        { baseDir: dir.path }
      )
      const error = await Server.start(config, { log: () => {} }).then(
        () => undefined,
        (cause: unknown) => cause
      )
      assert.isTrue(ServerConfig.isServerConfigError(error))
      assert.match(String((error as Error).message), /provider\.dkim\.privateKey: must be an RSA private key/)
      assert.notInclude(String((error as Error).message), "secret-looking-garbage")
    } finally {
      await dir.remove()
    }
  })
})

describe("/readyz with an SMTP provider", () => {
  let peer: SmtpPeer.Peer
  let dir: TempDir
  let server: Server.RunningServer
  beforeAll(async () => {
    peer = await SmtpPeer.start({ hideSTARTTLS: true })
    dir = await tempDir("server-smtp-ready")
    server = await Server.start(
      ServerConfig.parse(configFor({ kind: "smtp", host: "127.0.0.1", port: peer.port }), { baseDir: dir.path }),
      { log: () => {} }
    )
  }, 30_000)
  afterAll(async () => {
    await server?.close()
    await peer?.close()
    await dir?.remove()
  })

  it("connects and greets: ready; with the SMTP server gone, 503 naming it", { timeout: 60_000 }, async () => {
    const before = peer.connections()
    const ready = await fetch(`${server.url}/readyz`)
    assert.strictEqual(ready.status, 200)
    assert.deepStrictEqual(await ready.json(), {
      ready: true,
      checks: { storage: "ok", messages: "ok", queue: "ok", provider: "ok" }
    })
    assert.strictEqual(peer.connections(), before + 1, "the check opened a connection of its own")
    assert.strictEqual(peer.attempts(), 0)
    await peer.close()
    // A passing check is trusted for 15 s (vendors count each call): await the next one, not a sleep.
    let down = await fetch(`${server.url}/readyz`)
    for (const deadline = Date.now() + 40_000; down.status === 200 && Date.now() < deadline; ) {
      await new Promise((resolve) => setTimeout(resolve, 500))
      down = await fetch(`${server.url}/readyz`)
    }
    assert.strictEqual(down.status, 503)
    const body = (await down.json()) as { checks: Record<string, string> }
    assert.match(body.checks.provider ?? "", new RegExp(`127\\.0\\.0\\.1:${peer.port}.*ECONNREFUSED`))
  })
})

describe("the server process with an SMTP provider (black box)", () => {
  const key = dkimTestKey()
  const password = "relay-Pa55word"
  let certificate: SelfSignedCertificate
  let peer: SmtpPeer.Peer
  let dir: TempDir
  let server: Awaited<ReturnType<typeof startServer>>

  beforeAll(async () => {
    certificate = await selfSignedCertificate()
    peer = await SmtpPeer.start({ key: certificate.key, cert: certificate.cert, users: { mailer: password } })
    dir = await tempDir("server-smtp")
    const path = join(dir.path, "mailroom.config.json")
    await writeFile(
      path,
      JSON.stringify(
        configFor({
          kind: "smtp",
          host: "localhost",
          port: peer.port,
          auth: { user: "mailer", pass: { env: "SMTP_PASS" } },
          dkim: { domainName: key.domainName, keySelector: key.keySelector, privateKey: { env: "DKIM_PRIVATE_KEY" } }
        })
      )
    )
    // The relay's certificate is trusted the way an operator trusts a private CA: NODE_EXTRA_CA_CERTS.
    server = await startServer(path, {
      SMTP_PASS: password,
      DKIM_PRIVATE_KEY: key.privateKey,
      NODE_EXTRA_CA_CERTS: certificate.certFile
    })
  }, 60_000)
  afterAll(async () => {
    await server?.stop()
    await peer?.close()
    await dir?.remove()
    await certificate?.remove()
  })

  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: { "x-api-key": "mr_test_acme", ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    return { status: response.status, body: (await response.json()) as Record<string, unknown> }
  }

  it("sends a message with an attachment, a tag and unsubscribe: it parses back to the same fields and its DKIM signature covers them", async () => {
    const content = Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 13) % 256))
    const presigned = await call("POST", "/attachments/presign", {
      filename: "report.pdf",
      content_type: "application/pdf"
    })
    const { url, key: storageKey } = presigned.body as { url: string; key: string }
    assert.strictEqual(
      (await fetch(url, { method: "PUT", headers: { "content-type": "application/pdf" }, body: content })).status,
      200
    )
    const sent = await call("POST", "/emails", {
      from: "billing@acme.example",
      from_name: "Acme Billing",
      to: ["alice@example.com"],
      bcc: ["audit@acme.example"],
      subject: "Your report ✔",
      body: { text: "Attached.", html: "<p>Attached.</p>" },
      attachments: [{ filename: "report.pdf", key: storageKey }],
      tags: [{ name: "category", value: "report" }],
      headers: { "X-Campaign": "spring" },
      unsubscribe: { url: "https://acme.example/unsubscribe?u=42", mailto: "unsubscribe@acme.example" }
    })
    assert.strictEqual(sent.status, 201, JSON.stringify(sent.body))
    // The record names the Message-ID the provider wrote, which the peer received the message under.
    const record = await call("GET", `/emails/${String(sent.body.message_id)}`)
    assert.strictEqual(record.body.provider, "smtp")
    assert.deepStrictEqual(record.body.tags, [{ name: "category", value: "report" }])
    const received = await peer.byMessageId(String(record.body.provider_message_id))
    assert.isTrue(received.secure, "over STARTTLS")
    assert.strictEqual(received.user, "mailer")
    assert.deepStrictEqual(received.rcptTo, ["alice@example.com", "audit@acme.example"])
    const parsed = await parseReceived(received)
    assert.strictEqual(parsed.from?.value[0]?.name, "Acme Billing")
    assert.strictEqual(parsed.from?.value[0]?.address, "billing@acme.example")
    assert.strictEqual(parsed.subject, "Your report ✔")
    assert.strictEqual(parsed.text?.trim(), "Attached.")
    assert.strictEqual(parsed.attachments[0]?.filename, "report.pdf")
    assert.isTrue(parsed.attachments[0]?.content.equals(content), "the attachment's bytes differ")
    assert.deepStrictEqual(headerValues(parsed, "List-Unsubscribe"), [
      "<https://acme.example/unsubscribe?u=42>, <mailto:unsubscribe@acme.example>"
    ])
    assert.deepStrictEqual(headerValues(parsed, "List-Unsubscribe-Post"), ["List-Unsubscribe=One-Click"])
    assert.deepStrictEqual(headerValues(parsed, "X-Campaign"), ["spring"])
    assert.deepStrictEqual(headerValues(parsed, "X-Mailroom-Tag-category"), ["report"])
    const [signature] = await verifyDkim(received.raw, key)
    assert.strictEqual(signature?.result, "pass")
    const signed = signature?.headers ?? []
    for (const name of ["list-unsubscribe", "list-unsubscribe-post", "x-campaign", "x-mailroom-tag-category"]) {
      assert.include(signed, name, `${name} is inside the DKIM signature`)
    }
    const { stdout, stderr } = server.output()
    assert.notInclude(stdout + stderr, password)
    assert.notInclude(stdout + stderr, "PRIVATE KEY")
  })

  it("a recipient the relay refuses while it takes the others is recorded failed, with a rejected event", async () => {
    peer.script({
      rcptTo: (recipient) => (recipient === "bob@example.com" ? { code: 450, text: "4.2.1 Mailbox busy" } : undefined)
    })
    try {
      const sent = await call("POST", "/emails", {
        from: "billing@acme.example",
        to: ["alice@example.com", "bob@example.com"],
        subject: "Partly taken",
        body: { text: "Hi" }
      })
      assert.strictEqual(sent.status, 201, JSON.stringify(sent.body))
      const record = await call("GET", `/emails/${String(sent.body.message_id)}`)
      const received = await peer.byMessageId(String(record.body.provider_message_id))
      assert.deepStrictEqual(received.rcptTo, ["alice@example.com"])
      assert.deepStrictEqual(
        (record.body.recipients as ReadonlyArray<{ email: string; state: string }>).map((r) => [r.email, r.state]),
        [
          ["alice@example.com", "sent"],
          ["bob@example.com", "failed"]
        ]
      )
      assert.deepStrictEqual(
        (record.body.events as ReadonlyArray<{ type: string; recipient: string }>).map((e) => [e.type, e.recipient]),
        [["rejected", "bob@example.com"]]
      )
      assert.strictEqual(record.body.status, "failed")
    } finally {
      peer.script({})
    }
  })
})
