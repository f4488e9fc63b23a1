// `"provider": {"kind": "failover"}`: the config section (each entry decoded as its own kind, problems
// named by their path), /readyz per provider, and the built server in its own process failing over
// between two SMTP servers, the record naming the one that sent.
import { writeFile } from "node:fs/promises"
import { join } from "node:path"
import { freePort, type TempDir, tempDir } from "@mailroom/test-support"
import { afterAll, assert, beforeAll, beforeEach, describe, it } from "vitest"
import * as SmtpPeer from "../../smtp/test/support/SmtpPeer.js"
import { Server, ServerConfig } from "../src/index.js"
import { configFor, problemsOf } from "./support/providerConfig.js"
import { startServer } from "./support/serverProcess.js"

const failover = (providers: ReadonlyArray<unknown>, more: Record<string, unknown> = {}) =>
  configFor({ kind: "failover", providers, ...more })

describe('the "failover" provider section', () => {
  it("takes any other kind per entry, labelled by its kind unless given a label, and a circuit", () => {
    const config = ServerConfig.parse(
      failover(
        [
          { kind: "smtp", host: "smtp.acme.example", auth: { user: "mailer", pass: { env: "SMTP_PASS" } } },
          { kind: "postmark", serverToken: "pm-token", label: "postmark-eu" },
          { kind: "outbox", dir: "outbox" }
        ],
        { circuit: { failures: 3, openDuration: "1 minute" } }
      ),
      { env: { SMTP_PASS: "from-env" }, baseDir: "/srv/mailroom" }
    )
    assert.deepStrictEqual(config.provider, {
      kind: "failover",
      providers: [
        {
          label: "smtp",
          provider: { kind: "smtp", host: "smtp.acme.example", auth: { user: "mailer", pass: "from-env" } }
        },
        { label: "postmark-eu", provider: { kind: "postmark", serverToken: "pm-token" } },
        { label: "outbox", provider: { kind: "outbox", dir: "/srv/mailroom/outbox" } }
      ],
      circuit: { failures: 3, openDuration: "1 minute" }
    })
  })

  it("names each problem by its path, all at once: a field of an entry, its secret, its kind, the circuit", () => {
    assert.deepStrictEqual(
      problemsOf(
        failover(
          [
            { kind: "smtp", host: "smtp.acme.example", hots: "x" },
            { kind: "smtp", label: "backup" },
            { kind: "smtp", host: "10.0.0.2", label: "relay", auth: { user: "mailer", pass: { env: "NOPE" } } },
            { kind: "resend", apiKey: { env: "RESEND_NOPE" } },
            { kind: "failover", providers: [] },
            { kind: "sendgrid" },
            "smtp"
          ],
          { circuit: { failures: 0, openDuration: "soon" } }
        )
      ),
      [
        "provider.circuit.failures: must be a whole number above 0",
        'provider.circuit.openDuration: must be a duration such as "500 millis", "5 seconds" or "24 hours"',
        "provider.providers[0].hots: is not a known field",
        "provider.providers[1].host: is required",
        "provider.providers[2].auth.pass: the environment variable NOPE is not set",
        "provider.providers[3].apiKey: the environment variable RESEND_NOPE is not set",
        "provider.providers[4].kind: a failover cannot contain another failover",
        "provider.providers[5].kind: must be one of outbox, ses, postmark, resend, smtp",
        'provider.providers[6]: must be a provider, such as {"kind": "smtp", ...}'
      ]
    )
  })

  it("refuses two providers under one label, a bad label, fewer than two providers, an unknown field", () => {
    assert.deepStrictEqual(
      problemsOf(
        failover([
          { kind: "smtp", host: "a.example" },
          { kind: "smtp", host: "b.example" }
        ])
      ),
      [
        'provider.providers[1].label: "smtp" already names provider.providers[0]; give each provider a label of its own, which records and metrics show'
      ]
    )
    assert.deepStrictEqual(
      problemsOf(
        failover([
          { kind: "smtp", host: "a.example", label: "relay a" },
          { kind: "postmark", serverToken: "t" }
        ])
      ),
      ['provider.providers[0].label: must be 1 to 64 letters, digits, "-", "_" or ".", starting with a letter or digit']
    )
    assert.deepStrictEqual(problemsOf(failover([{ kind: "smtp", host: "a.example" }])), [
      "provider.providers: a failover needs at least 2 providers (with one, use that provider: it keeps core's retries)"
    ])
    assert.deepStrictEqual(problemsOf(failover([], { retries: 3 })), ["provider.retries: is not a known field"])
    assert.deepStrictEqual(problemsOf(configFor({ kind: "sendgrid" })), [
      "provider.kind: must be one of outbox, ses, postmark, resend, smtp, failover"
    ])
  })
})

