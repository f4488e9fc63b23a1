// The records and suppressions on the wire: GET /emails/{id}, GET /emails, GET|POST /suppressions and
// DELETE /suppressions/{email}, each success body, every bad input's 400 naming it, 404s, 401, 405,
// and one organisation never reading or changing another's.
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { expectJson, jsonCaller, keys, makeWorld, message, type Running, transports, type World } from "./world.js"

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
const instant = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

for (const [transport, start] of Object.entries(transports)) {
  describe(transport, () => {
    let world: World
    let server: Running
    beforeAll(async () => {
      world = makeWorld()
      server = await start(world)
    })
    afterAll(() => server.close())

    const call = jsonCaller(() => server.url)
    const send = async (overrides: Record<string, unknown> = {}, key = keys.acme) => {
      const answer = await call("POST", "/emails", { key, body: { ...message, ...overrides } })
      assert.strictEqual(answer.status, 201, JSON.stringify(answer.body))
      return (answer.body as { message_id: string }).message_id
    }
    type Page = { data: Array<{ id: string; email: string }>; next_cursor: string | null }

    describe("GET /emails/{id}", () => {
      it("200 with the record, each recipient's state and the events; the id in either case", async () => {
        const id = await send({ cc: ["carol@example.net"], tags: [{ name: "kind", value: "invoice" }] })
        assert.match(id, uuid)
        const answer = await call("GET", `/emails/${id}`)
        assert.strictEqual(answer.status, 200)
        const detail = answer.body as Record<string, unknown> & { recipients: Array<Record<string, unknown>> }
        assert.match(String(detail.created_at), instant)
        assert.deepStrictEqual(
          { ...detail, created_at: "", recipients: detail.recipients.map((r) => ({ ...r, updated_at: "" })) },
          {
            id,
            organization_id: "org_acme",
            created_at: "",
            status: "sent",
            from: "billing@acme.example",
            from_name: null,
            subject: "Your invoice",
            recipients: [
              { email: "alice@example.com", kind: "to", state: "sent", updated_at: "" },
              { email: "carol@example.net", kind: "cc", state: "sent", updated_at: "" }
            ],
            tags: [{ name: "kind", value: "invoice" }],
            attachments: [],
            html_bytes: 0,
            text_bytes: "See attached.".length,
            provider: "memory",
            provider_message_id: world.provider.sent.at(-1)?.messageId,
            idempotency_key: null,
            scheduled_at: null,
            last_event: null,
            reason: null,
            events: []
          }
        )
        assert.deepStrictEqual((await call("GET", `/emails/${id.toUpperCase()}`)).body, answer.body)
      })

      it("404 {error} for an unknown id, a malformed one, or another organisation's", async () => {
        const id = await send()
        for (const [path, key] of [
          ["/emails/0190c3b2-0000-7000-8000-000000000000", keys.acme],
          ["/emails/not-an-id", keys.acme],
          [`/emails/${id}`, keys.globex]
        ] as const) {
          const answer = await call("GET", path, { key })
          assert.strictEqual(answer.status, 404, path)
          assert.hasAllKeys(answer.body, ["error"])
        }
      })

      it("400 {errors} for a bad percent-encoding or a query parameter; 401; 405; no route past one segment", async () => {
        const id = await send()
        expectJson(await call("GET", "/emails/%E0%A4%A"), 400, { errors: ["id: is not valid percent-encoding"] })
        expectJson(await call("GET", `/emails/${id}?expand=events`), 400, {
          errors: ["expand: is not a known query parameter"]
        })
        for (const key of [null, "mr_nobody", keys.acmeToken]) {
          expectJson(await call("GET", `/emails/${id}`, { key }), 401, {
            message: "missing, invalid or revoked credential"
          })
        }
        const wrong = await call("DELETE", `/emails/${id}`)
        expectJson(wrong, 405, { error: `use GET, PATCH for /emails/${id}` })
        assert.strictEqual(wrong.headers.get("allow"), "GET, PATCH")
        for (const path of [`/emails/${id}/events`, "/emails/"]) {
          assert.strictEqual((await call("GET", path)).status, 404, path)
          assert.hasAllKeys((await call("GET", path)).body, ["message"])
        }
      })
    })

    describe("GET /emails", () => {
      it("200 pages of the caller's records, newest first, with each filter", async () => {
        const before = new Date(Date.now() - 1000).toISOString()
        const tagged = await send({ to: ["o'brien+tag@example.com"], tags: [{ name: "batch", value: transport[0] }] })
        const latest = await send({ tags: [{ name: "batch", value: transport[0] }] })
        await send({ from: "x@globex.example" }, keys.globex)
        const first = (await call("GET", "/emails?limit=1")).body as Page
        assert.deepStrictEqual(
          first.data.map((r) => r.id),
          [latest]
        )
        const second = (await call("GET", `/emails?limit=1&cursor=${first.next_cursor}`)).body as Page
        assert.deepStrictEqual(
          second.data.map((r) => r.id),
          [tagged]
        )
        const ids = async (query: string, key = keys.acme) =>
          ((await call("GET", `/emails?${query}`, { key })).body as Page).data.map((r) => r.id)
        assert.deepStrictEqual(await ids(`tag=batch:${transport[0]}`), [latest, tagged])
        assert.deepStrictEqual(await ids("to=o'brien%2Btag%40example.com"), [tagged])
        assert.deepStrictEqual(await ids(`since=${encodeURIComponent(before)}&limit=2`), [latest, tagged])
        assert.deepStrictEqual(await ids("until=2000-01-01T00:00:00%2B01:00"), [])
        assert.includeMembers(await ids("status=sent&limit=100"), [latest, tagged])
        const theirs = (await call("GET", "/emails?limit=100", { key: keys.globex })).body as {
          data: Array<{ organization_id: string }>
        }
        assert.isAbove(theirs.data.length, 0)
        assert.isTrue(theirs.data.every((r) => r.organization_id === "org_globex"))
        assert.notInclude(await ids("limit=100", keys.globex), latest)
      })

      it("400 {errors} naming each bad, unknown or repeated parameter", async () => {
        const cases: ReadonlyArray<[string, Array<string>]> = [
          ["limit=0", ["limit: must be a whole number from 1 to 100"]],
          ["limit=101", ["limit: must be a whole number from 1 to 100"]],
          ["limit=ten", ["limit: must be a whole number from 1 to 100"]],
          ["cursor=%7B%7D", ["cursor: is not a cursor this API answered"]],
          // A cursor of GET /suppressions (two keys) names no page of records.
          ["cursor=WyJ4IiwieSJd", ["cursor: is not a cursor this API answered"]],
          [
            "status=lost",
            [
              "status: must be one of scheduled, sending, sent, delivery_delayed, delivered, bounced, complained, suppressed, cancelled, failed, unknown"
            ]
          ],
          ["to=alice", ["to: must be a valid email address"]],
          ["tag=kind", ["tag: must be name:value, each 1 to 256 ASCII letters, digits, _ or -"]],
          [
            "since=2026-05-01T09:00:00",
            ["since: must be an RFC 3339 date-time with an offset, such as 2026-05-01T09:00:00Z"]
          ],
          ["until=yesterday", ["until: must be an RFC 3339 date-time with an offset, such as 2026-05-01T09:00:00Z"]],
          ["page=2", ["page: is not a known query parameter"]],
          ["limit=1&limit=2", ["limit: must be given once"]],
          // Every problem at once: an unknown or repeated parameter does not hide the others'.
          [
            "limit=0&page=2&to=alice",
            [
              "page: is not a known query parameter",
              "limit: must be a whole number from 1 to 100",
              "to: must be a valid email address"
            ]
          ],
          ["status=x&status=y&limit=0", ["status: must be given once", "limit: must be a whole number from 1 to 100"]]
        ]
        for (const [query, errors] of cases) {
          const answer = await call("GET", `/emails?${query}`)
          assert.strictEqual(answer.status, 400, query)
          assert.deepStrictEqual(answer.body, { errors }, query)
        }
      })

      it("401 {message} without a key; 405 for a method the path does not take", async () => {
        expectJson(await call("GET", "/emails", { key: null }), 401, {
          message: "missing, invalid or revoked credential"
        })
        const wrong = await call("DELETE", "/emails")
        assert.strictEqual(wrong.status, 405)
        assert.strictEqual(wrong.headers.get("allow"), "POST, GET")
      })
    })

    describe("suppressions", () => {
      it("POST 201 adds, 200 answers the entry kept; a send to it alone is then 422 and sends nothing", async () => {
        const added = await call("POST", "/suppressions", { body: { email: "Eve@Example.com" } })
        assert.strictEqual(added.status, 201, JSON.stringify(added.body))
        const entry = added.body as Record<string, unknown>
        assert.match(String(entry.created_at), instant)
        assert.deepStrictEqual(
          { ...entry, created_at: "" },
          { email: "Eve@example.com", reason: "manual", created_at: "", message_id: null, detail: null }
        )
        expectJson(
          await call("POST", "/suppressions", { body: { email: "Eve@example.com", reason: "complained" } }),
          200,
          entry
        )
        const sent = world.provider.sent.length
        expectJson(await call("POST", "/emails", { body: { ...message, to: ["Eve@EXAMPLE.com"] } }), 422, {
          error: "every recipient is on this organization's suppression list, nothing was sent: Eve@EXAMPLE.com"
        })
        assert.strictEqual(world.provider.sent.length, sent, "nothing reached the provider")
        const imported = await call("POST", "/suppressions", {
          body: { email: "old@example.com", reason: "bounced", detail: "imported from SES" }
        })
        assert.strictEqual(imported.status, 201)
        assert.include(imported.body, { reason: "bounced", detail: "imported from SES" })
      })

      it("POST 400 {error} naming the field; 415; 401 {message}; 405", async () => {
        for (const [body, error] of [
          [{ email: "eve" }, "email: must be a valid email address"],
          [{}, "email: is required"],
          [{ email: "eve@example.com", reason: "spam" }, "reason: must be one of bounced, complained, manual"],
          [{ email: "eve@example.com", note: "x" }, "note: is not a known field"]
        ] as const) {
          expectJson(await call("POST", "/suppressions", { body }), 400, { error })
        }
        const text = await fetch(`${server.url}/suppressions`, {
          method: "POST",
          headers: { "x-api-key": keys.acme, "content-type": "text/plain" },
          body: "eve@example.com"
        })
        assert.strictEqual(text.status, 415)
        expectJson(await call("POST", "/suppressions", { key: null, body: { email: "a@example.com" } }), 401, {
          message: "missing, invalid or revoked credential"
        })
        const wrong = await call("PUT", "/suppressions", { body: { email: "a@example.com" } })
        assert.strictEqual(wrong.status, 405)
        assert.strictEqual(wrong.headers.get("allow"), "GET, POST")
      })

      it("GET pages newest first, filters by reason, and shows each organisation its own list", async () => {
        for (const email of ["p1@example.com", "p2@example.com", "p3@example.com"]) {
          await call("POST", "/suppressions", { key: keys.globex, body: { email } })
        }
        // Added in the order of their addresses: newest first whether or not two share a millisecond.
        await call("POST", "/suppressions", { key: keys.globex, body: { email: "p4@example.com", reason: "bounced" } })
        const first = (await call("GET", "/suppressions?limit=3", { key: keys.globex })).body as Page
        assert.deepStrictEqual(
          first.data.map((s) => s.email),
          ["p4@example.com", "p3@example.com", "p2@example.com"]
        )
        const rest = (await call("GET", `/suppressions?limit=3&cursor=${first.next_cursor}`, { key: keys.globex }))
          .body as Page
        assert.deepStrictEqual(
          rest.data.map((s) => s.email),
          ["p1@example.com"]
        )
        assert.isNull(rest.next_cursor)
        const acme = ((await call("GET", "/suppressions?limit=100")).body as Page).data.map((s) => s.email)
        assert.notInclude(acme, "p1@example.com")
        const bounced = (await call("GET", "/suppressions?reason=bounced", { key: keys.globex })).body as Page
        assert.deepStrictEqual(
          bounced.data.map((s) => s.email),
          ["p4@example.com"]
        )
        expectJson(await call("GET", "/suppressions?limit=0&reason=x"), 400, {
          error: "limit: must be a whole number from 1 to 100; reason: must be one of bounced, complained, manual"
        })
        expectJson(await call("GET", "/suppressions?email=a"), 400, { error: "email: is not a known query parameter" })
        expectJson(await call("GET", "/suppressions?email=a&limit=0"), 400, {
          error: "email: is not a known query parameter; limit: must be a whole number from 1 to 100"
        })
        expectJson(await call("GET", "/suppressions", { key: null }), 401, {
          message: "missing, invalid or revoked credential"
        })
      })

      it("DELETE by the percent-encoded address: 200, then 404; another organisation's is a 404", async () => {
        const email = "o'brien+tag/x@example.com"
        assert.strictEqual((await call("POST", "/suppressions", { body: { email } })).status, 201)
        const path = `/suppressions/${encodeURIComponent(email)}`
        expectJson(await call("DELETE", path, { key: keys.globex }), 404, {
          error: `${email} is not on the suppression list`
        })
        const listed = ((await call("GET", "/suppressions?limit=100")).body as Page).data.map((s) => s.email)
        assert.include(listed, email, "still on acme's list")
        expectJson(await call("DELETE", path), 200, { deleted: true, email })
        expectJson(await call("DELETE", path), 404, { error: `${email} is not on the suppression list` })
        expectJson(await call("DELETE", "/suppressions/Eve%40EXAMPLE.COM"), 200, {
          deleted: true,
          email: "Eve@example.com"
        })
      })

      it("DELETE 400 {error} for what is not an address; 401 {message}; 405", async () => {
        expectJson(await call("DELETE", "/suppressions/eve"), 400, { error: "email: must be a valid email address" })
        expectJson(await call("DELETE", "/suppressions/%E0%A4%A"), 400, {
          error: "email: is not valid percent-encoding"
        })
        expectJson(await call("DELETE", "/suppressions/eve%40example.com", { key: null }), 401, {
          message: "missing, invalid or revoked credential"
        })
        const wrong = await call("GET", "/suppressions/eve%40example.com")
        expectJson(wrong, 405, { error: "use DELETE for /suppressions/eve%40example.com" })
        assert.strictEqual(wrong.headers.get("allow"), "DELETE")
      })
    })
  })
}
