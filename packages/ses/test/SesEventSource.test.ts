// SES events in: AWS's documented records translated one by one, and SNS's signature checks against a
// certificate and key this test generates (with openssl), served through an injected certificate fetcher.
import { execFileSync } from "node:child_process"
import { createHash, createSign } from "node:crypto"
import { mkdtemp, readFile, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { it as itEffect } from "@effect/vitest"
import { type EventSource, MailEvent } from "@mailroom/core"
import { essentials, expectConfigError, probeEventSource } from "@mailroom/core/testing"
import { Clock, Effect, Redacted } from "effect"
import { TestClock } from "effect/testing"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { SesEventSource } from "../src/index.js"

const fixture = async <A = Record<string, unknown>>(name: string): Promise<A> =>
  JSON.parse(await readFile(new URL(`./fixtures/${name}.json`, import.meta.url), "utf8")) as A

interface Keys {
  readonly key: string
  readonly certificate: string
}

let dir: string
let signer: Keys
let stranger: Keys
let expired: Keys
const certUrl = "https://sns.us-west-2.amazonaws.com/SimpleNotificationService-f3ecfb7224c7233fe7bb5f59f96de52f.pem"
const topic = "arn:aws:sns:us-west-2:123456789012:MyTopic"

/** A key and a self-signed certificate from openssl; `days: -1` makes one that expired yesterday. */
const generate = async (name: string, days = 1): Promise<Keys> => {
  const key = path.join(dir, `${name}.key`)
  const csr = path.join(dir, `${name}.csr`)
  const cert = path.join(dir, `${name}.pem`)
  execFileSync(
    "openssl",
    ["req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr, "-subj", "/CN=sns.amazonaws.com"],
    { stdio: "ignore" }
  )
  execFileSync("openssl", ["x509", "-req", "-in", csr, "-signkey", key, "-days", String(days), "-out", cert], {
    stdio: "ignore"
  })
  return { key: await readFile(key, "utf8"), certificate: await readFile(cert, "utf8") }
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "mailroom-sns-"))
  signer = await generate("signer")
  stranger = await generate("stranger")
  expired = await generate("expired", -1)
}, 30_000)
afterAll(() => rm(dir, { recursive: true, force: true }))

/**
 * Signs a message as SNS documents it ("Verifying the signatures of Amazon SNS messages"), written
 * here independently of the adapter: `Name\nValue\n` for Message, MessageId, Subject (when present),
 * Timestamp, TopicArn, Type; confirmations sign SubscribeURL and Token in place of Subject.
 */
const sign = (message: Record<string, unknown>, keys: Keys = signer, version: "1" | "2" = "1") => {
  const fields =
    message.Type === "Notification"
      ? ["Message", "MessageId", "Subject", "Timestamp", "TopicArn", "Type"]
      : ["Message", "MessageId", "SubscribeURL", "Timestamp", "Token", "TopicArn", "Type"]
  const text = fields
    .filter((name) => typeof message[name] === "string")
    .map((name) => `${name}\n${message[name]}\n`)
    .join("")
  const signature = createSign(version === "1" ? "RSA-SHA1" : "RSA-SHA256")
    .update(text)
    .sign(keys.key, "base64")
  return { ...message, SignatureVersion: version, Signature: signature }
}

const notification = (sesRecord: unknown, overrides: Record<string, unknown> = {}) => ({
  Type: "Notification",
  MessageId: "22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324",
  TopicArn: topic,
  Message: typeof sesRecord === "string" ? sesRecord : JSON.stringify(sesRecord),
  // Now: SNS messages are refused an hour after their Timestamp.
  Timestamp: new Date().toISOString(),
  SigningCertURL: certUrl,
  UnsubscribeURL: `https://sns.us-west-2.amazonaws.com/?Action=Unsubscribe&SubscriptionArn=${topic}:c9135db0`,
  ...overrides
})

/** AWS's documented message (published in 2012) as SNS would send it now. */
const fresh = (message: Record<string, unknown>) => ({ ...message, Timestamp: new Date().toISOString() })

const make = (options: SesEventSource.Options) => Effect.runSync(SesEventSource.make(options))

interface World {
  readonly source: EventSource.EventSource
  readonly fetched: Array<string>
  readonly confirmed: Array<string>
}

