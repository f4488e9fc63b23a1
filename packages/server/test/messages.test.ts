// Message records on `npm start`'s defaults (local storage, the outbox, no messages section: SQLite at
// .mailroom/mailroom.db), through real server processes: records and suppressions survive a restart, a
// suppressed address gets nothing, tags and unsubscribe reach the .eml, the record and the webhook.
import { existsSync } from "node:fs"
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { MailEvent } from "@mailroom/core"
import { startWebhookReceiver, type WebhookReceiver } from "@mailroom/core/testing"
import { simpleParser } from "mailparser"
import { Webhook } from "standardwebhooks"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { headerValues } from "../../smtp/test/support/received.js"
import { type ServerProcess, startServer } from "./support/serverProcess.js"

const secret = `whsec_${Buffer.from("acme-webhook-signing-key-32bytes").toString("base64")}`

describe("message records on npm start's defaults (SQLite beside the local store)", () => {
  let dir: string
  let configPath: string
  let receiver: WebhookReceiver
  let server: ServerProcess

  const api = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: { "x-api-key": "mr_test_acme", ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    return { status: response.status, body: (await response.json()) as Record<string, unknown> }
  }
  const send = (to: ReadonlyArray<string>, extra: Record<string, unknown> = {}) =>
    api("POST", "/emails", {
      from: "billing@acme.example",
      to,
      subject: "Your receipt",
      body: { text: "Hi" },
      ...extra
    })
  const outbox = async () => (await readdir(join(dir, ".mailroom", "outbox")).catch(() => [])).sort()

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "mailroom-messages-"))
    receiver = await startWebhookReceiver()
    // The committed mailroom.config.json, with a webhook for the organisation.
    const config = JSON.parse(await readFile(new URL("../../../mailroom.config.json", import.meta.url), "utf8"))
    configPath = join(dir, "mailroom.config.json")
    await writeFile(
      configPath,
      JSON.stringify({ ...config, events: { webhooks: [{ organization: "org_acme", url: receiver.url, secret }] } })
    )
    server = await startServer(configPath)
  }, 30_000)

  afterAll(async () => {
    await server?.stop()
    await receiver?.close()
    if (dir !== undefined) await rm(dir, { recursive: true, force: true })
  })

  it("a send is delivered to every recipient; the record and a suppression survive a restart", async () => {
    const sent = await send(["alice@example.com", "bob@example.com"], { cc: ["carol@example.com"] })
    assert.strictEqual(sent.status, 201, JSON.stringify(sent.body))
    const id = String(sent.body.message_id)
    // The outbox reports delivery as it writes the .eml, before the send is answered.
    const record = await api("GET", `/emails/${id}`)
    assert.strictEqual(record.status, 200)
    assert.strictEqual(record.body.status, "delivered")
    assert.deepStrictEqual(
      (record.body.recipients as Array<{ email: string; kind: string; state: string }>).map((r) => [
        r.email,
        r.kind,
        r.state
      ]),
      [
        ["alice@example.com", "to", "delivered"],
        ["bob@example.com", "to", "delivered"],
        ["carol@example.com", "cc", "delivered"]
      ]
    )
    assert.deepStrictEqual(
      (record.body.events as Array<{ type: string }>).map((e) => e.type),
      ["delivered", "delivered", "delivered"]
    )
    assert.isTrue(existsSync(join(dir, ".mailroom", "mailroom.db")), "the records live in .mailroom/mailroom.db")
    assert.strictEqual((await api("POST", "/suppressions", { email: "eve@example.com" })).status, 201)

    await server.stop()
    server = await startServer(configPath)
    assert.deepStrictEqual(await api("GET", `/emails/${id}`), record, "the same record after a restart")
    const listed = await api("GET", "/emails?limit=100")
    assert.include(
      (listed.body.data as Array<{ id: string }>).map((r) => r.id),
      id
    )
    const before = await outbox()
    const refused = await send(["eve@example.com"])
    assert.strictEqual(refused.status, 422)
    assert.include(String(refused.body.error), "eve@example.com")
    assert.deepStrictEqual(await outbox(), before, "nothing reached the outbox")
  })

  it("a suppression added over the API drops that address: alone a 422 with nothing sent, with others listed as dropped", async () => {
    const added = await api("POST", "/suppressions", { email: "Mallory@Example.com", reason: "manual" })
    assert.strictEqual(added.status, 201, JSON.stringify(added.body))
    const before = await outbox()
    const refused = await send(["Mallory@EXAMPLE.com"])
    assert.deepStrictEqual(Object.keys(refused.body), ["error"])
    assert.strictEqual(refused.status, 422)
    assert.deepStrictEqual(await outbox(), before, "nothing reached the outbox")

    const partly = await send(["Mallory@example.com", "dave@example.com"])
    assert.strictEqual(partly.status, 201)
    assert.deepStrictEqual(partly.body.suppressed, ["Mallory@example.com"])
    const id = String(partly.body.message_id)
    const eml = await simpleParser(await readFile(join(dir, ".mailroom", "outbox", `${id}.eml`)))
    assert.deepStrictEqual(
      [eml.to].flat().flatMap((to) => to?.value.map((v) => v.address)),
      ["dave@example.com"]
    )
    const record = await api("GET", `/emails/${id}`)
    assert.deepStrictEqual(
      (record.body.recipients as Array<{ email: string; state: string }>).map((r) => [r.email, r.state]),
      [
        ["Mallory@example.com", "suppressed"],
        ["dave@example.com", "delivered"]
      ]
    )
  })

  it("tags and unsubscribe: both headers in the .eml, the tags on the record and in the signed webhook", async () => {
    const already = receiver.requests.length
    const sent = await send(["frank@example.com"], {
      tags: [
        { name: "category", value: "receipt" },
        { name: "customer_id", value: "c-42" }
      ],
      unsubscribe: { url: "https://acme.example/unsubscribe?u=42", mailto: "unsubscribe@acme.example" }
    })
    assert.strictEqual(sent.status, 201, JSON.stringify(sent.body))
    const id = String(sent.body.message_id)
    const eml = await simpleParser(await readFile(join(dir, ".mailroom", "outbox", `${id}.eml`)))
    assert.deepStrictEqual(headerValues(eml, "List-Unsubscribe"), [
      "<https://acme.example/unsubscribe?u=42>, <mailto:unsubscribe@acme.example>"
    ])
    assert.deepStrictEqual(headerValues(eml, "List-Unsubscribe-Post"), ["List-Unsubscribe=One-Click"])
    const tags = [
      { name: "category", value: "receipt" },
      { name: "customer_id", value: "c-42" }
    ]
    assert.deepStrictEqual((await api("GET", `/emails/${id}`)).body.tags, tags)

    // Events of earlier tests may still be arriving: await the requests until this message's is among them.
    const eventsOf = (requests: ReadonlyArray<{ readonly body: string; readonly headers: Record<string, string> }>) =>
      requests
        .map((request) => new Webhook(secret).verify(request.body, request.headers) as MailEvent.MailEvent)
        .filter((event) => event.message_id === id)
    let count = already + 1
    let events = eventsOf(await receiver.waitFor(count, 20_000))
    while (events.length === 0) events = eventsOf(await receiver.waitFor(++count, 20_000))
    assert.strictEqual(events.length, 1)
    assert.strictEqual(events[0]?.type, "delivered")
    assert.deepStrictEqual(events[0]?.tags, tags)
  })
})
