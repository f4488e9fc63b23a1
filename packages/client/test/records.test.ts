// emails.get, emails.list and the suppression list against a real server: the records the server
// keeps, pages walked by the async iterator, each error as its class, one organisation's records only.

import { rejection } from "@mailroom/test-support"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { MailroomClient, NotFoundError, UnprocessableError, ValidationError } from "../src/index.js"
import { acme, globex, type Mailroom, startMailroom } from "./support/mailroom.js"

const email = (subject: string, to = ["alice@example.com"]) => ({
  from: "hello@acme.example",
  to,
  subject,
  body: { text: "Hi" },
  tags: [{ name: "kind", value: subject }]
})

describe("records and suppressions against a running server", () => {
  let mailroom: Mailroom
  let client: MailroomClient.MailroomClient
  let other: MailroomClient.MailroomClient
  beforeAll(async () => {
    mailroom = await startMailroom()
    client = MailroomClient.make({ baseUrl: mailroom.url, apiKey: acme.apiKey })
    other = MailroomClient.make({ baseUrl: mailroom.url, apiKey: globex.apiKey })
  })
  afterAll(async () => {
    await mailroom?.close()
  })

  it("emails.get reads a sent message back: delivered, with the outbox's event", async () => {
    const { message_id } = await client.emails.send(email("welcome", ["alice@example.com", "o'brien+x@example.com"]))
    const detail = await client.emails.get(message_id)
    assert.strictEqual(detail.id, message_id)
    assert.strictEqual(detail.status, "delivered")
    assert.deepStrictEqual(
      detail.recipients.map((r) => [r.email, r.kind, r.state]),
      [
        ["alice@example.com", "to", "delivered"],
        ["o'brien+x@example.com", "to", "delivered"]
      ]
    )
    assert.deepStrictEqual(detail.tags, [{ name: "kind", value: "welcome" }])
    assert.sameMembers(
      detail.events.map((e) => `${e.type} ${e.recipient}`),
      ["delivered alice@example.com", "delivered o'brien+x@example.com"]
    )
    const theirs = await rejection(other.emails.get(message_id))
    assert.isTrue(NotFoundError.isInstance(theirs), "another organisation's message")
    assert.isTrue(NotFoundError.isInstance(await rejection(client.emails.get("not/an id"))))
  })

  it("emails.list walks every page newest first, asking for the next only as the loop does", async () => {
    const ids: Array<string> = []
    for (const subject of ["p1", "p2", "p3", "p4", "p5"])
      ids.push((await client.emails.send(email(subject))).message_id)
    const seen: Array<Array<string>> = []
    for await (const page of client.emails.list({ limit: 2 })) {
      seen.push(page.data.map((r) => r.id))
      if (seen.length === 2) break
    }
    assert.deepStrictEqual(seen, [
      [ids[4], ids[3]],
      [ids[2], ids[1]]
    ])
    const all: Array<string> = []
    let pages = 0
    for await (const page of client.emails.list({ limit: 3 })) {
      pages++
      all.push(...page.data.map((r) => r.id))
    }
    assert.deepStrictEqual(all.slice(0, 5), [...ids].reverse())
    assert.strictEqual(pages, Math.ceil(all.length / 3))
    const first = await client.emails.listPage({ limit: 1, tag: "kind:p2" })
    assert.deepStrictEqual(
      first.data.map((r) => r.id),
      [ids[1]]
    )
    assert.isNull(first.next_cursor)
    const plus = await client.emails.listPage({ to: "o'brien+x@example.com" })
    assert.deepStrictEqual(
      plus.data.map((r) => r.subject),
      ["welcome"]
    )
    const since = await client.emails.listPage({ since: new Date(Date.now() + 60_000).toISOString() })
    assert.deepStrictEqual(since.data, [])
    assert.deepStrictEqual((await other.emails.listPage()).data, [], "globex sent nothing")
  })

  it("a bad query is a ValidationError naming each field", async () => {
    const error = await rejection(client.emails.listPage({ limit: 0, status: "lost" as never, since: "yesterday" }))
    assert.isTrue(ValidationError.isInstance(error))
    assert.deepStrictEqual((error as ValidationError).errors, [
      "limit: must be a whole number from 1 to 100",
      "status: must be one of scheduled, sending, sent, delivery_delayed, delivered, bounced, complained, suppressed, cancelled, failed, unknown",
      "since: must be an RFC 3339 date-time with an offset, such as 2026-05-01T09:00:00Z"
    ])
    const iterated = await rejection(client.emails.list({ cursor: "nope!" }).next())
    assert.isTrue(ValidationError.isInstance(iterated))
  })

  it("suppressions: add, a send to the address refused, listed, removed by its percent-encoded address", async () => {
    const address = "eve+news/x@Example.COM"
    const added = await client.suppressions.add({ email: address })
    assert.deepInclude(added, {
      email: "eve+news/x@example.com",
      reason: "manual",
      message_id: null,
      detail: null,
      created: true
    })
    const again = await client.suppressions.add({ email: "eve+news/x@example.com", reason: "complained" })
    assert.deepStrictEqual(again, { ...added, created: false })
    const refused = await rejection(client.emails.send(email("blocked", [address])))
    assert.isTrue(UnprocessableError.isInstance(refused))
    assert.strictEqual((await mailroom.sent()).filter((name) => name.includes("blocked")).length, 0)
    await client.suppressions.add({ email: "old@example.com", reason: "bounced", detail: "imported" })
    const listed: Array<string> = []
    for await (const page of client.suppressions.list({ limit: 1 })) listed.push(...page.data.map((s) => s.email))
    assert.sameMembers(listed, ["eve+news/x@example.com", "old@example.com"])
    assert.deepStrictEqual(
      (await client.suppressions.listPage({ reason: "bounced" })).data.map((s) => [s.email, s.detail]),
      [["old@example.com", "imported"]]
    )
    assert.deepStrictEqual((await other.suppressions.listPage()).data, [])
    assert.isTrue(NotFoundError.isInstance(await rejection(other.suppressions.remove(address))))
    assert.deepStrictEqual(await client.suppressions.remove(address), {
      deleted: true,
      email: "eve+news/x@example.com"
    })
    assert.isTrue(NotFoundError.isInstance(await rejection(client.suppressions.remove(address))))
    const invalid = await rejection(client.suppressions.add({ email: "eve" }))
    assert.isTrue(ValidationError.isInstance(invalid))
    assert.deepStrictEqual((invalid as ValidationError).errors, ["email: must be a valid email address"])
  })

  it("an id of . or .. (which a URL resolves away, to another route) is a TypeError, never sent", async () => {
    for (const id of [".", "..", ""]) {
      for (const call of [
        () => client.emails.get(id),
        () => client.emails.cancel(id),
        () => client.emails.reschedule(id, "2030-01-01T00:00:00Z"),
        () => client.suppressions.remove(id),
        () => client.testing.getEmail(id)
      ]) {
        const error = await rejection(call())
        assert.instanceOf(error, TypeError, `${JSON.stringify(id)}: ${String(error)}`)
        assert.include(String(error), `${JSON.stringify(id)} is not`)
      }
    }
  })

  it("needs an apiKey, and says so before any request", async () => {
    const tokenOnly = MailroomClient.make({ baseUrl: mailroom.url, accessToken: acme.accessToken })
    const error = await rejection(tokenOnly.emails.listPage())
    assert.instanceOf(error, TypeError)
    assert.match(String(error), /emails\.list needs an apiKey/)
  })
})
