// Postmark webhooks in: each documented example payload translated by a test, and the credentials
// (Basic auth, a custom header) refused unless they match.
import { createHash } from "node:crypto"
import { readFile } from "node:fs/promises"
import { MailEvent } from "@mailroom/core"
import { essentials, expectConfigError, probeEventSource } from "@mailroom/core/testing"
import { Effect, Redacted } from "effect"
import type { Models } from "postmark"
import { assert, describe, it } from "vitest"
import { PostmarkEventSource } from "../src/index.js"

const fixture = async <A = Record<string, unknown>>(name: string): Promise<A> =>
  JSON.parse(await readFile(new URL(`./fixtures/${name}.json`, import.meta.url), "utf8")) as A

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`
const credentials = { authorization: basic("postmark", "hook-password-123") }
const make = (options: PostmarkEventSource.Options) => Effect.runSync(PostmarkEventSource.make(options))
const source = make({ basicAuth: { username: "postmark", password: "hook-password-123" } })

const probe = probeEventSource(source, credentials)
const events = (body: unknown, target = source, headers: Record<string, string> = credentials) =>
  (target === source ? probe : probeEventSource(target)).events(body, headers)
const refusal = (body: unknown, target = source, headers: Record<string, string> = credentials) =>
  (target === source ? probe : probeEventSource(target)).refusal(body, headers)
const summary = essentials

describe("Postmark's documented webhook payloads", () => {
  it("Bounce (HardBounce) -> bounced, kind hard", async () => {
    const payload = await fixture<Models.BounceWebhook>("bounce")
    const translated = await events(payload)
    assert.deepStrictEqual(summary(translated), [
      {
        type: "bounced",
        recipient: "john@example.com",
        message_id: "883953f4-6105-42a2-a16a-77a8eac79483",
        occurred_at: "2019-11-05T16:33:54.907Z",
        bounce: { kind: "hard", code: "HardBounce", diagnostic: "Test bounce details" }
      }
    ])
    assert.deepStrictEqual(translated[0]?.raw, payload)
    assert.strictEqual(translated[0]?.provider, "postmark")
    // The example's Metadata has no mailroom-org: nothing to route to.
    assert.isUndefined(translated[0]?.organization_id)
  })

  it("a bounce from the bounce-testing domain names the simulator address the caller sent to", async () => {
    const payload = await fixture<Models.BounceWebhook>("bounce")
    const translated = await events({ ...payload, Email: "bounced+alice@bounce-testing.postmarkapp.com" })
    assert.strictEqual(translated[0]?.recipient, "bounced+alice@simulator.mailroom.test")
    const own = await events({ ...payload, Email: "HardBounce@bounce-testing.postmarkapp.com" })
    assert.strictEqual(own[0]?.recipient, "HardBounce@bounce-testing.postmarkapp.com")
  })

  it("Delivery -> delivered", async () => {
    const payload = await fixture<Models.DeliveryWebhook>("delivery")
    assert.deepStrictEqual(summary(await events(payload)), [
      {
        type: "delivered",
        recipient: "john@example.com",
        message_id: "883953f4-6105-42a2-a16a-77a8eac79483",
        occurred_at: "2019-11-05T16:33:54.907Z"
      }
    ])
  })

  it("Open -> opened", async () => {
    const payload = await fixture<Models.OpenWebhook>("open")
    assert.deepStrictEqual(summary(await events(payload)), [
      {
        type: "opened",
        recipient: "john@example.com",
        message_id: "883953f4-6105-42a2-a16a-77a8eac79483",
        occurred_at: "2019-11-05T16:33:54.907Z"
      }
    ])
  })

  it("Click -> clicked, with the original link", async () => {
    const payload = await fixture<Models.ClickWebhook>("click")
    assert.deepStrictEqual(summary(await events(payload)), [
      {
        type: "clicked",
        recipient: "john@example.com",
        message_id: "00000000-0000-0000-0000-000000000000",
        occurred_at: "2017-10-25T15:21:11.906Z",
        click: { url: "https://example.com" }
      }
    ])
  })

  it("SpamComplaint -> complained, the recipient read from Email", async () => {
    const payload = await fixture<Models.SpamComplaintWebhook>("spam-complaint")
    assert.deepStrictEqual(summary(await events(payload)), [
      {
        type: "complained",
        recipient: "john@example.com",
        message_id: "00000000-0000-0000-0000-000000000000",
        occurred_at: "2019-11-05T16:33:54.907Z"
      }
    ])
  })

  it("SubscriptionChange: a suppression after a hard bounce is no news; an unsubscribe is unsubscribed", async () => {
    const payload = await fixture<Models.SubscriptionChangeWebhook>("subscription-change")
    assert.deepStrictEqual(await events(payload), [])
    const unsubscribe = { ...payload, SuppressionReason: "ManualSuppression" }
    assert.deepStrictEqual(summary(await events(unsubscribe)), [
      {
        type: "unsubscribed",
        recipient: "bounced-address@wildbit.com",
        message_id: "883953f4-6105-42a2-a16a-77a8eac79483",
        occurred_at: "2020-02-01T10:53:34.416Z"
      }
    ])
    // A manual suppression without a message, and a reactivation: nothing.
    assert.deepStrictEqual(await events({ ...unsubscribe, MessageID: null }), [])
    assert.deepStrictEqual(await events({ ...unsubscribe, SuppressSending: false }), [])
  })

  it("the send's mailroom-org metadata routes the event; a redelivery keeps the id", async () => {
    const payload = await fixture<Models.BounceWebhook>("bounce")
    payload.Metadata[MailEvent.organizationKey] = "org_acme"
    const [first] = await events(payload)
    const [again] = await events(payload)
    assert.strictEqual(first?.organization_id, "org_acme")
    assert.strictEqual(first?.id, again?.id)
    const soft = await events({ ...payload, ID: 43, Type: "SoftBounce", TypeCode: 4096 })
    assert.notStrictEqual(soft[0]?.id, first?.id)
    assert.strictEqual(soft[0]?.bounce?.kind, "soft")
  })

  it("the send's mailroom-message metadata names the message; Postmark's MessageID is provider_message_id", async () => {
    const own = "0195f0c8-7d3e-7c41-9d2b-5b1e2f3a4c5d"
    for (const name of ["bounce", "delivery", "open", "click", "spam-complaint"]) {
      const payload = await fixture<{ MessageID: string; Metadata?: Record<string, string> }>(name)
      const withId = { ...payload, Metadata: { ...payload.Metadata, [MailEvent.messageKey]: own } }
      const [event] = await events(withId)
      assert.strictEqual(event?.message_id, own, name)
      assert.strictEqual(event?.provider_message_id, payload.MessageID, name)
      // Without it (a message sent before mailroom named its messages), Postmark's id stays the id.
      const [older] = await events(payload)
      assert.strictEqual(older?.message_id, payload.MessageID, name)
      assert.isUndefined(older?.provider_message_id, name)
    }
  })

  it("each bounce Type has its meaning; the ones that say nothing about delivery give no event", async () => {
    const payload = await fixture<Models.BounceWebhook>("bounce")
    const meaning = async (type: string) => (await events({ ...payload, Type: type }))[0]?.type ?? "none"
    assert.deepStrictEqual(
      await Promise.all(
        ["Transient", "DnsError", "BadEmailAddress", "ManuallyDeactivated", "Blocked", "DMARCPolicy"].map(meaning)
      ),
      ["deferred", "deferred", "rejected", "rejected", "rejected", "rejected"]
    )
    assert.deepStrictEqual(
      await Promise.all(
        ["SpamNotification", "SMTPApiError", "AutoResponder", "Subscribe", "InboundError"].map(meaning)
      ),
      ["complained", "failed", "none", "none", "none"]
    )
  })

  it("a record type mailroom does not report (inbound) is accepted with no events; a broken one is a 400", async () => {
    assert.deepStrictEqual(await events({ RecordType: "Inbound", MessageID: "x" }), [])
    for (const body of ["not json", "[1]", { MessageID: "x" }, { RecordType: "Delivery", MessageID: "x" }]) {
      assert.strictEqual((await refusal(body)).reason._tag, "Malformed", JSON.stringify(body))
    }
    const click = await fixture<Record<string, unknown>>("click")
    assert.strictEqual((await refusal({ ...click, OriginalLink: undefined })).reason._tag, "Malformed")
  })

  it("a field of another type than Postmark's is a 400 naming it; the event keeps the record whole", async () => {
    const delivery = await fixture<Record<string, unknown>>("delivery")
    for (const [field, value] of [
      ["MessageID", 42],
      ["Metadata", "org_acme"],
      ["RecordType", ["Delivery"]]
    ] as const) {
      const refused = await refusal({ ...delivery, [field]: value })
      assert.strictEqual(refused.reason._tag, "Malformed")
      assert.include(refused.message, field)
    }
    const [event] = await events({ ...delivery, Tag: "welcome", ServerID: 23 })
    assert.deepStrictEqual(event?.raw, { ...delivery, Tag: "welcome", ServerID: 23 })
  })
})

describe("Postmark webhook credentials", () => {
  it("Basic auth: a wrong user or password, another scheme, or none, is a 401", async () => {
    const payload = await fixture("delivery")
    for (const authorization of [
      basic("postmark", "hook-password-12"),
      basic("Postmark", "hook-password-123"),
      basic("postmark", ""),
      "Bearer hook-password-123",
      "Basic !!!",
      ""
    ]) {
      assert.strictEqual(
        (await refusal(payload, source, { authorization })).reason._tag,
        "Unauthenticated",
        authorization
      )
    }
    assert.strictEqual((await refusal(payload, source, {})).reason._tag, "Unauthenticated")
    // Refused before the body is read: a malformed body without credentials is still a 401.
    assert.strictEqual((await refusal("not json", source, {})).reason._tag, "Unauthenticated")
  })

  it("a custom header, its value given as sha256:, and both configured at once", async () => {
    const payload = await fixture("delivery")
    const value = "a-long-random-webhook-token"
    const hashed = `sha256:${createHash("sha256").update(value).digest("hex")}`
    const byHeader = make({ header: { name: "X-Webhook-Token", value: hashed } })
    assert.strictEqual((await events(payload, byHeader, { "x-webhook-token": value })).length, 1)
    assert.strictEqual((await refusal(payload, byHeader, { "x-webhook-token": hashed })).reason._tag, "Unauthenticated")
    const both = make({
      basicAuth: { username: "postmark", password: "hook-password-123" },
      header: { name: "x-webhook-token", value }
    })
    assert.strictEqual((await refusal(payload, both, credentials)).reason._tag, "Unauthenticated")
    assert.strictEqual((await events(payload, both, { ...credentials, "x-webhook-token": value })).length, 1)
  })
})

describe("what PostmarkEventSource judges from the headers, before the body", () => {
  it("its credentials are all headers: verified or refused, never left to the body; 1 MiB by default", () => {
    const check = (headers: Record<string, string>) => {
      const answer = source.checkHeaders?.((name) => headers[name])
      return typeof answer === "string" ? answer : answer?.reason._tag
    }
    assert.strictEqual(check(credentials), "verified")
    assert.strictEqual(check({ authorization: basic("postmark", "wrong") }), "Unauthenticated")
    assert.strictEqual(check({}), "Unauthenticated")
    assert.strictEqual(source.maxBodyBytes, 1024 * 1024)
    const small = make({ basicAuth: { username: "postmark", password: "hook-password-123" }, maxBodyBytes: 2048 })
    assert.strictEqual(small.maxBodyBytes, 2048)
  })
})

describe("PostmarkEventSource options", () => {
  /** What `make` fails with: a ConfigError naming `option`; its message. */
  const refusal = (options: PostmarkEventSource.Options, option: ReadonlyArray<string | number>) =>
    Effect.runSync(expectConfigError(PostmarkEventSource.make(options), option))

  it("an endpoint without credentials is a configuration error", () => {
    assert.include(refusal({}, ["basicAuth"]), "give basicAuth, header, or both")
  })

  it("an empty credential is refused, since it would let an empty header in", () => {
    refusal({ basicAuth: { username: "postmark", password: Redacted.make(" ") } }, ["basicAuth", "password"])
    refusal({ basicAuth: { username: "", password: "hook-password-123" } }, ["basicAuth", "username"])
    refusal({ header: { name: "x-token", value: "" } }, ["header", "value"])
  })

  it("a malformed sha256: credential is refused, since nothing could match it", () => {
    const hashed = 'a hashed secret must be "sha256:" followed by exactly 64 hex digits'
    const password = refusal({ basicAuth: { username: "postmark", password: "sha256:abcd" } }, [
      "basicAuth",
      "password"
    ])
    assert.include(password, hashed)
    assert.include(
      refusal({ header: { name: "x-token", value: Redacted.make("sha256:") } }, ["header", "value"]),
      hashed
    )
  })

  it("a header name that is none, and a name that is no path segment, are refused", () => {
    const message = refusal({ header: { name: "bad header", value: "hook-secret-value" } }, ["header", "name"])
    assert.notInclude(message, "hook-secret-value")
    refusal({ basicAuth: { username: "postmark", password: "hook-password-123" }, name: "post/mark" }, ["name"])
    refusal({ basicAuth: { username: "postmark", password: "hook-password-123" }, maxBodyBytes: 1.5 }, ["maxBodyBytes"])
  })
})
