// Delivery events through the standalone server: on the embedded defaults, and from providers'
// webhooks, to each organisation's receiver (started here), verified with the standardwebhooks
// package; retries survive the server being killed and started again (real processes).
import { createHash } from "node:crypto"
import { existsSync } from "node:fs"
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { MailEvent } from "@mailroom/core"
import { type ReceivedRequest, startWebhookReceiver, type WebhookReceiver } from "@mailroom/core/testing"
import { Webhook } from "standardwebhooks"
import { afterAll, afterEach, assert, beforeAll, describe, it } from "vitest"
import { Server, ServerConfig } from "../src/index.js"
import { bin, run } from "./process.js"

const acmeSecret = `whsec_${Buffer.from("acme-webhook-signing-key-32bytes").toString("base64")}`
const globexSecret = `whsec_${Buffer.from("globex-webhook-signing-key-32byt").toString("base64")}`
const hookPassword = "postmark-hook-password"

const organizations = [
  { id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"], apiKeys: ["mr_test_acme"] },
  { id: "org_globex", slug: "globex", apiKeys: ["mr_test_globex"] }
]

const configFor = (acme: WebhookReceiver, globex: WebhookReceiver, events: Record<string, unknown> = {}) => ({
  port: 0,
  serviceDomain: "mailroom.test",
  organizations,
  storage: { kind: "local", dir: "storage", signingSecret: "events-test" },
  provider: {
    kind: "outbox",
    dir: "outbox",
    sandbox: { enabled: true, verifiedRecipients: ["alice@example.com", "gone@example.com"] },
    suppressedRecipients: ["gone@example.com"]
  },
  events: {
    webhooks: [
      { organization: "org_acme", url: acme.url, secret: acmeSecret },
      { organization: "org_globex", url: globex.url, secret: { env: "GLOBEX_WEBHOOK_SECRET" } }
    ],
    queue: { kind: "local", dir: "events" },
    retry: { firstDelay: "200 millis", maxDelay: "1 seconds" },
    postmark: { basicAuth: { username: "postmark", password: `sha256:${sha256(hookPassword)}` } },
    ...events
  }
})

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex")
const env = { GLOBEX_WEBHOOK_SECRET: globexSecret }

/** Each request verified with the reference implementation, and its payload. */
const verified = (requests: ReadonlyArray<ReceivedRequest>, secret: string) =>
  requests.map((request) => new Webhook(secret).verify(request.body, request.headers) as MailEvent.MailEvent)

const postmarkBounce = async (organization: string) => {
  const bounce = JSON.parse(
    await readFile(new URL("../../postmark/test/fixtures/bounce.json", import.meta.url), "utf8")
  ) as Record<string, unknown> & { Metadata: Record<string, string> }
  bounce.Metadata["mailroom-org"] = organization
  return bounce
}

const postToPostmarkHook = (base: string, body: unknown, password = hookPassword) =>
  fetch(`${base}/webhooks/postmark`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: `Basic ${Buffer.from(`postmark:${password}`).toString("base64")}`
    },
    body: JSON.stringify(body)
  })

let dir: string
const receivers: Array<WebhookReceiver> = []
const receiver = async (statuses: ReadonlyArray<number | "hang"> = []) => {
  const started = await startWebhookReceiver({ statuses })
  receivers.push(started)
  return started
}
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mailroom-events-"))
})
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()))
})
afterAll(() => rm(dir, { recursive: true, force: true }))

describe("the events section of the config", () => {
  const base = async () => configFor(await receiver(), await receiver())
  const problems = (input: unknown, envVars: Record<string, string> = env): Array<string> => {
    try {
      ServerConfig.parse(input, { baseDir: dir, env: envVars })
    } catch (error) {
      return [...(error as ServerConfig.ServerConfigError).problems]
    }
    throw new Error("the config was accepted")
  }

  it("refuses unknown fields, unknown organisations, bad secrets, missing variables and durations, naming each", async () => {
    const config = await base()
    const events = config.events
    assert.includeMembers(problems({ ...config, events: { ...events, retries: {} } }), [
      "events.retries: is not a known field"
    ])
    assert.sameMembers(problems({ ...config, events: { ...events, retry: { firstDelay: "soon" } } }), [
      'events.retry.firstDelay: must be a duration such as "500 millis", "5 seconds" or "24 hours"'
    ])
    const more = problems({
      ...config,
      events: {
        ...events,
        webhooks: [
          { organization: "org_nobody", url: "https://example.com/hook", secret: acmeSecret },
          { organization: "org_acme", url: "https://example.com/hook", secret: "not-whsec" },
          { organization: "org_acme", url: "https://example.com/hook", secret: { env: "UNSET_SECRET" } }
        ]
      }
    })
    assert.sameMembers(more, [
      "events.webhooks[0].organization: no organisation org_nobody is configured",
      'events.webhooks[1].secret: must be a Standard Webhooks secret, "whsec_" followed by 24 to 64 bytes in base64',
      "events.webhooks[2].organization: org_acme has a webhook already",
      "events.webhooks[2].secret: the environment variable UNSET_SECRET is not set"
    ])
    assert.sameMembers(problems({ ...config, events: { ...events, postmark: {}, ses: {} } }), [
      "events.postmark: give basicAuth, header, or both (Postmark signs nothing)",
      "events.ses: give topicArns (SNS), eventBridgeSecret (EventBridge), or both"
    ])
  })

  it("reads {env} secrets and resolves the queue directory against the config's folder", async () => {
    const parsed = ServerConfig.parse(await base(), { baseDir: dir, env })
    assert.strictEqual(parsed.events?.webhooks[1]?.secret, globexSecret)
    assert.deepStrictEqual(parsed.events?.queue, { kind: "local", dir: join(dir, "events") })
  })
})

