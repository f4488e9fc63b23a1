// `"provider": {"kind": "resend"}` and `events.resend`: the config checks, then the built server in its
// own process against the Resend stand-in, read back from what the stand-in and a receiver got.
import { randomBytes } from "node:crypto"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { MailEvent } from "@mailroom/core"
import { startWebhookReceiver, type WebhookReceiver } from "@mailroom/core/testing"
import { Webhook } from "standardwebhooks"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import * as ResendStandIn from "../../resend/test/ResendStandIn.js"
import { ServerConfig } from "../src/index.js"
import { run } from "./process.js"
import { type ServerProcess, startServer } from "./support/serverProcess.js"

const acmeSecret = `whsec_${randomBytes(32).toString("base64")}`
const resendSecret = `whsec_${randomBytes(24).toString("base64")}`

const configFor = (standIn: ResendStandIn.StandIn, receiver: WebhookReceiver, apiKey: unknown) => ({
  port: 0,
  serviceDomain: "mailroom.test",
  organizations: [
    // unverified.example is the organisation's own, but not verified in the Resend account.
    { id: "org_acme", slug: "acme", verifiedDomains: ["acme.example", "unverified.example"], apiKeys: ["mr_test_acme"] }
  ],
  storage: { kind: "local", dir: "storage", signingSecret: "resend-test" },
  provider: { kind: "resend", apiKey, baseUrl: standIn.url, timeout: "5 seconds" },
  events: {
    webhooks: [{ organization: "org_acme", url: receiver.url, secret: acmeSecret }],
    queue: { kind: "local", dir: "events" },
    resend: { secret: { env: "RESEND_WEBHOOK_SECRET" } }
  }
})

describe('the config\'s "resend" provider and events.resend', () => {
  const base = {
    port: 0,
    serviceDomain: "mailroom.test",
    organizations: [],
    storage: { kind: "local", dir: "storage", signingSecret: "x" }
  }
  const problems = (input: Record<string, unknown>, env: Record<string, string> = {}): Array<string> => {
    try {
      ServerConfig.parse({ ...base, ...input }, { env })
    } catch (error) {
      return [...(error as ServerConfig.ServerConfigError).problems]
    }
    throw new Error("the config was accepted")
  }

  it("takes the key as a string or from the environment, with baseUrl and timeout", () => {
    const provider = {
      kind: "resend" as const,
      apiKey: { env: "RESEND_API_KEY" },
      baseUrl: "http://127.0.0.1:1",
      timeout: "5 seconds"
    }
    const config = ServerConfig.parse({ ...base, provider }, { env: { RESEND_API_KEY: "re_from_env" } })
    assert.deepStrictEqual(config.provider, { ...provider, apiKey: "re_from_env" })
    const plain = ServerConfig.parse({ ...base, provider: { kind: "resend", apiKey: "re_plain" } })
    assert.deepStrictEqual(plain.provider, { kind: "resend", apiKey: "re_plain" })
  })

  it("refuses an unknown field, a missing or empty key, an unset variable and a bad baseUrl, naming each", () => {
    assert.sameMembers(problems({ provider: { kind: "resend", apiKey: "re_x", region: "eu-west-1" } }), [
      "provider.region: is not a known field"
    ])
    assert.match(problems({ provider: { kind: "resend" } })[0] ?? "", /^provider\.apiKey: /)
    assert.match(problems({ provider: { kind: "resend", apiKey: " " } })[0] ?? "", /^provider\.apiKey: /)
    assert.deepStrictEqual(problems({ provider: { kind: "resend", apiKey: { env: "RESEND_API_KEY" } } }), [
      "provider.apiKey: the environment variable RESEND_API_KEY is not set"
    ])
    assert.deepStrictEqual(problems({ provider: { kind: "resend", apiKey: "re_x", baseUrl: "api.resend.com" } }), [
      "provider.baseUrl: must be an http(s) URL"
    ])
  })

  it("events.resend: a secret that cannot sign, an unset variable and an unknown field, none repeating the secret", () => {
    const provider = { kind: "outbox", dir: "outbox" }
    const events = (resend: unknown) => ({ provider, events: { resend } })
    const notWhsec = problems(events({ secret: "re_not_a_webhook_secret" }))
    assert.strictEqual(notWhsec.length, 1)
    assert.match(notWhsec[0] ?? "", /^events\.resend\.secret: must be a Standard Webhooks secret/)
    assert.notInclude(notWhsec[0] ?? "", "re_not_a_webhook_secret")
    assert.deepStrictEqual(problems(events({ secret: { env: "RESEND_WEBHOOK_SECRET" } })), [
      "events.resend.secret: the environment variable RESEND_WEBHOOK_SECRET is not set"
    ])
    assert.deepStrictEqual(problems(events({ secret: resendSecret, signingKey: "x" })), [
      "events.resend.signingKey: is not a known field"
    ])
  })
})

