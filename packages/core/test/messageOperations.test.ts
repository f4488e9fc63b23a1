// The operations on records and suppressions that the API and the facade share: one organisation's
// records only, pages newest first, every bad query field named, suppressions stamped by the Clock.
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { Mailer, MailroomError, Messages, type Wire } from "../src/index.js"
import { acme, globex, makeWorld, startingAt } from "./fixtures.js"

const request = (overrides: Record<string, unknown> = {}) => ({
  from: "billing@acme.example",
  to: ["alice@example.com"],
  subject: "Your invoice",
  body: { text: "See attached." },
  ...overrides
})

const send = (overrides: Record<string, unknown> = {}, principal = acme) =>
  Effect.flatMap(Mailer.Mailer, (mailer) =>
    mailer.send(principal, request(overrides) as never).pipe(Effect.map(({ response }) => response.message_id))
  )

const messages = Messages.Messages

/** The messages of the ValidationError the effect fails with. */
const refusal = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.flip(effect), (error) => {
    assert.isTrue(MailroomError.isValidationError(error), String(error))
    return (error as MailroomError.ValidationError).errors
  })

describe("Messages", () => {
  it.effect("get answers the caller's record, found by its id in either case, and nobody else's", () => {
    const world = makeWorld()
    return Effect.gen(function* () {
      const m = yield* messages
      const id = yield* send({ tags: [{ name: "kind", value: "invoice" }] })
      const detail = yield* m.get(acme, id)
      assert.strictEqual(detail.id, id)
      assert.deepStrictEqual(detail.tags, [{ name: "kind", value: "invoice" }])
      assert.deepStrictEqual(detail.events, [])
      assert.strictEqual((yield* m.get(acme, id.toUpperCase())).id, id)
      for (const [principal, asked] of [
        [globex, id],
        [acme, "0190c3b2-0000-7000-8000-000000000000"],
        [acme, "not-an-id"],
        [acme, `${id}x`]
      ] as const) {
        const error = yield* Effect.flip(m.get(principal, asked))
        assert.isTrue(MailroomError.isNotFound(error), `${principal.orgId} ${asked}`)
      }
    }).pipe(Effect.provide(world.layer))
  })

  it.effect("list pages newest first with a cursor, over the caller's records only", () => {
    const world = makeWorld()
    return Effect.gen(function* () {
      const m = yield* messages
      const ids: Array<string> = []
      for (let i = 0; i < 23; i++) ids.push(yield* send({ subject: `n${i}` }))
      yield* send({ from: "x@globex.example" }, globex)
      const first = yield* m.list(acme, {})
      assert.strictEqual(first.data.length, 20, "20 when the query does not say")
      assert.deepStrictEqual(
        first.data.map((r) => r.id),
        ids.slice(3).reverse()
      )
      assert.isString(first.next_cursor)
      const rest = yield* m.list(acme, { cursor: first.next_cursor ?? "", limit: "20" })
      assert.deepStrictEqual(
        rest.data.map((r) => r.id),
        ids.slice(0, 3).reverse()
      )
      assert.isNull(rest.next_cursor)
      const one = yield* m.list(acme, { limit: 1 })
      assert.deepStrictEqual(
        one.data.map((r) => r.id),
        [ids[22]]
      )
      const theirs = yield* m.list(globex, { limit: 100 })
      assert.strictEqual(theirs.data.length, 1)
      assert.strictEqual(theirs.data[0]?.organization_id, globex.orgId)
    }).pipe(Effect.provide(world.layer))
  })

  it.effect("list filters by status, recipient, tag and time, the instants read with their offsets", () => {
    const world = makeWorld()
    return Effect.gen(function* () {
      const m = yield* messages
      const early = yield* send({ to: ["Bob@Bücher.example"], tags: [{ name: "kind", value: "welcome" }] })
      yield* TestClock.setTime(Date.parse("2026-05-01T10:00:00Z"))
      const late = yield* send({ cc: ["carol@example.net"], tags: [{ name: "kind", value: "invoice" }] })
      yield* world.suppressions.add(
        acme.orgId,
        [{ email: "dan@example.com", reason: "manual" }],
        "2026-05-01T10:00:00Z"
      )
      const dropped = yield* send({ to: ["alice@example.com", "dan@example.com"] })
      const ids = (query: typeof Wire.ListEmailsQuery.Encoded) =>
        Effect.map(m.list(acme, query), (page) => page.data.map((r) => r.id))
      assert.deepStrictEqual(yield* ids({ to: "bob@xn--bcher-kva.EXAMPLE" }), [], "the local part as given")
      assert.deepStrictEqual(yield* ids({ to: "Bob@xn--bcher-kva.EXAMPLE" }), [early])
      assert.deepStrictEqual(yield* ids({ to: "carol@example.net" }), [late], "cc counts")
      assert.deepStrictEqual(yield* ids({ tag: "kind:welcome" }), [early])
      assert.deepStrictEqual(yield* ids({ tag: "kind:other" }), [])
      assert.deepStrictEqual(yield* ids({ status: "sent" }), [dropped, late, early])
      assert.deepStrictEqual(yield* ids({ status: "suppressed" }), [])
      // 09:00 in Paris (+02:00) is 07:00Z, before both; 12:00+02:00 is 10:00Z, the second's time.
      assert.deepStrictEqual(yield* ids({ since: "2026-05-01T09:00:00+02:00" }), [dropped, late, early])
      assert.deepStrictEqual(yield* ids({ since: "2026-05-01T12:00:00+02:00" }), [dropped, late])
      assert.deepStrictEqual(yield* ids({ until: "2026-05-01T12:00:00+02:00" }), [early], "until is exclusive")
      assert.deepStrictEqual(yield* ids({ until: "2026-05-01t10:00:00.000000001z" }), [dropped, late, early])
      assert.deepStrictEqual(yield* ids({ since: "2026-05-01T10:00:00.0001Z" }), [], "rounded up to the millisecond")
      assert.deepStrictEqual(yield* ids({ since: "0000-01-01T00:00:00+23:59" }), [dropped, late, early])
      assert.deepStrictEqual(yield* ids({ until: "9999-12-31T23:59:59-23:59" }), [dropped, late, early])
    }).pipe(Effect.provide(world.layer), startingAt("2026-05-01T08:00:00Z"))
  })

  it.effect("each bad query field is refused by name, unknown ones too", () => {
    const world = makeWorld()
    return Effect.gen(function* () {
      const m = yield* messages
      const cases: ReadonlyArray<[Record<string, unknown>, string]> = [
        [{ limit: "0" }, "limit: must be a whole number from 1 to 100"],
        [{ limit: "101" }, "limit: must be a whole number from 1 to 100"],
        [{ limit: "1.5" }, "limit: must be a whole number from 1 to 100"],
        [{ limit: " 5" }, "limit: must be a whole number from 1 to 100"],
        [{ limit: 1.5 }, "limit: must be a whole number from 1 to 100"],
        [{ cursor: "not a cursor" }, "cursor: is not a cursor this API answered"],
        [{ cursor: "WyJ4Il0x" }, "cursor: is not a cursor this API answered"],
        [{ status: "lost" }, `status: must be one of ${["scheduled", "sending", "sent"].join(", ")}`],
        [{ to: "alice" }, "to: must be a valid email address"],
        [{ tag: "kind" }, "tag: must be name:value, each 1 to 256 ASCII letters, digits, _ or -"],
        [{ tag: "kind:a b" }, "tag: must be name:value, each 1 to 256 ASCII letters, digits, _ or -"],
        [{ since: "2026-05-01T09:00:00" }, "since: must be an RFC 3339 date-time with an offset"],
        [{ since: "2026-02-30T09:00:00Z" }, "since: must be an RFC 3339 date-time with an offset"],
        [{ until: "2026-05-01" }, "until: must be an RFC 3339 date-time with an offset"],
        [{ since: "2026-05-01T09:00:00 02:00" }, "since: has a space where its offset's + belongs"],
        [{ until: "2026-12-31T23:59:60Z" }, "until: must be an RFC 3339 date-time with an offset"],
        [{ page: "2" }, "page: is not a known field"]
      ]
      for (const [query, message] of cases) {
        const errors = yield* refusal(m.list(acme, query as never))
        assert.strictEqual(errors.length, 1, JSON.stringify(errors))
        assert.isTrue(errors[0]?.startsWith(message), `${JSON.stringify(query)}: ${errors[0]}`)
      }
      const all = yield* refusal(m.list(acme, { limit: "0", status: "x" as never, to: "y" }))
      assert.deepStrictEqual(
        all.map((e) => e.split(":")[0]),
        ["limit", "status", "to"]
      )
      // A cursor of the suppression list names no page of records.
      yield* world.suppressions.add(acme.orgId, [{ email: "a@example.com", reason: "manual" }], "2026-01-01T00:00:00Z")
      yield* world.suppressions.add(acme.orgId, [{ email: "b@example.com", reason: "manual" }], "2026-01-01T00:00:00Z")
      const cursor = (yield* m.listSuppressions(acme, { limit: 1 })).next_cursor ?? ""
      assert.deepStrictEqual(yield* refusal(m.list(acme, { cursor })), ["cursor: is not a cursor this API answered"])
    }).pipe(Effect.provide(world.layer))
  })

  it.effect("suppress stamps the Clock's time, says whether it added, and keeps the first entry", () => {
    const world = makeWorld()
    return Effect.gen(function* () {
      const m = yield* messages
      const added = yield* m.suppress(acme, { email: "Bob@Example.COM" })
      assert.deepStrictEqual(added, {
        created: true,
        suppression: {
          email: "Bob@example.com",
          reason: "manual",
          created_at: "2026-05-01T08:00:00.000Z",
          message_id: null,
          detail: null
        }
      })
      yield* TestClock.adjust("1 hour")
      const again = yield* m.suppress(acme, { email: "Bob@example.com", reason: "complained", detail: "again" })
      assert.deepStrictEqual(again, { created: false, suppression: added.suppression })
      const imported = yield* m.suppress(acme, { email: "c@example.com", reason: "bounced", detail: "from SES" })
      assert.deepStrictEqual(imported.suppression, {
        email: "c@example.com",
        reason: "bounced",
        created_at: "2026-05-01T09:00:00.000Z",
        message_id: null,
        detail: "from SES"
      })
      assert.deepStrictEqual(yield* refusal(m.suppress(acme, { email: "bob" })), [
        "email: must be a valid email address"
      ])
      assert.deepStrictEqual(yield* refusal(m.suppress(acme, { email: "a@example.com", reason: "spam" as never })), [
        "reason: must be one of bounced, complained, manual"
      ])
      assert.deepStrictEqual(yield* refusal(m.suppress(acme, { email: "a@example.com", detail: "a\nb" })), [
        "detail: must be at most 500 characters, without control characters"
      ])
      assert.deepStrictEqual(yield* refusal(m.suppress(acme, {} as never)), ["email: is required"])
      // Another organisation's list is its own.
      assert.isTrue((yield* m.suppress(globex, { email: "bob@example.com" })).created)
      assert.deepStrictEqual(
        (yield* m.listSuppressions(globex, {})).data.map((s) => s.email),
        ["bob@example.com"]
      )
    }).pipe(Effect.provide(world.layer), startingAt("2026-05-01T08:00:00Z"))
  })

  it.effect("a suppressed address is dropped from sends until it is removed, by its owner only", () => {
    const world = makeWorld()
    return Effect.gen(function* () {
      const m = yield* messages
      yield* m.suppress(acme, { email: "alice@example.com" })
      const refused = yield* Effect.flip(send())
      assert.strictEqual(
        (refused as { reason?: { _tag: string } }).reason?._tag,
        "RecipientSuppressed",
        "no recipient left"
      )
      const error = yield* Effect.flip(m.unsuppress(globex, "alice@example.com"))
      assert.isTrue(MailroomError.isNotFound(error), "not on globex's list")
      assert.deepStrictEqual(yield* m.unsuppress(acme, "alice@EXAMPLE.com"), {
        deleted: true,
        email: "alice@example.com"
      })
      assert.isString(yield* send())
      assert.isTrue(MailroomError.isNotFound(yield* Effect.flip(m.unsuppress(acme, "alice@example.com"))))
      assert.deepStrictEqual(yield* refusal(m.unsuppress(acme, "alice")), ["email: must be a valid email address"])
    }).pipe(Effect.provide(world.layer))
  })

  it.effect("listSuppressions pages newest first and filters by reason", () => {
    const world = makeWorld()
    return Effect.gen(function* () {
      const m = yield* messages
      for (const [i, reason] of (["manual", "bounced", "manual", "complained"] as const).entries()) {
        yield* TestClock.setTime(Date.parse("2026-05-01T08:00:00Z") + i * 1000)
        yield* m.suppress(acme, { email: `u${i}@example.com`, reason })
      }
      const first = yield* m.listSuppressions(acme, { limit: 3 })
      assert.deepStrictEqual(
        first.data.map((s) => s.email),
        ["u3@example.com", "u2@example.com", "u1@example.com"]
      )
      const rest = yield* m.listSuppressions(acme, { limit: 3, cursor: first.next_cursor ?? "" })
      assert.deepStrictEqual(
        rest.data.map((s) => s.email),
        ["u0@example.com"]
      )
      assert.isNull(rest.next_cursor)
      assert.deepStrictEqual(
        (yield* m.listSuppressions(acme, { reason: "manual" })).data.map((s) => s.email),
        ["u2@example.com", "u0@example.com"]
      )
      assert.deepStrictEqual(yield* refusal(m.listSuppressions(acme, { limit: "500", reason: "x" as never })), [
        "limit: must be a whole number from 1 to 100",
        "reason: must be one of bounced, complained, manual"
      ])
      assert.deepStrictEqual((yield* m.listSuppressions(globex, {})).data, [])
    }).pipe(Effect.provide(world.layer), startingAt("2026-05-01T08:00:00Z"))
  })
})
