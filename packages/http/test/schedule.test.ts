// Sending later and sending many on the wire: POST /emails with scheduled_at (202), PATCH /emails/{id},
// POST /emails/{id}/cancel and POST /emails/batch: each body and status, every bad input's 4xx in the
// spec's shapes with nothing recorded, and one organisation never reaching another's messages.
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { expectJson, jsonCaller, keys, makeWorld, message, type Running, transports, type World } from "./world.js"

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
const hourAhead = () => new Date(Date.now() + 3_600_000)

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
    const schedule = async (overrides: Record<string, unknown> = {}, key = keys.acme) => {
      const answer = await call("POST", "/emails", {
        key,
        body: { ...message, scheduled_at: hourAhead(), ...overrides }
      })
      assert.strictEqual(answer.status, 202, JSON.stringify(answer.body))
      return (answer.body as { message_id: string }).message_id
    }
    const recorded = async () =>
      ((await call("GET", "/emails?limit=100")).body as { data: Array<{ id: string; status: string }> }).data

    it("POST /emails with scheduled_at: 202 {message_id, status, scheduled_at} in UTC; the record waits", async () => {
      const answer = await call("POST", "/emails", {
        body: { ...message, scheduled_at: "2099-01-01T10:00:00+02:00" }
      })
      expectJson(answer, 400, { errors: ["scheduled_at: must be at most 30 days in the future"] })
      const when = hourAhead()
      const local = `${new Date(when.getTime() + 2 * 3_600_000).toISOString().slice(0, 19)}+02:00`
      const scheduled = await call("POST", "/emails", { body: { ...message, scheduled_at: local } })
      const id = (scheduled.body as { message_id: string }).message_id
      assert.match(id, uuid)
      expectJson(scheduled, 202, {
        message_id: id,
        status: "scheduled",
        scheduled_at: `${when.toISOString().slice(0, 19)}.000Z`
      })
      const record = (await call("GET", `/emails/${id}`)).body as { status: string; scheduled_at: string }
      assert.strictEqual(record.status, "scheduled")
      assert.strictEqual(record.scheduled_at, `${when.toISOString().slice(0, 19)}.000Z`)
      assert.strictEqual(world.provider.sent.filter((s) => s.messageId === id).length, 0)
    })

    it("bad scheduled_at: 400 {errors} naming it, and nothing recorded", async () => {
      const before = (await recorded()).length
      for (const [when, error] of [
        [new Date(Date.now() - 60_000).toISOString(), "scheduled_at: must be at least 1 second in the future"],
        [new Date(Date.now() + 31 * 86_400_000).toISOString(), "scheduled_at: must be at most 30 days in the future"],
        ["tomorrow", "scheduled_at: must be an RFC 3339 date-time with an offset, such as 2026-05-01T09:00:00Z"],
        [
          "2026-05-01T09:00:00",
          "scheduled_at: must be an RFC 3339 date-time with an offset, such as 2026-05-01T09:00:00Z"
        ]
      ] as const) {
        expectJson(await call("POST", "/emails", { body: { ...message, scheduled_at: when } }), 400, {
          errors: [error]
        })
      }
      assert.strictEqual((await recorded()).length, before)
    })

    it("PATCH /emails/{id} moves it; 400 {errors} for a bad time; 404 for another's or none; 409 once sent", async () => {
      const id = await schedule()
      const later = new Date(Date.now() + 2 * 3_600_000)
      expectJson(await call("PATCH", `/emails/${id}`, { body: { scheduled_at: later.toISOString() } }), 200, {
        message_id: id,
        status: "scheduled",
        scheduled_at: later.toISOString()
      })
      expectJson(await call("PATCH", `/emails/${id}`, { body: { scheduled_at: "soon" } }), 400, {
        errors: ["scheduled_at: must be an RFC 3339 date-time with an offset, such as 2026-05-01T09:00:00Z"]
      })
      expectJson(await call("PATCH", `/emails/${id}`, { body: {} }), 400, { errors: ["scheduled_at: is required"] })
      expectJson(await call("PATCH", `/emails/${id}`, { body: { scheduled_at: later, to: [] } }), 400, {
        errors: ["to: is not a known field"]
      })
      const moved = { scheduled_at: later.toISOString() }
      expectJson(await call("PATCH", `/emails/${id}`, { key: keys.globex, body: moved }), 404, {
        error: `no email with id ${id}`
      })
      const sent = (await call("POST", "/emails", { body: message })).body as { message_id: string }
      const late = await call("PATCH", `/emails/${sent.message_id}`, { body: moved })
      assert.strictEqual(late.status, 409)
      assert.match(
        (late.body as { error: string }).error,
        /^the message has already started to send \(status (sent|delivered)\); it can no longer be rescheduled$/
      )
      expectJson(await call("PATCH", `/emails/${id}`, { key: null, body: moved }), 401, {
        message: "missing, invalid or revoked credential"
      })
    })

    it("POST /emails/{id}/cancel: 200, again 200; 404 for another's, an unknown or a malformed id; 409 once sent", async () => {
      const id = await schedule()
      expectJson(await call("POST", `/emails/${id}/cancel`, { key: keys.globex }), 404, {
        error: `no email with id ${id}`
      })
      expectJson(await call("POST", `/emails/${id}/cancel`), 200, { message_id: id, status: "cancelled" })
      expectJson(await call("POST", `/emails/${id}/cancel`), 200, { message_id: id, status: "cancelled" })
      assert.strictEqual(((await call("GET", `/emails/${id}`)).body as { status: string }).status, "cancelled")
      expectJson(await call("POST", "/emails/0190c3b2-0000-7000-8000-000000000000/cancel"), 404, {
        error: "no email with id 0190c3b2-0000-7000-8000-000000000000"
      })
      expectJson(await call("POST", "/emails/not-an-id/cancel"), 404, { error: "no email with this id" })
      expectJson(await call("PATCH", `/emails/${id}`, { body: { scheduled_at: hourAhead() } }), 409, {
        error: "the message is cancelled; it can no longer be rescheduled"
      })
      const sent = (await call("POST", "/emails", { body: message })).body as { message_id: string }
      const late = await call("POST", `/emails/${sent.message_id}/cancel`)
      assert.strictEqual(late.status, 409)
      assert.match(
        (late.body as { error: string }).error,
        /^the message has already started to send \(status (sent|delivered)\); it can no longer be cancelled$/
      )
      assert.strictEqual((await call("GET", `/emails/${id}/cancel`)).status, 405)
    })

    it("POST /emails/batch: 100 with 3 invalid: 97 sent, the 3 by index naming their fields; a retry sends nothing", async () => {
      const batch = Array.from({ length: 100 }, (_, i) => ({ ...message, subject: `Batch ${transport} ${i}` }))
      batch[7] = { ...message, to: ["not-an-address"] }
      batch[42] = { ...message, subject: "" }
      batch[99] = { ...message, from: "billing@globex.example" }
      const headers = { "idempotency-key": `batch-${transport.replace(/\W/g, "")}` }
      const sentBefore = world.provider.sent.length
      const first = await call("POST", "/emails/batch", { body: batch, headers })
      assert.strictEqual(first.status, 200)
      const body = first.body as {
        data: Array<{ index: number; message_id: string; status: string }>
        errors: Array<{ index: number; errors: Array<string> }>
      }
      assert.strictEqual(body.data.length, 97)
      assert.deepStrictEqual(
        body.data.map((d) => d.index),
        Array.from({ length: 100 }, (_, i) => i).filter((i) => ![7, 42, 99].includes(i))
      )
      assert.isTrue(body.data.every((d) => uuid.test(d.message_id) && d.status === "sent"))
      assert.deepStrictEqual(body.errors, [
        { index: 7, errors: ["to[0]: must be a valid email address"] },
        { index: 42, errors: ["subject: must not be empty"] },
        {
          index: 99,
          errors: [
            "from: billing@globex.example is not on a verified domain of organization org_acme (its verified domains are acme.example, acme.mailroom.test, and their subdomains); nothing was sent"
          ]
        }
      ])
      assert.strictEqual(world.provider.sent.length, sentBefore + 97)
      const again = await call("POST", "/emails/batch", { body: batch, headers })
      expectJson(again, 200, body)
      assert.strictEqual(again.headers.get("idempotent-replayed"), "true")
      assert.strictEqual(world.provider.sent.length, sentBefore + 97, "nothing sent twice")
      expectJson(await call("POST", "/emails/batch", { body: batch.slice(1), headers }), 409, {
        error: "this Idempotency-Key was already used with another request"
      })
    })

    it("POST /emails/batch: 400 with the same body when none was accepted, {errors} when it is no batch", async () => {
      const before = (await recorded()).length
      expectJson(await call("POST", "/emails/batch", { body: [{ ...message, to: [] }] }), 400, {
        data: [],
        errors: [{ index: 0, errors: ["to: must contain at least 1 recipient"] }]
      })
      for (const body of [message, [], Array.from({ length: 101 }, () => message), "x", { 0: message }]) {
        expectJson(await call("POST", "/emails/batch", { body }), 400, {
          errors: ["request: must be an array of 1 to 100 send requests"]
        })
      }
      expectJson(await call("POST", "/emails/batch?dry=1", { body: [message] }), 400, {
        errors: ["dry: is not a known query parameter"]
      })
      assert.strictEqual((await recorded()).length, before, "nothing recorded")
      expectJson(await call("POST", "/emails/batch", { key: null, body: [message] }), 401, {
        message: "missing, invalid or revoked credential"
      })
    })

    it("a batch may schedule: each scheduled item answered with its time", async () => {
      const when = hourAhead().toISOString()
      const answer = await call("POST", "/emails/batch", { body: [{ ...message, scheduled_at: when }, message] })
      const body = answer.body as { data: Array<Record<string, unknown>> }
      assert.strictEqual(answer.status, 200)
      assert.deepStrictEqual(
        body.data.map(({ message_id: _, ...rest }) => rest),
        [
          { index: 0, status: "scheduled", scheduled_at: when },
          { index: 1, status: "sent" }
        ]
      )
    })
  })
}
