// Resend webhooks in: each event type as Svix would post it (signed here with the `standardwebhooks`
// reference implementation, not with mailroom's code), then signatures, replays and bodies refused.
import { randomBytes } from "node:crypto"
import { readFile } from "node:fs/promises"
import { assert, describe, it } from "@effect/vitest"
import { MailEvent } from "@mailroom/core"
import { essentials, probeEventSource } from "@mailroom/core/testing"
import { Effect, Exit, Redacted } from "effect"
import { TestClock } from "effect/testing"
import { Webhook } from "standardwebhooks"
import { ResendEventSource } from "../src/index.js"

const secret = `whsec_${randomBytes(24).toString("base64")}`
const source = Effect.runSync(ResendEventSource.make({ secret: Redacted.make(secret) }))

const fixture = async (name: string): Promise<Record<string, unknown>> =>
  JSON.parse(await readFile(new URL(`./fixtures/${name}.json`, import.meta.url), "utf8")) as Record<string, unknown>

/** The headers Svix sends with `body`, signed with `key` at `at`. */
const signed = (body: string, options: { id?: string; at?: Date; key?: string } = {}) => {
  const id = options.id ?? `msg_${randomBytes(12).toString("hex")}`
  const at = options.at ?? new Date()
  return {
    "svix-id": id,
    "svix-timestamp": String(Math.floor(at.getTime() / 1000)),
    "svix-signature": new Webhook(options.key ?? secret).sign(id, at, body)
  }
}

// Headers first, then the body, as @mailroom/http hands a request over.
const { receive } = probeEventSource(source)

/** The events of a body posted as Svix posts it. */
const post = (payload: unknown, options?: Parameters<typeof signed>[1]) => {
  const body = typeof payload === "string" ? payload : JSON.stringify(payload)
  return receive(body, signed(body, options))
}

/** Why a request is refused: the reason's tag and message. */
const refusal = (effect: ReturnType<typeof receive>) =>
  Effect.map(Effect.flip(effect), (error) => ({ reason: error.reason._tag, message: error.message }))

const at = "2026-11-22T23:41:12.126Z"
const emailId = "56761188-7520-42d8-8898-ff6fc54ce618"

describe("each event type Resend documents, signed as Svix sends it", () => {
  const plain: ReadonlyArray<readonly [string, MailEvent.Type]> = [
    ["sent", "sent"],
    ["delivered", "delivered"],
    ["delivery-delayed", "deferred"],
    ["complained", "complained"],
    ["opened", "opened"],
    ["failed", "failed"],
    ["suppressed", "rejected"]
  ]
  for (const [name, type] of plain) {
    it.live(`email.${name.replace("-", "_")} -> ${type}`, () =>
      Effect.gen(function* () {
        const payload = yield* Effect.promise(() => fixture(name))
        const events = yield* post(payload)
        assert.deepStrictEqual(essentials(events), [
          { type, recipient: "delivered@resend.dev", message_id: emailId, occurred_at: at }
        ])
        assert.strictEqual(events[0]?.provider, "resend")
        assert.deepStrictEqual(events[0]?.raw, payload)
        // The example's tags carry no mailroom-org: nothing to route to.
        assert.isUndefined(events[0]?.organization_id)
      })
    )
  }

  it.live("email.bounced -> bounced, Permanent as hard, the subType as the code", () =>
    Effect.gen(function* () {
      const events = yield* post(yield* Effect.promise(() => fixture("bounced")))
      assert.deepStrictEqual(essentials(events), [
        {
          type: "bounced",
          recipient: "delivered@resend.dev",
          message_id: emailId,
          occurred_at: at,
          bounce: {
            kind: "hard",
            code: "Suppressed",
            diagnostic:
              "The recipient's email address is on the suppression list because it has a recent history of producing hard bounces."
          }
        }
      ])
    })
  )

  it.live("email.bounced with diagnostic codes: each recipient its own, and its enhanced status code", () =>
    Effect.gen(function* () {
      const payload = yield* Effect.promise(() => fixture("bounced"))
      const data = payload.data as Record<string, unknown>
      const events = yield* post({
        ...payload,
        data: {
          ...data,
          to: ["a@example.com", "b@example.com"],
          bounce: {
            type: "Transient",
            subType: "MailboxFull",
            message: "full",
            diagnosticCode: ["smtp; 552 5.2.2 mailbox full", "smtp; 452 4.2.2 over quota"]
          }
        }
      })
      assert.deepStrictEqual(
        events.map((e) => [e.recipient, e.bounce]),
        [
          ["a@example.com", { kind: "soft", code: "5.2.2", diagnostic: "smtp; 552 5.2.2 mailbox full" }],
          ["b@example.com", { kind: "soft", code: "4.2.2", diagnostic: "smtp; 452 4.2.2 over quota" }]
        ]
      )
    })
  )

  it.live("email.clicked -> clicked with the link, at the click's time", () =>
    Effect.gen(function* () {
      const events = yield* post(yield* Effect.promise(() => fixture("clicked")))
      assert.deepStrictEqual(essentials(events), [
        {
          type: "clicked",
          recipient: "delivered@resend.dev",
          message_id: emailId,
          occurred_at: "2026-11-24T05:00:57.163Z",
          click: { url: "https://resend.com" }
        }
      ])
    })
  )

  for (const type of ["email.scheduled", "email.received", "domain.updated", "contact.created"]) {
    it.live(`${type} is acknowledged with no event`, () =>
      Effect.gen(function* () {
        const payload = yield* Effect.promise(() => fixture("scheduled"))
        assert.deepStrictEqual(yield* post({ ...payload, type }), [])
      })
    )
  }
})