describe("on the embedded defaults (outbox, local storage, the queue on disk)", () => {
  it("a send to a suppressed and to a normal recipient: rejected and delivered, signed, with the send's message id", async () => {
    const acme = await receiver()
    const globex = await receiver()
    const home = await mkdtemp(join(dir, "embedded-"))
    const server = await Server.start(ServerConfig.parse(configFor(acme, globex), { baseDir: home, env }), {
      log: () => {}
    })
    try {
      const send = (to: ReadonlyArray<string>) =>
        fetch(`${server.url}/emails`, {
          method: "POST",
          headers: { "x-api-key": "mr_test_acme", "content-type": "application/json" },
          body: JSON.stringify({ from: "hi@acme.example", to, subject: "Hello", body: { text: "Hi" } })
        })
      // A recipient the sandbox has not verified is refused whole, as SES and Postmark do: no message, no event.
      const refused = await send(["alice@example.com", "stranger@example.com"])
      assert.strictEqual(refused.status, 422)
      const sent = await send(["gone@example.com", "alice@example.com"])
      assert.strictEqual(sent.status, 201)
      const { message_id } = (await sent.json()) as { message_id: string }
      const payloads = verified(await acme.waitFor(2), acmeSecret)
      assert.deepStrictEqual(
        payloads.map((e) => [e.type, e.recipient, e.message_id, e.organization_id, e.provider]).sort(),
        [
          ["delivered", "alice@example.com", message_id, "org_acme", "outbox"],
          ["rejected", "gone@example.com", message_id, "org_acme", "outbox"]
        ]
      )
      for (const request of acme.requests)
        assert.strictEqual(request.headers["webhook-id"], (JSON.parse(request.body) as MailEvent.MailEvent).id)
      await new Promise((resolve) => setTimeout(resolve, 300))
      assert.strictEqual(acme.requests.length, 2, "the refused send gave no event")
      assert.strictEqual(globex.requests.length, 0)
    } finally {
      await server.close()
    }
  })

  it("EventBridge: an SES record carrying its send's tag reaches that organisation's receiver", async () => {
    const acme = await receiver()
    const globex = await receiver()
    const home = await mkdtemp(join(dir, "eventbridge-"))
    const config = configFor(acme, globex, { ses: { eventBridgeSecret: "eventbridge-secret-for-tests" } })
    const server = await Server.start(ServerConfig.parse(config, { baseDir: home, env }), { log: () => {} })
    try {
      const event = JSON.parse(
        await readFile(new URL("../../ses/test/fixtures/eventbridge-bounce.json", import.meta.url), "utf8")
      ) as { detail: { mail: { tags: Record<string, Array<string>> } } }
      event.detail.mail.tags["mailroom-org"] = ["org_globex"]
      const post = (secret: string) =>
        fetch(`${server.url}/webhooks/ses`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-mailroom-webhook-secret": secret },
          body: JSON.stringify(event)
        })
      const refused = await post("wrong")
      assert.deepStrictEqual(
        [refused.status, await refused.json()],
        [401, { message: "the x-mailroom-webhook-secret header does not match" }]
      )
      const malformed = await fetch(`${server.url}/webhooks/ses`, {
        method: "POST",
        headers: { "x-mailroom-webhook-secret": "eventbridge-secret-for-tests" },
        body: "{ not json"
      })
      assert.deepStrictEqual(
        [malformed.status, await malformed.json()],
        [400, { message: "the body is not a JSON object" }]
      )
      const accepted = await post("eventbridge-secret-for-tests")
      assert.deepStrictEqual([accepted.status, await accepted.json()], [200, { events: 1 }])
      const [payload] = verified(await globex.waitFor(1), globexSecret)
      assert.strictEqual(payload?.type, "bounced")
      assert.strictEqual(payload?.bounce?.kind, "hard")
      assert.strictEqual(payload?.recipient, "recipient@example.com")
      // Only the accepted request reached anyone.
      await new Promise((resolve) => setTimeout(resolve, 300))
      assert.strictEqual(globex.requests.length, 1)
      assert.strictEqual(acme.requests.length, 0)
    } finally {
      await server.close()
    }
  })
})