/** /readyz once the layers are built (the server listens before they are). */
const readiness = async (url: string) => {
  for (let attempt = 0; ; attempt++) {
    const response = await fetch(`${url}/readyz`)
    const body = (await response.json()) as { ready: boolean; checks: Record<string, string> }
    if (body.checks.server !== "starting" || attempt > 200) return { status: response.status, body }
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

describe("the server on Resend, in its own process, against the stand-in", () => {
  let dir: string
  let standIn: ResendStandIn.StandIn
  let receiver: WebhookReceiver
  let server: ServerProcess
  const env = (apiKey: string) => ({ RESEND_API_KEY: apiKey, RESEND_WEBHOOK_SECRET: resendSecret })

  const start = async (name: string, apiKey: string) => {
    const home = await mkdtemp(join(dir, `${name}-`))
    const path = join(home, "mailroom.config.json")
    await writeFile(path, JSON.stringify(configFor(standIn, receiver, { env: "RESEND_API_KEY" })))
    return startServer(path, env(apiKey))
  }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "mailroom-resend-"))
    standIn = await ResendStandIn.start({ domains: ["acme.example"] })
    receiver = await startWebhookReceiver()
    server = await start("server", standIn.apiKey)
  })
  afterAll(async () => {
    await server?.stop()
    await receiver?.close()
    await standIn?.close()
    await rm(dir, { recursive: true, force: true })
  })

  const call = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${server.url}${path}`, {
      method: "POST",
      headers: { "x-api-key": "mr_test_acme", "content-type": "application/json", ...headers },
      body: JSON.stringify(body)
    })
    return {
      status: response.status,
      headers: response.headers,
      body: (await response.json()) as Record<string, unknown>
    }
  }
  const message = { from: "billing@acme.example", to: ["alice@example.com"], subject: "Hi", body: { text: "x" } }
  /** The record once it has left `scheduled` and `sending` (a user polling it), or a failure at the deadline. */
  const settled = async (id: string) => {
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; ) {
      const response = await fetch(`${server.url}/emails/${id}`, { headers: { "x-api-key": "mr_test_acme" } })
      const record = (await response.json()) as { status: string; reason: string | null; provider_message_id: string }
      if (record.status !== "scheduled" && record.status !== "sending") return record
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    return assert.fail(`message ${id} was not sent within 30 s`)
  }

  it("sends with the attachment's bytes, the organisation as a tag and a derived Idempotency-Key; a replay sends nothing", async () => {
    const presigned = await call("/attachments/presign", { filename: "report.pdf", content_type: "application/pdf" })
    const { url, key } = presigned.body as { url: string; key: string }
    const content = randomBytes(3000)
    const put = await fetch(url, { method: "PUT", headers: { "content-type": "application/pdf" }, body: content })
    assert.strictEqual(put.status, 200)
    const request = { ...message, from_name: "Acme Billing", attachments: [{ filename: "report.pdf", key }] }
    const sent = await call("/emails", request, { "idempotency-key": "order-42" })
    assert.strictEqual(sent.status, 201, JSON.stringify(sent.body))
    const id = String(sent.body.message_id)
    const record = await fetch(`${server.url}/emails/${id}`, { headers: { "x-api-key": "mr_test_acme" } })
    const resendId = ((await record.json()) as { provider_message_id: string }).provider_message_id
    const accepted = standIn.accepted.find((m) => m.id === resendId)
    assert.isDefined(accepted)
    assert.match(accepted?.idempotencyKey ?? "", /^mailroom-[0-9a-f]{64}$/)
    assert.deepInclude(accepted?.fields.tags as Array<unknown>, { name: "mailroom-org", value: "org_acme" })
    const received = standIn.received(resendId)
    assert.deepStrictEqual(received.from, { address: "billing@acme.example", name: "Acme Billing" })
    assert.isTrue(Buffer.from(received.attachments[0]?.content ?? []).equals(content))
    const count = standIn.accepted.length
    const again = await call("/emails", request, { "idempotency-key": "order-42" })
    assert.strictEqual(again.body.message_id, id)
    assert.strictEqual(standIn.accepted.length, count)
  })

  it("the scheduled items of a batch under one Idempotency-Key each reach Resend, under keys of their own", async () => {
    const scheduled_at = new Date(Date.now() + 1500).toISOString()
    const items = ["First", "Second", "Third"].map((subject) => ({ ...message, subject, scheduled_at }))
    const batch = await call("/emails/batch", items, { "idempotency-key": "later-batch" })
    assert.strictEqual(batch.status, 200, JSON.stringify(batch.body))
    const ids = (batch.body.data as Array<{ message_id: string }>).map((d) => d.message_id)
    assert.strictEqual(ids.length, 3)
    const records = await Promise.all(ids.map((id) => settled(id)))
    assert.deepStrictEqual(
      records.map((r) => r.status),
      ["sent", "sent", "sent"],
      JSON.stringify(records.map((r) => r.reason))
    )
    const taken = records.map((r) => standIn.accepted.find((m) => m.id === r.provider_message_id))
    assert.deepStrictEqual(
      taken.map((m) => m?.fields.subject),
      ["First", "Second", "Third"]
    )
    assert.strictEqual(new Set(taken.map((m) => m?.idempotencyKey)).size, 3)
  })

  it("a From Resend has not verified is 422 {error} naming it", async () => {
    const answer = await call("/emails", { ...message, from: "billing@unverified.example" })
    assert.strictEqual(answer.status, 422)
    assert.deepStrictEqual(Object.keys(answer.body), ["error"])
    assert.include(String(answer.body.error), "billing@unverified.example")
  })

  it("a key Resend refuses is a 500 that says nothing, and the log names the cause without the key", async () => {
    standIn.failNext({
      status: 401,
      body: { statusCode: 401, name: "validation_error", message: "API key is invalid" }
    })
    const logged = server.waitFor(/Resend API key was refused/)
    const answer = await call("/emails", message)
    assert.strictEqual(answer.status, 500)
    assert.deepStrictEqual(answer.body, { error: "internal error" })
    await logged
    const { stdout, stderr } = server.output()
    assert.notInclude(stdout + stderr, standIn.apiKey)
  })

  it("429 with retry-after, once core's retries are spent, is 429 {error} with Retry-After", async () => {
    for (let i = 0; i < 3; i++) standIn.failNext(ResendStandIn.rateLimited(1))
    const before = standIn.requests.length
    const answer = await call("/emails", message)
    assert.strictEqual(answer.status, 429)
    assert.deepStrictEqual(Object.keys(answer.body), ["error"])
    assert.strictEqual(answer.headers.get("retry-after"), "1")
    assert.strictEqual(standIn.requests.length - before, 3)
  })

  for (const fault of [
    { status: 500, body: { statusCode: 500, name: "application_error", message: "An unexpected error occurred." } },
    "drop" as const
  ]) {
    it(`${typeof fault === "string" ? "a connection dropped after the request" : "500 application_error"} is 503, sent once`, async () => {
      standIn.failNext(fault)
      const before = standIn.requests.length
      const answer = await call("/emails", message)
      assert.strictEqual(answer.status, 503)
      assert.include(String(answer.body.error), "may have been sent")
      assert.strictEqual(standIn.requests.length - before, 1)
    })
  }

  it("/readyz asks Resend with the key (GET /domains), and not again on the next probe", async () => {
    const domains = () => standIn.requests.filter((r) => r.path.startsWith("/domains"))
    const before = domains().length
    const first = await readiness(server.url)
    assert.strictEqual(first.status, 200, JSON.stringify(first.body))
    assert.strictEqual(first.body.checks.provider, "ok")
    assert.strictEqual(domains().length, before + 1)
    assert.strictEqual(domains().at(-1)?.headers.authorization, `Bearer ${standIn.apiKey}`)
    assert.strictEqual((await readiness(server.url)).status, 200)
    assert.strictEqual(domains().length, before + 1, "a passing check is not made again for a while")
  })

  it("a key Resend refuses stops start-up naming provider.apiKey, never the key", async () => {
    const home = await mkdtemp(join(dir, "refused-"))
    const path = join(home, "mailroom.config.json")
    await writeFile(path, JSON.stringify(configFor(standIn, receiver, { env: "RESEND_API_KEY" })))
    const refused = run(path, env("re_revoked_key_3f9a"))
    assert.strictEqual(await refused.exited, 1)
    const { stdout, stderr } = refused.output()
    assert.include(stdout + stderr, "provider.apiKey: ")
    assert.include(stdout + stderr, "the Resend API key was refused")
    assert.notInclude(stdout + stderr, "re_revoked_key_3f9a")
  })

  it("a Resend webhook signed as Svix signs it reaches the organisation's receiver; a forged one is 401", async () => {
    const sent = await call("/emails", message)
    const emailId = String(sent.body.message_id)
    // Resend hands back the tags the message was sent with: the organisation and mailroom's own id.
    const accepted = standIn.accepted[standIn.accepted.length - 1]
    const event = JSON.stringify({
      type: "email.delivered",
      created_at: new Date().toISOString(),
      data: {
        email_id: accepted?.id,
        to: ["alice@example.com"],
        subject: "Hi",
        tags: { "mailroom-org": "org_acme", "mailroom-message": emailId }
      }
    })
    const post = (secret: string) => {
      const id = `msg_${randomBytes(8).toString("hex")}`
      const now = new Date()
      return fetch(`${server.url}/webhooks/resend`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "svix-id": id,
          "svix-timestamp": String(Math.floor(now.getTime() / 1000)),
          "svix-signature": new Webhook(secret).sign(id, now, event)
        },
        body: event
      })
    }
    assert.strictEqual((await post(`whsec_${randomBytes(24).toString("base64")}`)).status, 401)
    const answer = await post(resendSecret)
    assert.deepStrictEqual([answer.status, await answer.json()], [200, { events: 1 }])
    const [request] = await receiver.waitFor(1)
    const payload = new Webhook(acmeSecret).verify(request?.body ?? "", request?.headers ?? {}) as MailEvent.MailEvent
    assert.deepInclude(payload, {
      type: "delivered",
      provider: "resend",
      message_id: emailId,
      recipient: "alice@example.com",
      organization_id: "org_acme"
    })
  })
})