describe("routing and ids", () => {
  const withTo = (payload: Record<string, unknown>, to: unknown, tags: unknown) => ({
    ...payload,
    data: { ...(payload.data as Record<string, unknown>), to, tags }
  })

  it.live("one event per recipient, each routed by the mailroom-org tag (as an object or a list, encoded or not)", () =>
    Effect.gen(function* () {
      const payload = yield* Effect.promise(() => fixture("delivered"))
      const events = yield* post(withTo(payload, ["a@example.com", "b@example.com"], { "mailroom-org": "org_acme" }))
      assert.deepStrictEqual(
        events.map((e) => [e.recipient, e.organization_id]),
        [
          ["a@example.com", "org_acme"],
          ["b@example.com", "org_acme"]
        ]
      )
      assert.notStrictEqual(events[0]?.id, events[1]?.id)
      const encoded = `b64_${Buffer.from("acme.example/eu").toString("base64url")}`
      const listed = yield* post(
        withTo(payload, ["a@example.com"], [{ name: MailEvent.organizationKey, value: encoded }])
      )
      assert.strictEqual(listed[0]?.organization_id, "acme.example/eu")
    })
  )

  it.live("an event names the message by mailroom's id from its tag, and keeps Resend's as provider_message_id", () =>
    Effect.gen(function* () {
      const payload = yield* Effect.promise(() => fixture("delivered"))
      const events = yield* post(
        withTo(payload, ["a@example.com"], {
          "mailroom-org": "org_acme",
          "mailroom-message": "01a2153a-c447-7194-b1e5-136fad1ba9d2"
        })
      )
      assert.strictEqual(events[0]?.message_id, "01a2153a-c447-7194-b1e5-136fad1ba9d2")
      assert.strictEqual(events[0]?.provider_message_id, emailId)
    })
  )

  it.live(
    "Svix's retry of a delivery (same svix-id, new time and signature) gets the same ids; another delivery others",
    () =>
      Effect.gen(function* () {
        const payload = JSON.stringify(yield* Effect.promise(() => fixture("opened")))
        const first = yield* post(payload, { id: "msg_first" })
        const retried = yield* post(payload, { id: "msg_first", at: new Date(Date.now() - 60_000) })
        const other = yield* post(payload, { id: "msg_second" })
        assert.strictEqual(retried[0]?.id, first[0]?.id)
        assert.notStrictEqual(other[0]?.id, first[0]?.id)
      })
  )
})