describe("a Postmark bounce through real server processes", () => {
  beforeAll(() => {
    assert.isTrue(existsSync(bin), `${bin} is missing: the test command builds the packages first`)
  })

  const startServer = async (home: string, config: unknown) => {
    const path = join(home, "mailroom.config.json")
    await writeFile(path, JSON.stringify(config))
    const server = run(path, env)
    return { ...server, url: await server.listening }
  }

  it("a receiver answering 500 twice gets the same webhook-id a third time; a kill and restart in between loses nothing", async () => {
    const acme = await receiver([500, 500])
    const globex = await receiver()
    const home = await mkdtemp(join(dir, "restart-"))
    const config = configFor(acme, globex, { retry: { firstDelay: "1 seconds", maxDelay: "2 seconds" } })
    const first = await startServer(home, config)
    let second: Awaited<ReturnType<typeof startServer>> | undefined
    try {
      // Wrong credentials: 401, and nothing reaches anyone.
      assert.strictEqual((await postToPostmarkHook(first.url, await postmarkBounce("org_acme"), "wrong")).status, 401)
      const answer = await postToPostmarkHook(first.url, await postmarkBounce("org_acme"))
      assert.deepStrictEqual([answer.status, await answer.json()], [200, { events: 1 }])
      await acme.waitFor(1)
      // Killed outright during the backoff: no shutdown, no chance to save anything more.
      first.child.kill("SIGKILL")
      await first.exited
      second = await startServer(home, config)
      const requests = await acme.waitFor(3, 15_000)
      assert.deepStrictEqual(
        requests.map((r) => r.status),
        [500, 500, 200]
      )
      const ids = new Set(requests.map((r) => r.headers["webhook-id"]))
      assert.strictEqual(ids.size, 1)
      for (const payload of verified(requests, acmeSecret)) {
        assert.strictEqual(payload.type, "bounced")
        assert.deepStrictEqual(payload.bounce, { kind: "hard", code: "HardBounce", diagnostic: "Test bounce details" })
        assert.strictEqual(payload.message_id, "883953f4-6105-42a2-a16a-77a8eac79483")
        assert.strictEqual(payload.recipient, "john@example.com")
        assert.strictEqual(payload.organization_id, "org_acme")
        assert.strictEqual(payload.id, [...ids][0])
      }
      await new Promise((resolve) => setTimeout(resolve, 1500))
      assert.strictEqual(acme.requests.length, 3, "delivered once it was answered 200")
      assert.strictEqual(globex.requests.length, 0)
      second.child.kill("SIGTERM")
      assert.strictEqual(await second.exited, 0)
      second = undefined
    } finally {
      first.child.kill("SIGKILL")
      second?.child.kill("SIGKILL")
    }
  })

  it("a server killed while its receiver stalls delivers the same event again once restarted", async () => {
    const acme = await receiver(["hang"])
    const globex = await receiver()
    const home = await mkdtemp(join(dir, "stall-"))
    const config = configFor(acme, globex)
    const first = await startServer(home, config)
    let second: Awaited<ReturnType<typeof startServer>> | undefined
    try {
      assert.strictEqual((await postToPostmarkHook(first.url, await postmarkBounce("org_acme"))).status, 200)
      await acme.waitFor(1)
      first.child.kill("SIGKILL")
      await first.exited
      // A second server on the same queue while the first is alive would deliver twice; after a kill it takes over.
      second = await startServer(home, config)
      const requests = await acme.waitFor(2, 15_000)
      assert.deepStrictEqual(
        requests.map((r) => r.status),
        ["hang", 200]
      )
      assert.strictEqual(requests[0]?.headers["webhook-id"], requests[1]?.headers["webhook-id"])
      assert.strictEqual(verified([requests[1] as ReceivedRequest], acmeSecret)[0]?.type, "bounced")
      // The same queue directory cannot be opened by a second live server.
      const intruder = run(join(home, "mailroom.config.json"), env)
      assert.strictEqual(await intruder.exited, 1)
      assert.include(intruder.output().stderr, `is in use by process ${second.child.pid}`, intruder.output().stderr)
    } finally {
      first.child.kill("SIGKILL")
      second?.child.kill("SIGKILL")
    }
  })
})
