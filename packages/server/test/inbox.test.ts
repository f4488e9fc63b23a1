// The inbox API beside the viewer, on a server in process: lists with filters and cursors, a message
// with its links, attachments and events, deletes, read marks, the long-poll wait, the errors each bad
// parameter gets, its OpenAPI document, and an index whose queries never scan the outbox.
import { mkdtemp, rm, unlink, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Schema } from "effect"
import { afterAll, afterEach, assert, beforeAll, describe, it, vi } from "vitest"
import { Server, ServerConfig } from "../src/index.js"
import * as InboxSchema from "../src/internal/inbox/schema.js"
import * as Store from "../src/internal/inbox/store.js"

let dir: string
let server: Server.RunningServer
let inbox: string

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mailroom-inbox-"))
  const config = ServerConfig.parse(
    {
      port: 0,
      serviceDomain: "mailroom.test",
      organizations: [
        { id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"], apiKeys: ["mr_test_acme"] },
        { id: "org_globex", slug: "globex", verifiedDomains: ["globex.example"], apiKeys: ["mr_test_globex"] }
      ],
      storage: { kind: "local", dir: "storage", signingSecret: "inbox-test" },
      provider: { kind: "outbox", dir: "outbox" }
    },
    { baseDir: dir, source: "test config" }
  )
  server = await Server.start(config, { log: () => {} })
  inbox = `${server.viewer}api`
})
afterAll(async () => {
  await server?.close()
  await rm(dir, { recursive: true, force: true })
})
afterEach(async () => {
  await fetch(`${inbox}/messages`, { method: "DELETE" })
})

const send = async (email: Record<string, unknown>, key = "mr_test_acme") => {
  const response = await fetch(`${server.url}/emails`, {
    method: "POST",
    headers: { "x-api-key": key, "content-type": "application/json" },
    body: JSON.stringify({ from: "hello@acme.example", subject: "Hi", body: { text: "Hi." }, ...email })
  })
  const body = (await response.json()) as { message_id: string }
  assert.strictEqual(response.status, 201, JSON.stringify(body))
  return body.message_id
}

const get = async (path: string) => {
  const response = await fetch(`${inbox}${path}`)
  return { status: response.status, body: response.status === 204 ? undefined : ((await response.json()) as unknown) }
}
const page = async (query: string) => {
  const { status, body } = await get(`/messages${query}`)
  assert.strictEqual(status, 200, JSON.stringify(body))
  return Schema.decodeUnknownSync(InboxSchema.Page)(body)
}