const world = (options: Partial<SesEventSource.Options> = {}, certificates: Record<string, string> = {}): World => {
  const fetched: Array<string> = []
  const confirmed: Array<string> = []
  const source = make({
    topicArns: [topic],
    fetchCertificate: async (url) => {
      fetched.push(url.href)
      const pem = certificates[url.href] ?? (url.href === certUrl ? signer.certificate : undefined)
      if (pem === undefined) throw new Error(`404 ${url.href}`)
      return pem
    },
    confirmSubscription: async (url) => {
      confirmed.push(url.href)
    },
    ...options
  })
  return { source, fetched, confirmed }
}

const events = (source: EventSource.EventSource, body: unknown, headers: Record<string, string> = {}) =>
  probeEventSource(source).events(body, headers)
const refusal = (source: EventSource.EventSource, body: unknown, headers: Record<string, string> = {}) =>
  probeEventSource(source).refusal(body, headers)
const summary = essentials

const exampleId = "EXAMPLE7c191be45-e9aedb9a-02f9-4d12-a87d-dd0099a07f8a-000000"

describe("AWS's documented SES records, each through a signed SNS notification", () => {
  const cases: ReadonlyArray<readonly [string, ReadonlyArray<Record<string, unknown>>]> = [
    [
      "bounce",
      [
        {
          type: "bounced",
          recipient: "recipient@example.com",
          message_id: exampleId,
          occurred_at: "2017-08-05T00:41:02.669Z",
          bounce: { kind: "hard", code: "5.1.1", diagnostic: "smtp; 550 5.1.1 user unknown" }
        }
      ]
    ],
    [
      "complaint",
      [
        {
          type: "complained",
          recipient: "recipient@example.com",
          message_id: exampleId,
          occurred_at: "2017-08-05T00:41:02.669Z"
        }
      ]
    ],
    [
      "delivery",
      [
        {
          type: "delivered",
          recipient: "recipient@example.com",
          message_id: exampleId,
          occurred_at: "2016-10-19T23:21:04.133Z"
        }
      ]
    ],
    [
      "send",
      [
        {
          type: "sent",
          recipient: "recipient@example.com",
          message_id: exampleId,
          occurred_at: "2016-10-14T05:02:16.645Z"
        }
      ]
    ],
    // AWS's example sends to sender@example.com (mail.destination), whatever its To header says.
    [
      "reject",
      [
        {
          type: "rejected",
          recipient: "sender@example.com",
          message_id: exampleId,
          occurred_at: "2016-10-14T17:38:15.211Z"
        }
      ]
    ],
    [
      "open",
      [
        {
          type: "opened",
          recipient: "recipient@example.com",
          message_id: exampleId,
          occurred_at: "2017-08-09T22:00:19.652Z"
        }
      ]
    ],
    [
      "click",
      [
        {
          type: "clicked",
          recipient: "recipient@example.com",
          message_id: exampleId,
          occurred_at: "2017-08-09T23:51:25.570Z",
          click: { url: "http://docs.aws.amazon.com/ses/latest/DeveloperGuide/send-email-smtp.html" }
        }
      ]
    ],
    [
      "rendering-failure",
      [
        {
          type: "failed",
          recipient: "recipient@example.com",
          message_id: exampleId,
          occurred_at: "2018-01-22T18:43:06.197Z"
        }
      ]
    ],
    [
      "delivery-delay",
      [
        {
          type: "deferred",
          recipient: "recipient@example.com",
          message_id: exampleId,
          occurred_at: "2020-06-16T00:25:40.095Z"
        }
      ]
    ],
    [
      "subscription",
      [
        {
          type: "unsubscribed",
          recipient: "recipient@example.com",
          message_id: "EXAMPLEe4bccb684-777bc8de-afa7-4970-92b0-f515137b1497-000000",
          occurred_at: "2022-01-12T01:00:17.910Z"
        }
      ]
    ]
  ]
  for (const [name, expected] of cases) {
    it(`${name}.json`, async () => {
      const record = await fixture(name)
      const { source } = world()
      const translated = await events(source, sign(notification(record)))
      assert.deepStrictEqual(summary(translated), expected)
      for (const event of translated) {
        assert.deepStrictEqual(event.raw, record)
        assert.strictEqual(event.provider, "ses")
        // AWS's examples carry only SES's own tags: no organisation to route to, and no mailroom id,
        // so the message keeps SES's id (the message log resolves it) and no second one is given.
        assert.isUndefined(event.organization_id)
        assert.isUndefined(event.provider_message_id)
        assert.match(event.id, /^evt_[0-9a-f]{32}$/)
      }
    })
  }

  it("the send's mailroom-org tag routes each event; a record for several recipients gives one event each", async () => {
    const record = await fixture<{
      bounce: { bouncedRecipients: Array<unknown> }
      mail: { tags: Record<string, unknown> }
    }>("bounce")
    record.mail.tags[MailEvent.organizationKey] = ["org_acme"]
    record.bounce.bouncedRecipients.push({ emailAddress: "second@example.com", action: "failed", status: "5.1.1" })
    const { source } = world()
    const translated = await events(source, sign(notification(record)))
    assert.deepStrictEqual(
      translated.map((e) => [e.recipient, e.organization_id]),
      [
        ["recipient@example.com", "org_acme"],
        ["second@example.com", "org_acme"]
      ]
    )
    assert.notStrictEqual(translated[0]?.id, translated[1]?.id)
    // SNS delivers at least once: the same record again has the same ids.
    const again = await events(source, sign(notification(record, { MessageId: "another-delivery" })))
    assert.deepStrictEqual(
      again.map((e) => e.id),
      translated.map((e) => e.id)
    )
  })

  it("a bounce from the mailbox simulator names the simulator address the caller sent to; SES's own stay as they are", async () => {
    const record = await fixture<{
      bounce: { bouncedRecipients: Array<{ emailAddress: string }> }
      mail: { tags: Record<string, unknown> }
    }>("bounce")
    record.mail.tags[MailEvent.organizationKey] = ["org_acme"]
    record.bounce.bouncedRecipients = [
      { emailAddress: "bounce+mailroom-alice@simulator.amazonses.com" },
      { emailAddress: "bounce+mailroom@simulator.amazonses.com" },
      { emailAddress: "bounce+label@simulator.amazonses.com" }
    ]
    const translated = await events(world().source, sign(notification(record)))
    assert.deepStrictEqual(
      translated.map((e) => [e.type, e.recipient, e.bounce?.kind]),
      [
        ["bounced", "bounced+alice@simulator.mailroom.test", "hard"],
        ["bounced", "bounced@simulator.mailroom.test", "hard"],
        ["bounced", "bounce+label@simulator.amazonses.com", "hard"]
      ]
    )
  })

  it("the send's mailroom-message tag names the message; SES's own id becomes provider_message_id", async () => {
    const own = "0195f0c8-7d3e-7c41-9d2b-5b1e2f3a4c5d"
    const { source } = world()
    for (const name of ["delivery", "bounce", "complaint", "open", "click"]) {
      const record = await fixture<{ mail: { tags: Record<string, unknown> } }>(name)
      record.mail.tags[MailEvent.messageKey] = [own]
      record.mail.tags[MailEvent.organizationKey] = ["org_acme"]
      const translated = await events(source, sign(notification(record)))
      assert.isAbove(translated.length, 0, name)
      for (const event of translated) {
        assert.strictEqual(event.message_id, own, name)
        assert.strictEqual(event.provider_message_id, exampleId, name)
        assert.strictEqual(event.organization_id, "org_acme", name)
      }
    }
  })

  it("an identity-level notification (notificationType, no tags) keeps SES's id as the message id", async () => {
    const record = await fixture<Record<string, unknown> & { mail: Record<string, unknown> }>("bounce")
    const { eventType, ...rest } = record
    const notificationRecord = { ...rest, notificationType: eventType, mail: { ...record.mail, tags: undefined } }
    const { source } = world()
    const [event] = await events(source, sign(notification(notificationRecord)))
    assert.strictEqual(event?.message_id, exampleId)
    assert.isUndefined(event?.provider_message_id)
  })

  it("a bounce from the account's suppression list is rejected, not bounced", async () => {
    const record = await fixture<{ bounce: Record<string, unknown> }>("bounce")
    record.bounce.bounceSubType = "OnAccountSuppressionList"
    const { source } = world()
    const [event] = await events(source, sign(notification(record)))
    assert.strictEqual(event?.type, "rejected")
    assert.isUndefined(event?.bounce)
  })

  it("a message that is not an SES record (SES's topic check) is accepted with no events", async () => {
    const { source } = world()
    const message = sign(notification("Successfully validated SNS topic for Amazon SES event publishing."))
    assert.deepStrictEqual(await events(source, message), [])
  })
})

