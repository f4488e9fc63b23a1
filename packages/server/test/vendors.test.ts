// The server configured for the real vendors' adapters, each against its test peer: SES against the
// aws-ses-v2-local emulator, Postmark against the stand-in that answers as Postmark documents.
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { ManagedRuntime } from "effect"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import * as PostmarkStandIn from "../../postmark/test/PostmarkStandIn.js"
import { Emulator, EmulatorLive, stored } from "../../ses/test/emulator.js"
import { Server, ServerConfig } from "../src/index.js"

const organizations = [
  { id: "org_acme", slug: "acme", verifiedDomains: ["acme.example", "unsigned.example"], apiKeys: ["mr_test_acme"] }
]

const startServer = (dir: string, provider: Record<string, unknown>, logError: (line: string) => void = () => {}) =>
  Server.start(
    ServerConfig.parse(
      {
        port: 0,
        serviceDomain: "mailroom.test",
        organizations,
        storage: { kind: "local", dir: "storage", signingSecret: "test-secret" },
        provider
      },
      { baseDir: dir }
    ),
    { log: () => {}, logError }
  )

const call = async (url: string, method: string, path: string, body?: unknown) => {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { "x-api-key": "mr_test_acme", ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as Record<string, unknown>
  }
}

describe('"provider": {"kind": "ses"} against the SES emulator', () => {
  const emulator = ManagedRuntime.make(EmulatorLive)
  let dir: string
  let server: Server.RunningServer
  beforeAll(async () => {
    const { url } = await emulator.runPromise(Emulator)
    dir = await mkdtemp(join(tmpdir(), "mailroom-ses-"))
    server = await startServer(dir, {
      kind: "ses",
      region: "us-east-1",
      endpoint: url,
      accessKeyId: "AKIDEMULATOR",
      secretAccessKey: "emulator-secret-key"
    })
  })
  afterAll(async () => {
    await server?.close()
    await emulator.dispose()
    await rm(dir, { recursive: true, force: true })
  })

  it("presign, upload, send with the attachment: the emulator holds the message with the same bytes", async () => {
    const content = Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 7) % 256))
    const presigned = await call(server.url, "POST", "/attachments/presign", {
      filename: "report.pdf",
      content_type: "application/pdf"
    })
    const { url, key } = presigned.body as { url: string; key: string }
    const put = await fetch(url, { method: "PUT", headers: { "content-type": "application/pdf" }, body: content })
    assert.strictEqual(put.status, 200)
    const sent = await call(server.url, "POST", "/emails", {
      from: "billing@acme.example",
      from_name: "Acme Billing",
      to: ["alice@example.com"],
      subject: "Your report ✔",
      body: { text: "Attached.", html: "<p>Attached.</p>" },
      attachments: [{ filename: "report.pdf", key }]
    })
    assert.strictEqual(sent.status, 201, JSON.stringify(sent.body))
    // The record names the id SES gave the message; the emulator holds it under that id.
    const record = await call(server.url, "GET", `/emails/${String(sent.body.message_id)}`)
    assert.strictEqual(record.body.provider, "ses")
    const email = await emulator.runPromise(stored(String(record.body.provider_message_id)))
    assert.deepStrictEqual(email.destination.to, ["alice@example.com"])
    assert.strictEqual(email.subject, "Your report ✔")
    assert.strictEqual(email.attachments.length, 1)
    assert.strictEqual(email.attachments[0]?.filename, "report.pdf")
    assert.isTrue(
      Buffer.from(email.attachments[0]?.content ?? "", "base64").equals(content),
      "the attachment's bytes differ"
    )
  })
})