describe("the inbox API", () => {
  it("lists newest first, filters by to, from, subject and since, and pages with a cursor", async () => {
    const first = await send({ to: ["alice@example.com"], subject: "Welcome aboard" })
    const second = await send({ to: ["bob@example.com"], cc: ["Alice@Example.com"], subject: "Your invoice" })
    const third = await send(
      { from: "billing@globex.example", to: ["carol@example.com"], subject: "Receipt" },
      "mr_test_globex"
    )
    assert.deepStrictEqual(
      (await page("")).data.map((m) => m.id),
      [third, second, first]
    )
    assert.deepStrictEqual(
      (await page("?to=ALICE@example.com")).data.map((m) => m.id),
      [second, first]
    )
    assert.deepStrictEqual(
      (await page("?from=billing@globex.example")).data.map((m) => m.id),
      [third]
    )
    assert.deepStrictEqual(
      (await page("?subject=invoice")).data.map((m) => m.id),
      [second]
    )
    assert.deepStrictEqual(
      (await page("?subject=In")).data.map((m) => m.id),
      [second],
      "fewer than 3 characters too"
    )
    assert.deepStrictEqual(
      (await page("?to=alice@example.com&subject=welcome")).data.map((m) => m.id),
      [first]
    )
    const all = await page("")
    const since = all.data[1]?.received_at as string
    assert.includeMembers(
      (await page(`?since=${since}`)).data.map((m) => m.id),
      [third, second]
    )
    assert.deepStrictEqual((await page(`?since=2999-01-01T00:00:00Z`)).data, [])
    const one = await page("?limit=1")
    assert.deepStrictEqual(
      one.data.map((m) => m.id),
      [third]
    )
    const two = await page(`?limit=1&cursor=${one.next_cursor}`)
    const three = await page(`?limit=1&cursor=${two.next_cursor}`)
    assert.deepStrictEqual([two.data[0]?.id, three.data[0]?.id, three.next_cursor], [second, first, null])
    const summary = all.data[0]
    assert.deepStrictEqual(
      [summary?.organization_id, summary?.from, summary?.to, summary?.subject, summary?.read],
      [
        "org_globex",
        { address: "billing@globex.example", name: null },
        [{ address: "carol@example.com", name: null }],
        "Receipt",
        false
      ]
    )
  })

  it("q searches the sender, the recipients, the subject and the text, as the viewer's search does", async () => {
    const fruit = await send({ to: ["dave@example.com"], subject: "Weekly box", body: { text: "A kumquat for you." } })
    const other = await send({ to: ["erin@example.com"], subject: "Kumquat season" })
    await send({ to: ["frank@example.com"], subject: "Nothing of the kind" })
    assert.sameMembers(
      (await page("?q=kumquat")).data.map((m) => m.id),
      [fruit, other]
    )
    assert.deepStrictEqual(
      (await page("?q=erin")).data.map((m) => m.id),
      [other]
    )
    assert.deepStrictEqual(
      (await page("?q=kumquat&to=dave@example.com")).data.map((m) => m.id),
      [fruit]
    )
    const blank = await get("/messages?q=%20")
    assert.deepStrictEqual([blank.status, blank.body], [400, { errors: ["q: must be 1 to 200 characters"] }])
  })

  it("answers a message with its headers, bodies, links and their texts, attachments and events", async () => {
    const upload = await fetch(`${server.url}/attachments/presign`, {
      method: "POST",
      headers: { "x-api-key": "mr_test_acme", "content-type": "application/json" },
      body: JSON.stringify({ filename: "logo.png", content_type: "image/png" })
    })
    const { url, key } = (await upload.json()) as { url: string; key: string }
    const png = Buffer.from("89504e470d0a1a0a0000000d49484452", "hex")
    await fetch(url, { method: "PUT", headers: { "content-type": "image/png" }, body: png })
    const id = await send({
      to: ["alice@example.com"],
      bcc: ["audit@example.com"],
      subject: "Confirm your address",
      body: {
        html: '<p>Hello <b>Alice</b>, <a href="https://app.example/confirm?t=abc">confirm your <i>address</i></a> or <a href="https://app.example/stop"><img alt="stop"></a>.</p>',
        text: "Hello Alice, confirm: https://app.example/confirm?t=abc. Or stop (https://app.example/stop)."
      },
      attachments: [{ filename: "logo.png", key }]
    })
    const { status, body } = await get(`/messages/${id}`)
    assert.strictEqual(status, 200)
    const message = Schema.decodeUnknownSync(InboxSchema.Detail)(body)
    assert.deepStrictEqual(message.links, [
      { url: "https://app.example/confirm?t=abc", text: "confirm your address", source: "html" },
      { url: "https://app.example/stop", text: "stop", source: "html" },
      { url: "https://app.example/confirm?t=abc", text: "https://app.example/confirm?t=abc", source: "text" },
      { url: "https://app.example/stop", text: "https://app.example/stop", source: "text" }
    ])
    assert.deepStrictEqual(message.bcc, ["audit@example.com"])
    assert.include(message.html ?? "", "<b>Alice</b>")
    assert.include(message.text ?? "", "Hello Alice")
    assert.strictEqual(message.headers.find((h) => h.name === "Subject")?.value, "Confirm your address")
    assert.strictEqual(message.attachment_count, 1)
    const [attachment] = message.attachments
    assert.deepStrictEqual(
      [attachment?.filename, attachment?.content_type, attachment?.inline],
      ["logo.png", "image/png", false]
    )
    const bytes = Buffer.from(await (await fetch(attachment?.download_url ?? "")).arrayBuffer())
    assert.isTrue(bytes.equals(png), "the download URL answers the attachment's bytes")
    assert.deepStrictEqual(
      message.events.map((e) => [e.type, e.recipient]),
      [
        ["delivered", "alice@example.com"],
        ["delivered", "audit@example.com"]
      ]
    )
    assert.include(await (await fetch(message.raw_url)).text(), "Subject: Confirm your address")
  })

  it("deletes one message, then all; marks read and unread; an unknown id is a 404", async () => {
    const a = await send({ to: ["alice@example.com"] })
    const b = await send({ to: ["bob@example.com"] })
    const patch = (id: string, body: unknown) =>
      fetch(`${inbox}/messages/${id}`, {
        method: "PATCH",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body)
      })
    assert.strictEqual(((await (await patch(a, { read: true })).json()) as { read: boolean }).read, true)
    assert.deepStrictEqual(
      (await page("")).data.map((m) => [m.id, m.read]),
      [
        [b, false],
        [a, true]
      ]
    )
    const bad = await patch(a, { read: "yes" })
    assert.deepStrictEqual(
      [bad.status, await bad.json()],
      [400, { errors: ['read: must be true or false, as in {"read": true}'] }]
    )
    assert.deepStrictEqual(await (await fetch(`${inbox}/messages/${a}`, { method: "DELETE" })).json(), { deleted: 1 })
    assert.deepStrictEqual(await get(`/messages/${a}`), {
      status: 404,
      body: { message: "no such message in the outbox" }
    })
    assert.strictEqual((await fetch(`${inbox}/messages/${a}`, { method: "DELETE" })).status, 404)
    assert.strictEqual((await patch(a, { read: true })).status, 404)
    assert.deepStrictEqual(await (await fetch(`${inbox}/messages`, { method: "DELETE" })).json(), { deleted: 1 })
    assert.deepStrictEqual((await page("")).data, [])
    assert.strictEqual((await get("/messages/../../etc")).status, 404)
  })

  it("a bad or unknown parameter is a 400 naming each; a change from another site is refused", async () => {
    for (const [query, errors] of [
      ["?to=alice", ["to: must be an email address"]],
      [
        "?since=yesterday&limit=0",
        ["since: must be an ISO 8601 time, such as 2026-01-31T12:00:00Z", "limit: must be a whole number from 1 to 100"]
      ],
      ["?cursor=abc", ["cursor: is not a cursor this inbox answered"]],
      ["?too=alice@example.com", ["too: is not a parameter of messages (to, from, subject, since, limit, cursor, q)"]],
      ["?to=a@example.com&to=b@example.com", ["to: give it once"]]
    ] as const) {
      assert.deepStrictEqual(await get(`/messages${query}`), { status: 400, body: { errors } }, query)
    }
    assert.deepStrictEqual(await get("/wait?timeout=2m"), {
      status: 400,
      body: { errors: ["timeout: must be a duration up to 60s, such as 10s or 500ms"] }
    })
    const forged = await fetch(`${inbox}/messages`, { method: "DELETE", headers: { "sec-fetch-site": "cross-site" } })
    assert.strictEqual(forged.status, 403)
    // A browser that sends no Sec-Fetch-Site still names the page's origin: another one is refused too.
    const id = await send({ to: ["kept@example.com"] })
    const fromElsewhere = await fetch(`${inbox}/messages/${id}`, {
      method: "DELETE",
      headers: { origin: "http://evil.example" }
    })
    assert.strictEqual(fromElsewhere.status, 403)
    assert.strictEqual((await get(`/messages/${id}`)).status, 200, "the message is still there")
    const own = new URL(inbox).origin
    const fromViewer = await fetch(`${inbox}/messages/${id}`, { method: "DELETE", headers: { origin: own } })
    assert.strictEqual(fromViewer.status, 200)
  })
})