describe("SNS signatures", () => {
  it("SignatureVersion 1 (SHA1) and 2 (SHA256) both verify; each fails under the other's label", async () => {
    const record = await fixture("delivery")
    const { source } = world()
    assert.strictEqual((await events(source, sign(notification(record), signer, "1"))).length, 1)
    assert.strictEqual((await events(source, sign(notification(record), signer, "2"))).length, 1)
    const v1 = sign(notification(record), signer, "1")
    assert.strictEqual((await refusal(source, { ...v1, SignatureVersion: "2" })).reason._tag, "Unauthenticated")
    const v2 = sign(notification(record), signer, "2")
    assert.strictEqual((await refusal(source, { ...v2, SignatureVersion: "1" })).reason._tag, "Unauthenticated")
  })

  it("a tampered message, subject or timestamp, or another key's signature, is a 401", async () => {
    const record = await fixture<{ delivery: { recipients: Array<string> } }>("delivery")
    const { source } = world()
    const published = new Date()
    const signed = sign(
      notification(record, { Subject: "Amazon SES Email Event Notification", Timestamp: published.toISOString() })
    )
    const forged = structuredClone(record)
    forged.delivery.recipients = ["attacker@example.com"]
    for (const tampered of [
      { ...signed, Message: JSON.stringify(forged) },
      { ...signed, Subject: "Something else" },
      { ...signed, Timestamp: new Date(published.getTime() + 1000).toISOString() },
      { ...signed, Subject: undefined },
      sign(notification(record), stranger)
    ]) {
      const error = await refusal(source, tampered)
      assert.strictEqual(error.reason._tag, "Unauthenticated")
    }
    assert.strictEqual((await events(source, signed)).length, 1)
  })

  it("a certificate URL that is not https, not on an SNS host, or not a .pem is refused before any fetch", async () => {
    const record = await fixture("delivery")
    const { source, fetched } = world()
    for (const url of [
      "http://sns.us-west-2.amazonaws.com/SimpleNotificationService-1.pem",
      "https://sns.us-west-2.amazonaws.com.evil.example/SimpleNotificationService-1.pem",
      "https://evil.example/sns.us-west-2.amazonaws.com/SimpleNotificationService-1.pem",
      "https://s3.amazonaws.com/SimpleNotificationService-1.pem",
      "https://sns.us-west-2.amazonaws.com:8443/SimpleNotificationService-1.pem",
      "https://user@sns.us-west-2.amazonaws.com/SimpleNotificationService-1.pem",
      "https://sns.us-west-2.amazonaws.com/SimpleNotificationService-1.pem.txt",
      "https://sns.us-west-2.amazonaws.com/?file=SimpleNotificationService-1.pem",
      "not a url"
    ]) {
      const error = await refusal(source, sign(notification(record, { SigningCertURL: url })))
      assert.strictEqual(error.reason._tag, "Unauthenticated", url)
      assert.include(error.message, "SigningCertURL", url)
    }
    assert.deepStrictEqual(fetched, [])
    // China regions end in .com.cn.
    const cn = "https://sns.cn-north-1.amazonaws.com.cn/SimpleNotificationService-1.pem"
    const chinese = world({}, { [cn]: signer.certificate })
    assert.strictEqual((await events(chinese.source, sign(notification(record, { SigningCertURL: cn })))).length, 1)
  })

  it("a topic that is not on the allow-list is a 401 even when correctly signed, and nothing is fetched", async () => {
    const { source, fetched } = world()
    const error = await refusal(
      source,
      sign(notification(await fixture("delivery"), { TopicArn: "arn:aws:sns:us-west-2:999999999999:Other" }))
    )
    assert.strictEqual(error.reason._tag, "Unauthenticated")
    assert.include(error.message, "arn:aws:sns:us-west-2:999999999999:Other")
    assert.deepStrictEqual(fetched, [])
  })

  it("an expired certificate, or text that is not a certificate, is a 401", async () => {
    const record = await fixture("delivery")
    const expiredWorld = world({}, { [certUrl]: expired.certificate })
    assert.strictEqual(
      (await refusal(expiredWorld.source, sign(notification(record), expired))).reason._tag,
      "Unauthenticated"
    )
    const garbage = world({}, { [certUrl]: "<html>not a certificate</html>" })
    assert.strictEqual((await refusal(garbage.source, sign(notification(record)))).reason._tag, "Unauthenticated")
  })

  it("a certificate that cannot be fetched is a 503, and is fetched again next time", async () => {
    const record = await fixture("delivery")
    const missing = "https://sns.us-west-2.amazonaws.com/SimpleNotificationService-missing.pem"
    const { source, fetched } = world()
    const message = sign(notification(record, { SigningCertURL: missing }))
    assert.strictEqual((await refusal(source, message)).reason._tag, "Unavailable")
    assert.strictEqual((await refusal(source, message)).reason._tag, "Unavailable")
    assert.deepStrictEqual(fetched, [missing, missing])
  })

  it("certificates are cached, with a bound", async () => {
    const record = await fixture("delivery")
    const urls = [1, 2, 3].map((n) => `https://sns.us-west-2.amazonaws.com/SimpleNotificationService-${n}.pem`)
    const { source, fetched } = world(
      { certificateCacheSize: 2 },
      Object.fromEntries(urls.map((url) => [url, signer.certificate]))
    )
    const send = (url: string) => events(source, sign(notification(record, { SigningCertURL: url })))
    await send(urls[0] as string)
    await send(urls[0] as string)
    await send(urls[1] as string)
    assert.deepStrictEqual(fetched, [urls[0], urls[1]])
    await send(urls[0] as string) // now the most recently used
    await send(urls[2] as string) // evicts urls[1]
    await send(urls[0] as string)
    await send(urls[1] as string)
    assert.deepStrictEqual(fetched, [urls[0], urls[1], urls[2], urls[1]])
  })

  it("SNS's documented SubscriptionConfirmation is confirmed by visiting its SubscribeURL, only once it verifies", async () => {
    const { headers, body } = await fixture<{ headers: Record<string, string>; body: Record<string, unknown> }>(
      "sns-subscription-confirmation"
    )
    const { source, confirmed, fetched } = world()
    // Unsigned (AWS's placeholder signature) or tampered: refused, nothing visited.
    assert.strictEqual((await refusal(source, body, headers)).reason._tag, "Unauthenticated")
    const signed = sign(fresh(body))
    assert.strictEqual(
      (await refusal(source, { ...signed, Token: "another-token" }, headers)).reason._tag,
      "Unauthenticated"
    )
    assert.deepStrictEqual(confirmed, [])
    assert.deepStrictEqual(await events(source, signed, headers), [])
    assert.deepStrictEqual(confirmed, [body.SubscribeURL])
    assert.deepStrictEqual(fetched, [certUrl])
  })

  it("a signed confirmation whose SubscribeURL is not on an SNS host (or not a confirmation) is never visited", async () => {
    const { body } = await fixture<{ body: Record<string, unknown> }>("sns-subscription-confirmation")
    const { source, confirmed } = world()
    for (const subscribeUrl of [
      "https://internal.example/?Action=ConfirmSubscription&TopicArn=arn:aws:sns:us-west-2:123456789012:MyTopic",
      "http://sns.us-west-2.amazonaws.com/?Action=ConfirmSubscription&TopicArn=arn:aws:sns:us-west-2:123456789012:MyTopic",
      "https://sns.us-west-2.amazonaws.com/?Action=Unsubscribe&TopicArn=arn:aws:sns:us-west-2:123456789012:MyTopic",
      "https://sns.us-west-2.amazonaws.com/?Action=ConfirmSubscription&TopicArn=arn:aws:sns:us-west-2:123456789012:Other"
    ]) {
      const error = await refusal(source, sign(fresh({ ...body, SubscribeURL: subscribeUrl })))
      assert.strictEqual(error.reason._tag, "Malformed", subscribeUrl)
    }
    assert.deepStrictEqual(confirmed, [])
  })

  it("a confirmation that cannot reach SNS is a 503, so SNS may send it again", async () => {
    const { body } = await fixture<{ body: Record<string, unknown> }>("sns-subscription-confirmation")
    const { source } = world({
      confirmSubscription: async () => {
        throw new Error("connection refused")
      }
    })
    assert.strictEqual((await refusal(source, sign(fresh(body)))).reason._tag, "Unavailable")
  })

  it("SNS's documented UnsubscribeConfirmation and Notification verify once signed; the latter has no SES record", async () => {
    const { source } = world()
    for (const name of ["sns-unsubscribe-confirmation", "sns-notification"]) {
      const { headers, body } = await fixture<{ headers: Record<string, string>; body: Record<string, unknown> }>(name)
      assert.strictEqual((await refusal(source, body, headers)).reason._tag, "Unauthenticated")
      assert.deepStrictEqual(await events(source, sign(fresh(body)), headers), [])
    }
  })

  it("a body that is not an SNS message is a 400", async () => {
    const { source } = world()
    for (const body of ["not json", "[]", { Type: "Notification" }, { ...notification({}), Type: "Other" }]) {
      assert.strictEqual((await refusal(source, body)).reason._tag, "Malformed")
    }
    const signed = sign(notification(await fixture("delivery")))
    const mismatch = await refusal(source, signed, { "x-amz-sns-message-type": "SubscriptionConfirmation" })
    assert.strictEqual(mismatch.reason._tag, "Malformed")
  })
})