describe('"provider": {"kind": "postmark"} against the Postmark stand-in', () => {
  const errors: Array<string> = []
  let standIn: PostmarkStandIn.StandIn
  let dir: string
  let server: Server.RunningServer
  beforeAll(async () => {
    standIn = await PostmarkStandIn.start({
      senderDomains: ["acme.example"],
      inactiveRecipients: ["bounced@example.com"]
    })
    dir = await mkdtemp(join(tmpdir(), "mailroom-postmark-"))
    server = await startServer(
      dir,
      { kind: "postmark", serverToken: standIn.token, requestHost: standIn.host, useHttps: false },
      (line) => void errors.push(line)
    )
  })
  afterAll(async () => {
    await server?.close()
    await standIn?.close()
    await rm(dir, { recursive: true, force: true })
  })
  const message = { from: "billing@acme.example", to: ["alice@example.com"], subject: "Hi", body: { text: "x" } }

  it("a sent message reaches Postmark", async () => {
    const sent = await call(server.url, "POST", "/emails", message)
    assert.strictEqual(sent.status, 201)
    const record = await call(server.url, "GET", `/emails/${String(sent.body.message_id)}`)
    assert.strictEqual(record.body.provider, "postmark")
    assert.strictEqual(standIn.received(String(record.body.provider_message_id)).subject, "Hi")
  })

  it("ErrorCode 400 (no sender signature) is 422 {error}", async () => {
    const answer = await call(server.url, "POST", "/emails", { ...message, from: "a@unsigned.example" })
    assert.strictEqual(answer.status, 422)
    assert.deepStrictEqual(Object.keys(answer.body), ["error"])
    assert.include(String(answer.body.error), "a@unsigned.example")
  })

  it("ErrorCode 406 (inactive recipient) is 422 {error} naming the recipient", async () => {
    const answer = await call(server.url, "POST", "/emails", { ...message, to: ["bounced@example.com"] })
    assert.strictEqual(answer.status, 422)
    assert.include(String(answer.body.error), "bounced@example.com")
  })

  // Each answered as Postmark documents it: HTTP 422 with {ErrorCode, Message}.
  const documented: ReadonlyArray<readonly [number, string, number]> = [
    [401, "Sender signature not confirmed.", 422],
    [412, "Your account is pending approval. You can only send to recipients on your own domain.", 422],
    [300, "Invalid email request.", 422],
    [409, "JSON required.", 422],
    [411, "Forbidden attachment file type.", 422],
    [405, "Not allowed to send.", 503],
    [413, "Your account is not allowed to send emails.", 503]
  ]
  for (const [code, text, status] of documented) {
    it(`ErrorCode ${code} is ${status} {error}`, async () => {
      standIn.failNext({ status: 422, body: { ErrorCode: code, Message: text } })
      const answer = await call(server.url, "POST", "/emails", message)
      assert.strictEqual(answer.status, status, JSON.stringify(answer.body))
      // A 503 to a send also says whether the provider may have the message: here it cannot.
      assert.deepStrictEqual(Object.keys(answer.body), status === 503 ? ["error", "may_have_been_sent"] : ["error"])
      if (status === 503) assert.isFalse(answer.body.may_have_been_sent)
      assert.notInclude(JSON.stringify(answer.body), standIn.token)
    })
  }

  it("HTTP 503 (planned outage), once core's retries are spent, is 503 {error}", async () => {
    for (let i = 0; i < 3; i++)
      standIn.failNext({ status: 503, body: { ErrorCode: 0, Message: "Service unavailable" } })
    const answer = await call(server.url, "POST", "/emails", message)
    assert.strictEqual(answer.status, 503)
    assert.deepStrictEqual(answer.body, {
      error: "the email provider is unavailable; nothing was sent",
      may_have_been_sent: false
    })
  })

  it("a 503 logs the adapter's own reason once, naming the provider and never the token", async () => {
    for (let i = 0; i < 3; i++)
      standIn.failNext({ status: 503, body: { ErrorCode: 0, Message: "Service unavailable" } })
    errors.length = 0
    const answer = await call(server.url, "POST", "/emails", message)
    assert.strictEqual(answer.status, 503)
    // The caller is told little; the log says what the adapter knows.
    assert.deepStrictEqual(errors, [
      "[mailroom] 503 on POST /emails: the postmark provider: Postmark is unavailable (HTTP 503); the message was not sent"
    ])
    assert.notInclude(errors.join("\n"), standIn.token)
  })

  it("/readyz asks Postmark with the token: a refused token is 503 naming the provider, then ready again", {
    timeout: 40_000
  }, async () => {
    // The first probe of this server asks Postmark (a passing answer is then trusted for 15 s).
    const before = standIn.requests.length
    standIn.failNext({ status: 401, body: { ErrorCode: 10, Message: "Bad or missing Server API token." } })
    const refused = await fetch(`${server.url}/readyz`)
    assert.strictEqual(refused.status, 503)
    const body = (await refused.json()) as { ready: boolean; checks: Record<string, string> }
    assert.isFalse(body.ready)
    assert.strictEqual(body.checks.provider, "postmark: the Postmark server token was refused")
    assert.strictEqual(body.checks.storage, "ok")
    const asked = standIn.requests[before]
    assert.strictEqual(`${asked?.method} ${asked?.path}`, "GET /server")
    assert.strictEqual(asked?.headers["x-postmark-server-token"], standIn.token)
    // A failing answer is asked again after 5 s: await the next probe that passes, not a fixed sleep.
    let ready = await fetch(`${server.url}/readyz`)
    for (const deadline = Date.now() + 20_000; ready.status !== 200 && Date.now() < deadline; ) {
      await new Promise((resolve) => setTimeout(resolve, 250))
      ready = await fetch(`${server.url}/readyz`)
    }
    assert.strictEqual(ready.status, 200)
  })

  it("HTTP 429, once core's retries are spent, is 429 {error} with Retry-After", async () => {
    const limited = { status: 429, body: { ErrorCode: 429, Message: "Rate limit exceeded." } }
    for (let i = 0; i < 3; i++) standIn.failNext(limited)
    const answer = await call(server.url, "POST", "/emails", message)
    assert.strictEqual(answer.status, 429)
    assert.deepStrictEqual(Object.keys(answer.body), ["error"])
    assert.match(answer.headers.get("retry-after") ?? "", /^[0-9]+$/)
  })

  it("a refused server token is 500 with nothing leaked", async () => {
    standIn.failNext({ status: 401, body: { ErrorCode: 10, Message: "Bad or missing Server API token." } })
    const answer = await call(server.url, "POST", "/emails", message)
    assert.strictEqual(answer.status, 500)
    assert.deepStrictEqual(answer.body, { error: "internal error" })
  })
})

describe("an option the adapter refuses, though the config file's schema lets it through", () => {
  it("fails start-up as a config problem naming the option, not as a crash", async () => {
    const dir = await mkdtemp(join(tmpdir(), "mailroom-options-"))
    try {
      const started = startServer(dir, {
        kind: "postmark",
        serverToken: "pm-server-token",
        requestHost: "https://api.postmarkapp.com"
      })
      const error = await started.then(
        (server) => server.close().then(() => assert.fail("the server started")),
        (cause: unknown) => cause
      )
      assert.instanceOf(error, ServerConfig.ServerConfigError)
      assert.include((error as Error).message, "requestHost")
      assert.notInclude((error as Error).message, "pm-server-token")
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