describe("the inbox's wait", () => {
  it("answers the next matching message within a second of its send, with its links", async () => {
    const since = new Date().toISOString()
    const started = fetch(`${inbox}/wait?to=dave@example.com&since=${since}&timeout=20s`)
    // A message to someone else does not end it.
    await send({ to: ["erin@example.com"] })
    const sentAt = performance.now()
    const id = await send({ to: ["dave@example.com"], body: { text: "Go to https://app.example/x" } })
    const response = await started
    const answeredAfter = performance.now() - sentAt
    assert.strictEqual(response.status, 200)
    const message = Schema.decodeUnknownSync(InboxSchema.Detail)(await response.json())
    assert.strictEqual(message.id, id)
    assert.deepStrictEqual(
      message.links.map((l) => l.url),
      ["https://app.example/x"]
    )
    assert.isBelow(answeredAfter, 1000)
  })

  it("with since, answers at once with a match already there; past its timeout, 204 with no body", async () => {
    const before = new Date(Date.now() - 60_000).toISOString()
    const id = await send({ to: ["frank@example.com"], subject: "Reset your password" })
    const found = await get(`/wait?to=frank@example.com&subject=reset&since=${before}`)
    assert.strictEqual((found.body as { id: string }).id, id)
    const none = await fetch(`${inbox}/wait?to=nobody@example.com&timeout=200ms`)
    assert.deepStrictEqual([none.status, await none.text()], [204, ""])
  })

  it("holds at most 100 waits at once; one more is a 503 with Retry-After", async () => {
    const controller = new AbortController()
    const open = Array.from({ length: 100 }, () =>
      fetch(`${inbox}/wait?to=nobody@example.com&timeout=30s`, { signal: controller.signal }).catch(() => undefined)
    )
    await vi.waitFor(async () => {
      const extra = await fetch(`${inbox}/wait?to=nobody@example.com&timeout=1ms`)
      assert.strictEqual(extra.status, 503)
      assert.strictEqual(extra.headers.get("retry-after"), "1")
    })
    controller.abort()
    await Promise.all(open)
    // The aborted waits are let go: another can start.
    await vi.waitFor(async () =>
      assert.strictEqual((await fetch(`${inbox}/wait?to=n@example.com&timeout=1ms`)).status, 204)
    )
  })
})