describe("SES through an EventBridge API destination", () => {
  const secret = "eventbridge-shared-secret-0123456789"

  it("the documented record in EventBridge's envelope is translated when the secret header matches", async () => {
    const event = await fixture<{ detail: unknown }>("eventbridge-bounce")
    for (const configured of [secret, `sha256:${createHash("sha256").update(secret).digest("hex")}`]) {
      const { source, fetched } = world({ eventBridgeSecret: configured })
      const translated = await events(source, event, { "x-mailroom-webhook-secret": secret })
      assert.deepStrictEqual(
        translated.map((e) => [e.type, e.recipient, e.message_id]),
        [["bounced", "recipient@example.com", exampleId]]
      )
      assert.deepStrictEqual(translated[0]?.raw, event.detail)
      assert.deepStrictEqual(fetched, [])
      // An input transformer that passes `$.detail` alone works too.
      assert.strictEqual((await events(source, event.detail, { "x-mailroom-webhook-secret": secret })).length, 1)
    }
  })

  it("a wrong or empty secret is a 401; a body that is not JSON is a 400", async () => {
    const event = await fixture("eventbridge-bounce")
    const { source } = world({ eventBridgeSecret: secret, eventBridgeHeader: "X-Api-Key" })
    assert.strictEqual((await refusal(source, event, { "x-api-key": `${secret}x` })).reason._tag, "Unauthenticated")
    assert.strictEqual((await refusal(source, event, { "x-api-key": "" })).reason._tag, "Unauthenticated")
    // Without the header it is taken for SNS, and is no SNS message.
    assert.strictEqual((await refusal(source, event)).reason._tag, "Malformed")
    assert.strictEqual((await refusal(source, "{", { "x-api-key": secret })).reason._tag, "Malformed")
  })
})

