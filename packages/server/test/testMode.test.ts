// The test mode against the built server in its own process, as a user's end-to-end suite meets it:
// a send to the simulator's bounced@ is recorded bounced, suppressed, signed to a webhook receiver and
// refused next time; the inbox API lists it with its links, a wait answers the next send at once, bad
// input is named, and beyond loopback the inbox opens with the viewer token only.
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { MailEvent } from "@mailroom/core"
import { startWebhookReceiver, type WebhookReceiver } from "@mailroom/core/testing"
import { Webhook } from "standardwebhooks"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { run } from "./process.js"

const secret = `whsec_${Buffer.from("acme-webhook-signing-key-32bytes").toString("base64")}`
const viewerToken = "inbox-admin-token-for-tests"

let dir: string
let receiver: WebhookReceiver
let base: string
const processes: Array<ReturnType<typeof run>> = []

const start = async (name: string, env: Record<string, string> = {}, viewer: Record<string, unknown> = {}) => {
  const path = join(dir, `${name}.json`)
  await writeFile(
    path,
    JSON.stringify({
      port: 0,
      serviceDomain: "mailroom.test",
      organizations: [{ id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"], apiKeys: ["mr_test_acme"] }],
      storage: { kind: "local", dir: `${name}/storage`, signingSecret: "test-mode" },
      provider: { kind: "outbox", dir: `${name}/outbox` },
      events: {
        webhooks: [{ organization: "org_acme", url: receiver.url, secret }],
        queue: { kind: "local", dir: `${name}/events` }
      },
      viewer
    })
  )
  const server = run(path, env)
  processes.push(server)
  return server.listening
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mailroom-test-mode-"))
  receiver = await startWebhookReceiver()
  base = await start("loopback")
})
afterAll(async () => {
  for (const p of processes) p.child.kill("SIGTERM")
  await Promise.all(processes.map((p) => p.exited))
  await receiver.close()
  await rm(dir, { recursive: true, force: true })
})

const send = (to: string, extra: Record<string, unknown> = {}) =>
  fetch(`${base}/emails`, {
    method: "POST",
    headers: { "x-api-key": "mr_test_acme", "content-type": "application/json" },
    body: JSON.stringify({
      from: "app@acme.example",
      to: [to],
      subject: "Confirm your address",
      body: {
        html: '<p><a href="https://app.example/confirm?t=1">Confirm</a></p>',
        text: "https://app.example/confirm?t=1"
      },
      ...extra
    })
  })
const json = async (response: Response) => (await response.json()) as Record<string, unknown>

describe("the test mode on a server process", () => {
  it("bounced@ is recorded bounced, suppressed, signed to the webhook, and the next send to it is a 422", async () => {
    const first = await send("bounced@simulator.mailroom.test")
    assert.strictEqual(first.status, 201)
    const id = (await json(first)).message_id as string
    const record = await json(await fetch(`${base}/emails/${id}`, { headers: { "x-api-key": "mr_test_acme" } }))
    assert.strictEqual(record.status, "bounced")
    assert.deepStrictEqual(
      (record.recipients as Array<{ email: string; state: string }>).map((r) => [r.email, r.state]),
      [["bounced@simulator.mailroom.test", "bounced"]]
    )
    const list = await json(await fetch(`${base}/suppressions`, { headers: { "x-api-key": "mr_test_acme" } }))
    assert.deepStrictEqual(
      (list.data as Array<{ email: string; reason: string; message_id: string }>).map((s) => [
        s.email,
        s.reason,
        s.message_id
      ]),
      [["bounced@simulator.mailroom.test", "bounced", id]]
    )
    const [hook] = await receiver.waitFor(1)
    const event = new Webhook(secret).verify(hook?.body ?? "", hook?.headers ?? {}) as MailEvent.MailEvent
    assert.deepStrictEqual(
      [event.type, event.recipient, event.message_id, event.bounce?.kind, event.provider],
      ["bounced", "bounced@simulator.mailroom.test", id, "hard", "outbox"]
    )
    const again = await send("bounced@simulator.mailroom.test")
    assert.strictEqual(again.status, 422)
    assert.include(String((await json(again)).error), "suppression list")
  })

  it("the inbox lists the message to an address with its links, and answers the one it asks for", async () => {
    const id = (await json(await send("delivered+inbox@simulator.mailroom.test"))).message_id as string
    const page = await json(
      await fetch(`${base}/_mailroom/outbox/api/messages?to=delivered%2Binbox@simulator.mailroom.test`)
    )
    const [message] = page.data as Array<{ id: string; links: Array<{ url: string; text: string }> }>
    assert.strictEqual(message?.id, id)
    assert.deepStrictEqual(
      message?.links.map((l) => [l.url, l.text]),
      [
        ["https://app.example/confirm?t=1", "Confirm"],
        ["https://app.example/confirm?t=1", "https://app.example/confirm?t=1"]
      ]
    )
    const one = await json(await fetch(`${base}/_mailroom/outbox/api/messages/${id}`))
    assert.deepStrictEqual(
      (one.events as Array<{ type: string }>).map((e) => e.type),
      ["delivered"]
    )
  })

  it("a wait started before a send answers it within a second of the send", async () => {
    // `since` (as the client's awaitEmail sends it) holds the wait to the moment it was started, even if
    // the send reaches the server first.
    const since = new Date().toISOString()
    const waiting = fetch(`${base}/_mailroom/outbox/api/wait?to=waited@example.com&since=${since}&timeout=20s`)
    const sentAt = performance.now()
    const sent = await send("waited@example.com")
    const id = (await json(sent)).message_id as string
    const answer = await waiting
    const after = performance.now() - sentAt
    assert.strictEqual(answer.status, 200)
    assert.strictEqual((await json(answer)).id, id)
    assert.isBelow(after, 1000)
  })

  it("an unknown id is a 404, a bad filter a 400 naming it, and a wait past its timeout a 204", async () => {
    const missing = await fetch(`${base}/_mailroom/outbox/api/messages/0195f0c8-7d3e-7c41-9d2b-5b1e2f3a4c5d`)
    assert.deepStrictEqual([missing.status, await missing.json()], [404, { message: "no such message in the outbox" }])
    const bad = await fetch(`${base}/_mailroom/outbox/api/messages?to=not-an-address&limit=500`)
    assert.deepStrictEqual(
      [bad.status, await bad.json()],
      [400, { errors: ["to: must be an email address", "limit: must be a whole number from 1 to 100"] }]
    )
    const none = await fetch(`${base}/_mailroom/outbox/api/wait?to=nobody@example.com&timeout=300ms`)
    assert.deepStrictEqual([none.status, await none.text()], [204, ""])
  })

  it("beyond loopback, the inbox answers the viewer token only; without it, the API's 404", async () => {
    const open = await start("network", { HOST: "0.0.0.0" }, { token: viewerToken })
    const inbox = `${open}/_mailroom/outbox/api/messages`
    const refused = await fetch(inbox)
    assert.strictEqual(refused.status, 404)
    assert.notProperty(await refused.json(), "data")
    const wrong = await fetch(inbox, { headers: { "x-mailroom-viewer-token": "guess" } })
    assert.strictEqual(wrong.status, 404)
    const withKey = await fetch(inbox, { headers: { "x-api-key": "mr_test_acme" } })
    assert.strictEqual(withKey.status, 404, "an organisation's key never opens it")
    const allowed = await fetch(inbox, { headers: { "x-mailroom-viewer-token": viewerToken } })
    assert.strictEqual(allowed.status, 200)
    assert.deepStrictEqual((await allowed.json()).data, [])
  })
})