describe("requests that are not Resend's", () => {
  const body = JSON.stringify({ type: "email.delivered", created_at: at, data: { email_id: emailId, to: ["a@x.io"] } })

  it.live("a signature made with another secret", () =>
    Effect.gen(function* () {
      const other = `whsec_${randomBytes(24).toString("base64")}`
      const refused = yield* refusal(receive(body, signed(body, { key: other })))
      assert.deepStrictEqual(refused.reason, "Unauthenticated")
      assert.include(refused.message, "signature")
    })
  )

  it.live("a body changed after signing", () =>
    Effect.gen(function* () {
      const headers = signed(body)
      const refused = yield* refusal(receive(body.replace("a@x.io", "b@x.io"), headers))
      assert.strictEqual(refused.reason, "Unauthenticated")
    })
  )

  it.live("a missing svix header", () =>
    Effect.gen(function* () {
      for (const name of ["svix-id", "svix-timestamp", "svix-signature"]) {
        const headers: Record<string, string> = signed(body)
        delete headers[name]
        assert.strictEqual((yield* refusal(receive(body, headers))).reason, "Unauthenticated")
      }
      // Standard Webhooks' own header names are not Resend's.
      const standard = Object.fromEntries(
        Object.entries(signed(body)).map(([k, v]) => [k.replace("svix", "webhook"), v])
      )
      assert.strictEqual((yield* refusal(receive(body, standard))).reason, "Unauthenticated")
    })
  )

  it.live("a stale timestamp, and one from the future, beyond five minutes", () =>
    Effect.gen(function* () {
      const stale = yield* refusal(receive(body, signed(body, { at: new Date(Date.now() - 6 * 60_000) })))
      assert.strictEqual(stale.reason, "Unauthenticated")
      assert.include(stale.message, "svix-timestamp")
      const future = yield* refusal(receive(body, signed(body, { at: new Date(Date.now() + 6 * 60_000) })))
      assert.strictEqual(future.reason, "Unauthenticated")
      assert.lengthOf(yield* receive(body, signed(body, { at: new Date(Date.now() - 4 * 60_000) })), 1)
    })
  )

  it.effect("a request held past the tolerance is refused on the Clock (TestClock)", () =>
    Effect.gen(function* () {
      const headers = signed(body, { at: new Date(0) })
      assert.lengthOf(yield* receive(body, headers), 1)
      yield* TestClock.adjust("5 minutes")
      assert.lengthOf(yield* receive(body, headers), 1)
      yield* TestClock.adjust("1 second")
      assert.strictEqual((yield* refusal(receive(body, headers))).reason, "Unauthenticated")
    })
  )

  it.live("during a secret rotation, a header with several signatures passes when one verifies", () =>
    Effect.gen(function* () {
      const headers = signed(body)
      const other = new Webhook(`whsec_${randomBytes(24).toString("base64")}`).sign("x", new Date(), body)
      const both = { ...headers, "svix-signature": `${other} ${headers["svix-signature"]}` }
      assert.lengthOf(yield* receive(body, both), 1)
    })
  )
})

describe("bodies Resend never sends (signed, so they pass the signature)", () => {
  const cases: ReadonlyArray<readonly [string, unknown, string]> = [
    ["not JSON", "{not json", "not JSON"],
    ["no type", { created_at: at, data: {} }, "type"],
    ["a created_at that is no date", { type: "email.sent", created_at: "yesterday", data: {} }, "created_at"],
    ["no email_id", { type: "email.sent", created_at: at, data: { to: ["a@x.io"] } }, "data.email_id"],
    ["no recipient", { type: "email.sent", created_at: at, data: { email_id: emailId, to: [] } }, "data.to"],
    [
      "a click without its link",
      { type: "email.clicked", created_at: at, data: { email_id: emailId, to: ["a@x.io"] } },
      "data.click"
    ]
  ]
  for (const [what, payload, named] of cases) {
    it.live(`${what}: Malformed, naming ${named}`, () =>
      Effect.gen(function* () {
        const refused = yield* refusal(post(payload))
        assert.strictEqual(refused.reason, "Malformed")
        assert.include(refused.message, named)
      })
    )
  }
})

describe("ResendEventSource options", () => {
  const problem = (options: ResendEventSource.Options) =>
    Effect.map(Effect.flip(ResendEventSource.make(options)), (error) => error.message)

  it.effect(
    "a secret that is not whsec_, a tolerance of zero, a name that is no path segment: ConfigErrors naming each",
    () =>
      Effect.gen(function* () {
        const notWhsec = yield* problem({ secret: "re_not_a_signing_secret" })
        assert.include(notWhsec, '["secret"]')
        assert.notInclude(notWhsec, "re_not_a_signing_secret")
        assert.include(yield* problem({ secret, tolerance: 0 }), '["tolerance"]')
        assert.include(yield* problem({ secret, name: "Resend/Hooks" }), '["name"]')
        const made = yield* Effect.exit(ResendEventSource.make({ secret, name: "resend-eu", tolerance: "1 minute" }))
        assert.isTrue(Exit.isSuccess(made) && made.value.name === "resend-eu")
      })
  )
})