describe("what SesEventSource judges from the headers, before the body", () => {
  const secret = "eventbridge-shared-secret-0123456789"
  const check = (source: EventSource.EventSource, headers: Record<string, string>) => {
    const answer = source.checkHeaders?.((name) => headers[name])
    return typeof answer === "string" ? answer : answer?.reason._tag
  }

  it("an EventBridge secret proves or refuses; an SNS topic off the list is refused; SNS otherwise needs its body", () => {
    const { source } = world({ eventBridgeSecret: secret })
    assert.strictEqual(source.maxBodyBytes, 512 * 1024)
    assert.strictEqual(check(source, { "x-mailroom-webhook-secret": secret }), "verified")
    assert.strictEqual(check(source, { "x-mailroom-webhook-secret": `${secret}x` }), "Unauthenticated")
    assert.strictEqual(check(source, { "x-amz-sns-topic-arn": `${topic}-other` }), "Unauthenticated")
    assert.strictEqual(check(source, { "x-amz-sns-topic-arn": topic }), "unverified")
    assert.strictEqual(check(source, {}), "unverified")
    // EventBridge only: nothing without the secret header is read.
    const bridgeOnly = make({ eventBridgeSecret: secret, maxBodyBytes: 1000 })
    assert.strictEqual(bridgeOnly.maxBodyBytes, 1000)
    assert.strictEqual(check(bridgeOnly, { "x-amz-sns-topic-arn": topic }), "Unauthenticated")
  })
})