describe("the inbox's index", () => {
  it("sees files added and removed by hand", async () => {
    const id = await send({ to: ["gina@example.com"] })
    assert.deepStrictEqual(
      (await page("?to=gina@example.com")).data.map((m) => m.id),
      [id]
    )
    await unlink(join(dir, "outbox", `${id}.eml`))
    await vi.waitFor(async () => assert.deepStrictEqual((await page("?to=gina@example.com")).data, []))
    await writeFile(
      join(dir, "outbox", "dropped-in.eml"),
      "From: x@example.com\r\nTo: gina@example.com\r\nSubject: By hand\r\nDate: Mon, 1 Jan 2024 00:00:00 +0000\r\n\r\nHi\r\n"
    )
    await vi.waitFor(async () =>
      assert.deepStrictEqual(
        (await page("?to=gina@example.com")).data.map((m) => m.subject),
        ["By hand"]
      )
    )
  })

  it("answers every filter from an index: no query scans the messages", async () => {
    const index = Store.make(join(dir, "plans"))
    const database = await index.open()
    const plans = (query: Store.Query) => {
      const { sql, params } = Store.listStatement(query)
      return (database.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as Array<{ detail: string }>).map(
        (r) => r.detail
      )
    }
    // Newest first with no filter walks the newest-first index and stops at the limit.
    assert.deepStrictEqual(plans({ limit: 10 }), ["SCAN m USING INDEX messages_newest"])
    // Each filter starts from its own index (or the search index), never from a walk over every message.
    for (const query of [
      { limit: 10, to: "a@example.com" },
      { limit: 10, from: "a@example.com" },
      { limit: 10, subject: "invoice" },
      { limit: 10, text: "confirm" },
      { limit: 10, since: "2026-01-01T00:00:00.000Z" },
      { limit: 10, after: { receivedAt: "2026-01-01T00:00:00.000Z", id: "x" } },
      { limit: 10, to: "a@example.com", subject: "invoice", since: "2026-01-01T00:00:00.000Z" }
    ]) {
      const detail = plans(query)
      assert.isFalse(
        detail.some((d) => /^SCAN (m|messages)\b/.test(d)),
        `${JSON.stringify(query)}: ${detail.join(" | ")}`
      )
    }
    await index.close()
  })
})

describe("the inbox's OpenAPI document", () => {
  it("is served beside it, under the tag inbox, with every schema it names", async () => {
    const { status, body } = await get("/openapi.json")
    assert.strictEqual(status, 200)
    const document = body as {
      paths: Record<string, Record<string, { tags: Array<string> }>>
      components: { schemas: Record<string, unknown> }
    }
    assert.deepStrictEqual(Object.keys(document.paths), [
      "/_mailroom/outbox/api/messages",
      "/_mailroom/outbox/api/messages/{id}",
      "/_mailroom/outbox/api/wait"
    ])
    for (const path of Object.values(document.paths))
      for (const operation of Object.values(path)) assert.deepStrictEqual(operation.tags, ["inbox"])
    const list = document.paths["/_mailroom/outbox/api/messages"]?.get as unknown as {
      parameters: ReadonlyArray<{ name: string }>
    }
    assert.deepStrictEqual(
      list.parameters.map((p) => p.name),
      ["to", "from", "subject", "since", "q", "limit", "cursor"]
    )
    const refs = [...JSON.stringify(document).matchAll(/"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1] as string)
    for (const ref of refs) assert.property(document.components.schemas, ref)
  })
})