describe("/readyz with a failover", () => {
  let secondary: SmtpPeer.Peer
  let dir: TempDir
  let server: Server.RunningServer
  let refused: number
  beforeAll(async () => {
    secondary = await SmtpPeer.start({ hideSTARTTLS: true })
    refused = await freePort()
    dir = await tempDir("server-failover-ready")
    server = await Server.start(
      ServerConfig.parse(
        failover([
          { kind: "smtp", host: "127.0.0.1", port: refused },
          { kind: "smtp", host: "127.0.0.1", port: secondary.port, label: "smtp-backup" },
          { kind: "postmark", serverToken: "pm-token", requestHost: "127.0.0.1:9", useHttps: false }
        ]),
        { baseDir: dir.path }
      ),
      { log: () => {} }
    )
  }, 30_000)
  afterAll(async () => {
    await server?.close()
    await secondary?.close()
    await dir?.remove()
  })

  it("reports each provider; ready while one is, naming the others' problems", async () => {
    const ready = await fetch(`${server.url}/readyz`)
    assert.strictEqual(ready.status, 200)
    const body = (await ready.json()) as { ready: boolean; checks: Record<string, string> }
    assert.isTrue(body.ready)
    assert.strictEqual(body.checks.provider, "ok")
    assert.match(body.checks["provider.smtp"] ?? "", new RegExp(`127\\.0\\.0\\.1:${refused}.*ECONNREFUSED`))
    assert.strictEqual(body.checks["provider.smtp-backup"], "ok")
    // Postmark's own check (GET /server) cannot reach it: shown, and the failover is ready without it.
    assert.match(body.checks["provider.postmark"] ?? "", /could not be reached/)
  })
})

describe("a failover whose providers are all down at start-up", () => {
  let dir: TempDir
  beforeAll(async () => {
    dir = await tempDir("server-failover-down")
  })
  afterAll(() => dir?.remove())

  it("stops start-up, saying no provider can send and why each cannot", async () => {
    const [a, b] = [await freePort(), await freePort()]
    const config = ServerConfig.parse(
      failover([
        { kind: "smtp", host: "127.0.0.1", port: a },
        { kind: "smtp", host: "127.0.0.1", port: b, label: "smtp-backup" }
      ]),
      { baseDir: dir.path }
    )
    const error = await Server.start(config, { log: () => {} }).then(
      (server) => server.close().then(() => undefined),
      (e: unknown) => e
    )
    assert.isTrue(Server.isServerStartError(error), String(error))
    const message = String((error as Error).message)
    assert.include(message, "no provider can send")
    assert.match(message, new RegExp(`smtp: .*127\\.0\\.0\\.1:${a}.*ECONNREFUSED`))
    assert.match(message, new RegExp(`smtp-backup: .*127\\.0\\.0\\.1:${b}.*ECONNREFUSED`))
  })
})

describe("the server process with a failover of two SMTP servers (black box)", () => {
  let primary: SmtpPeer.Peer
  let secondary: SmtpPeer.Peer
  let dir: TempDir
  let server: Awaited<ReturnType<typeof startServer>>

  beforeAll(async () => {
    ;[primary, secondary] = await Promise.all([
      SmtpPeer.start({ hideSTARTTLS: true }),
      SmtpPeer.start({ hideSTARTTLS: true })
    ])
    dir = await tempDir("server-failover")
    const path = join(dir.path, "mailroom.config.json")
    await writeFile(
      path,
      JSON.stringify(
        failover(
          [
            { kind: "smtp", host: "127.0.0.1", port: primary.port },
            { kind: "smtp", host: "127.0.0.1", port: secondary.port, label: "smtp-backup" }
          ],
          { circuit: { failures: 2, openDuration: "10 minutes" } }
        )
      )
    )
    server = await startServer(path)
  }, 60_000)
  afterAll(async () => {
    await server?.stop()
    await Promise.all([primary?.close(), secondary?.close()])
    await dir?.remove()
  })
  beforeEach(() => {
    primary.reset()
    secondary.reset()
  })

  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: { "x-api-key": "mr_test_acme", ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    return { status: response.status, body: (await response.json()) as Record<string, unknown> }
  }
  const send = async (subject: string) => {
    const sent = await call("POST", "/emails", {
      from: "billing@acme.example",
      to: ["alice@example.com"],
      subject,
      body: { text: "Hi" }
    })
    assert.strictEqual(sent.status, 201, JSON.stringify(sent.body))
    return (await call("GET", `/emails/${String(sent.body.message_id)}`)).body
  }

  it("sends through the primary; with it refusing (421 to MAIL FROM), through the secondary; the record names which", async () => {
    const first = await send("through the primary")
    assert.strictEqual(first.provider, "smtp")
    await primary.byMessageId(String(first.provider_message_id))

    primary.script({ mailFrom: { code: 421, text: "4.3.2 Service not available" } })
    const second = await send("through the secondary")
    assert.strictEqual(second.provider, "smtp-backup")
    assert.strictEqual(second.status, "sent")
    await secondary.byMessageId(String(second.provider_message_id))
    // Each message arrived once, at one server: the primary had only the first.
    assert.deepStrictEqual([primary.attempts(), secondary.attempts()], [1, 1])
  })

  it("after 2 failures the primary's circuit is open: it is not called, every message goes out once", async () => {
    primary.script({ mailFrom: { code: 421, text: "4.3.2 Service not available" } })
    const records = []
    for (const subject of ["a", "b", "c", "d"]) records.push(await send(subject))
    const opened = primary.connections()
    records.push(await send("e"))
    assert.strictEqual(primary.connections(), opened, "skipped while open")
    assert.deepStrictEqual(
      records.map((r) => r.provider),
      ["smtp-backup", "smtp-backup", "smtp-backup", "smtp-backup", "smtp-backup"]
    )
    assert.strictEqual(secondary.attempts(), 5)
    assert.strictEqual(primary.attempts(), 0)
  })
})