describe("SesEventSource options", () => {
  /** What `make` fails with: a ConfigError naming `option`; its message. */
  const refusal = (options: SesEventSource.Options, option: ReadonlyArray<string | number>) =>
    Effect.runSync(expectConfigError(SesEventSource.make(options), option))

  it("accepting nothing is a configuration error", () => {
    assert.include(refusal({}, ["topicArns"]), "give topicArns (SNS), eventBridgeSecret (EventBridge), or both")
  })

  it("an empty EventBridge secret is refused, since it would let an empty header in", () => {
    refusal({ eventBridgeSecret: Redacted.make(" ") }, ["eventBridgeSecret"])
  })

  it("a malformed sha256: EventBridge secret is refused, since no header could match it", () => {
    const message = refusal({ eventBridgeSecret: "sha256:abcd" }, ["eventBridgeSecret"])
    assert.include(message, 'a hashed secret must be "sha256:" followed by exactly 64 hex digits')
  })

  it("each other option is checked, and named, without showing the secret", () => {
    const secret = "an-eventbridge-secret-value"
    const cases: ReadonlyArray<readonly [Partial<SesEventSource.Options>, ReadonlyArray<string | number>]> = [
      [{ topicArns: [topic, "MyTopic"] }, ["topicArns", 1]],
      [{ eventBridgeHeader: "x api key" }, ["eventBridgeHeader"]],
      [{ certificateCacheSize: 0 }, ["certificateCacheSize"]],
      [{ timeout: "-1 seconds" }, ["timeout"]],
      [{ name: "SES" }, ["name"]],
      [{ maxBodyBytes: 0 }, ["maxBodyBytes"]]
    ]
    for (const [options, option] of cases) {
      assert.notInclude(refusal({ topicArns: [topic], eventBridgeSecret: secret, ...options }, option), secret)
    }
  })
})

