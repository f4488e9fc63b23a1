// Three `mailroom` processes sharing one PostgreSQL for their message records, sending through the
// Postmark stand-in: an event ingested by one is seen by the others at once, a suppression added on one
// is honoured by all, and a database stopped mid-run makes sends a 503 with Retry-After, loses nothing.
import { randomInt } from "node:crypto"
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type PostgresCluster, startAll, startPostgresCluster } from "@mailroom/test-support"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import * as PostmarkStandIn from "../../postmark/test/PostmarkStandIn.js"
import { type ServerProcess, startServer } from "./support/serverProcess.js"

const hookPassword = "postmark-hook-password"

interface Answer {
  readonly status: number
  readonly headers: Headers
  readonly body: Record<string, unknown>
}

describe("three servers with their message records on one PostgreSQL", () => {
  let dir: string
  let cluster: PostgresCluster
  let standIn: PostmarkStandIn.StandIn
  let servers: Array<ServerProcess> = []
  // Every message a server accepted (201), to check at the end that none was lost.
  const accepted: Array<string> = []

  const api = async (server: ServerProcess, method: string, path: string, body?: unknown): Promise<Answer> => {
    const response = await fetch(`${server.url}${path}`, {
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
  const send = async (server: ServerProcess, to: string) => {
    const answer = await api(server, "POST", "/emails", {
      from: "billing@acme.example",
      to: [to],
      subject: "Your receipt",
      body: { text: "Hi" },
      tags: [{ name: "category", value: "receipt" }]
    })
    if (answer.status === 201) accepted.push(String(answer.body.message_id))
    return answer
  }
  const recipients = (answer: Answer) =>
    (answer.body.recipients as Array<{ email: string; state: string }>).map((r) => [r.email, r.state])
  const readiness = async (server: ServerProcess) => {
    const response = await fetch(`${server.url}/readyz`)
    return { status: response.status, body: (await response.json()) as { checks: Record<string, string> } }
  }
  const postToPostmarkHook = (server: ServerProcess, body: unknown) =>
    fetch(`${server.url}/webhooks/postmark`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: `Basic ${Buffer.from(`postmark:${hookPassword}`).toString("base64")}`
      },
      body: JSON.stringify(body)
    })
  const whenReady = async (server: ServerProcess) => {
    const deadline = Date.now() + 20_000
    while ((await readiness(server)).status !== 200) {
      if (Date.now() > deadline) throw new Error(`${server.url} never became ready:\n${server.output().stderr}`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "mailroom-messages-fleet-"))
    ;[cluster, standIn] = await startAll([
      { start: startPostgresCluster, stop: (c) => c.destroy() },
      { start: () => PostmarkStandIn.start({ senderDomains: ["acme.example"] }), stop: (s) => s.close() }
    ])
    const path = join(dir, "mailroom.config.json")
    await writeFile(
      path,
      JSON.stringify({
        serviceDomain: "mailroom.test",
        organizations: [{ id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"], apiKeys: ["mr_test_acme"] }],
        storage: { kind: "local", dir: "storage", signingSecret: "fleet-secret" },
        provider: { kind: "postmark", serverToken: standIn.token, requestHost: standIn.host, useHttps: false },
        // No url: DATABASE_URL, so the file holds no password. The tables are made by whichever starts first.
        messages: { kind: "postgres" },
        events: { postmark: { basicAuth: { username: "postmark", password: hookPassword } } }
      })
    )
    servers = await startAll(
      [1, 2, 3].map(() => ({ start: () => startServer(path, { DATABASE_URL: cluster.url }), stop: (s) => s.stop() }))
    )
    await Promise.all(servers.map(whenReady))
  }, 60_000)

  afterAll(async () => {
    await Promise.all(servers.map((server) => server.stop()))
    await Promise.all([cluster?.destroy(), standIn?.close()])
    if (dir !== undefined) await rm(dir, { recursive: true, force: true })
  })

  it("a Postmark bounce posted to one instance, for a message sent through another, is on all three at once", async () => {
    const [first, second, third] = servers as [ServerProcess, ServerProcess, ServerProcess]
    const sent = await send(second, "alice@example.com")
    assert.strictEqual(sent.status, 201, JSON.stringify(sent.body))
    const id = String(sent.body.message_id)
    for (const server of servers) {
      const record = await api(server, "GET", `/emails/${id}`)
      assert.deepStrictEqual(recipients(record), [["alice@example.com", "sent"]], server.url)
    }
    // The bounce as Postmark posts it: the MessageID it answered, the Metadata the send carried.
    const providerId = String((await api(first, "GET", `/emails/${id}`)).body.provider_message_id)
    const delivered = standIn.accepted.find((m) => m.messageId === providerId)
    assert.isDefined(delivered, "Postmark holds the message")
    const { Metadata } = (delivered?.fields ?? {}) as { Metadata?: unknown }
    const bounce = JSON.parse(
      await readFile(new URL("../../postmark/test/fixtures/bounce.json", import.meta.url), "utf8")
    ) as Record<string, unknown>
    const hook = await postToPostmarkHook(first, {
      ...bounce,
      ID: randomInt(1, 2 ** 47),
      MessageID: providerId,
      Email: "alice@example.com",
      Metadata
    })
    assert.deepStrictEqual([hook.status, await hook.json()], [200, { events: 1 }])
    for (const server of [second, third, first]) {
      const record = await api(server, "GET", `/emails/${id}`)
      assert.strictEqual(record.body.status, "bounced", server.url)
      assert.deepStrictEqual(recipients(record), [["alice@example.com", "bounced"]])
      assert.deepStrictEqual(
        (record.body.events as Array<{ type: string; provider: string }>).map((e) => [e.type, e.provider]),
        [["bounced", "postmark"]]
      )
      assert.deepStrictEqual(record.body.tags, [{ name: "category", value: "receipt" }])
    }
    // The hard bounce suppressed the address, for every instance.
    const before = standIn.accepted.length
    for (const server of servers) assert.strictEqual((await send(server, "alice@example.com")).status, 422)
    assert.strictEqual(standIn.accepted.length, before, "nothing reached Postmark")
  })

  it("a suppression added on one instance is honoured by all three", async () => {
    const [first, second, third] = servers as [ServerProcess, ServerProcess, ServerProcess]
    assert.strictEqual((await send(first, "bob@example.com")).status, 201)
    const added = await api(third, "POST", "/suppressions", { email: "bob@example.com" })
    assert.strictEqual(added.status, 201, JSON.stringify(added.body))
    const before = standIn.accepted.length
    for (const server of [first, second, third]) {
      const refused = await send(server, "bob@example.com")
      assert.strictEqual(refused.status, 422, server.url)
      assert.include(String(refused.body.error), "bob@example.com")
      const listed = await api(server, "GET", "/suppressions?reason=manual")
      assert.include(
        (listed.body.data as Array<{ email: string }>).map((s) => s.email),
        "bob@example.com"
      )
    }
    assert.strictEqual(standIn.accepted.length, before, "nothing reached Postmark")
    // Taken off the list on one, every instance sends to it again.
    assert.strictEqual((await api(first, "DELETE", "/suppressions/bob@example.com")).status, 200)
    assert.strictEqual((await send(second, "bob@example.com")).status, 201)
  })

  it("PostgreSQL stopped mid-run: sends are 503 with Retry-After and nothing is sent; back up, nothing is lost", async () => {
    for (const [i, server] of servers.entries())
      assert.strictEqual((await send(server, `before${i}@example.com`)).status, 201)
    const before = standIn.accepted.length
    await cluster.stop()
    try {
      for (const server of servers) {
        const refused = await send(server, "carol@example.com")
        assert.strictEqual(refused.status, 503, JSON.stringify(refused.body))
        assert.deepStrictEqual(Object.keys(refused.body), ["error", "may_have_been_sent"])
        assert.strictEqual(refused.body.may_have_been_sent, false, "not recorded, so never sent")
        assert.include(String(refused.body.error), "the database cannot be reached right now")
        assert.strictEqual(refused.headers.get("retry-after"), "5")
        assert.notInclude(JSON.stringify(refused.body), String(cluster.port))
        const ready = await readiness(server)
        assert.strictEqual(ready.status, 503)
        assert.include(ready.body.checks.messages ?? "", "the database cannot be reached")
        assert.strictEqual(ready.body.checks.queue, "the send queue's database cannot be reached")
        assert.strictEqual(ready.body.checks.storage, "ok")
      }
      assert.strictEqual(standIn.accepted.length, before, "a send whose record cannot be written is not sent")
      // A provider's webhook is refused with a 503, so the provider delivers the event again later.
      const bounce = JSON.parse(
        await readFile(new URL("../../postmark/test/fixtures/bounce.json", import.meta.url), "utf8")
      ) as Record<string, unknown>
      assert.strictEqual((await postToPostmarkHook(servers[0] as ServerProcess, bounce)).status, 503)
    } finally {
      await cluster.start()
    }
    await Promise.all(servers.map(whenReady))
    for (const [i, server] of servers.entries())
      assert.strictEqual((await send(server, `after${i}@example.com`)).status, 201)
    assert.strictEqual(standIn.accepted.length, before + servers.length)
    // Every message any instance accepted is there, on every instance.
    for (const server of servers) {
      const listed = await api(server, "GET", "/emails?limit=100")
      assert.sameMembers(
        (listed.body.data as Array<{ id: string }>).map((r) => r.id),
        accepted
      )
    }
  })
})