describe("SesEventSource's clock", () => {
  itEffect.effect(
    "a certificate is checked against the Clock: current now, refused once the clock passes its expiry",
    () =>
      Effect.gen(function* () {
        const record = yield* Effect.promise(() => fixture("delivery"))
        const { source } = world()
        const request = (body: unknown) => ({
          header: () => undefined,
          body: new TextEncoder().encode(JSON.stringify(body))
        })
        const message = sign(notification(record))
        yield* TestClock.setTime(Date.now())
        assert.strictEqual((yield* source.receive(request(message))).length, 1)
        // The signer's certificate is valid for one day; a message published then is fresh.
        yield* TestClock.adjust("2 days")
        const later = sign(notification(record, { Timestamp: new Date(yield* Clock.currentTimeMillis).toISOString() }))
        const error = yield* Effect.flip(source.receive(request(later)))
        assert.strictEqual(error.reason._tag, "Unauthenticated")
        assert.include(error.message, "expired")
      })
  )

  itEffect.effect("a message is accepted for one hour after its signed Timestamp, by the Clock, then refused", () =>
    Effect.gen(function* () {
      const record = yield* Effect.promise(() => fixture("delivery"))
      const { source, fetched } = world()
      const request = (body: unknown) => ({
        header: () => undefined,
        body: new TextEncoder().encode(JSON.stringify(body))
      })
      const published = Date.now()
      const message = sign(notification(record, { Timestamp: new Date(published).toISOString() }))
      yield* TestClock.setTime(published)
      assert.strictEqual((yield* source.receive(request(message))).length, 1)
      yield* TestClock.adjust("59 minutes")
      assert.strictEqual((yield* source.receive(request(message))).length, 1)
      yield* TestClock.adjust("2 minutes")
      const error = yield* Effect.flip(source.receive(request(message)))
      assert.strictEqual(error.reason._tag, "Unauthenticated")
      assert.include(error.message, "more than one hour old")
      // Refused before the certificate is fetched again (it was cached from the first).
      assert.deepStrictEqual(fetched, [certUrl])
      // A Timestamp SNS never writes is a 400.
      const odd = yield* Effect.flip(source.receive(request(sign(notification(record, { Timestamp: "yesterday" })))))
      assert.strictEqual(odd.reason._tag, "Malformed")
    })
  )
})
