// The simulator domain on the memory provider, through the real pipeline: each mailbox's record state,
// the suppressions it adds (and the refusal of the next send), the events subscribers see, a delayed
// delivery moved by the TestClock, and the vendors' addresses it maps to and back from.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Stream } from "effect"
import { TestClock } from "effect/testing"
import {
  EmailProvider,
  MailEvents,
  Mailer,
  Mailroom,
  Messages,
  ObjectStore,
  Organizations,
  ProviderError,
  Simulator
} from "../src/index.js"
import { acme } from "./fixtures.js"

const layer = () =>
  Mailroom.layer({
    provider: EmailProvider.layerMemory(),
    store: Layer.succeed(ObjectStore.ObjectStore, ObjectStore.makeMemory()),
    organizations: Organizations.layerStatic({
      serviceDomain: "mailroom.test",
      organizations: [{ id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"] }]
    })
  })

const send = (to: ReadonlyArray<string>) =>
  Effect.flatMap(Mailer.Mailer, (mailer) =>
    mailer.send(acme, { from: "app@acme.example", to: [...to], subject: "Hello", body: { text: "Hi." } })
  )

const record = (id: string) => Effect.flatMap(Messages.Messages, (m) => m.get(acme, id))
const states = (id: string) =>
  Effect.map(record(id), (detail) => ({
    status: detail.status,
    recipients: detail.recipients.map((r) => [r.email, r.state]),
    events: detail.events.map((e) => [e.type, e.recipient])
  }))
const suppressed = Effect.flatMap(Messages.Messages, (m) =>
  Effect.map(m.listSuppressions(acme, {}), (page) => page.data.map((s) => [s.email, s.reason]))
)

describe("the simulator domain on the memory provider", () => {
  it.effect("bounced@ bounces hard, suppresses its recipient, and the next send to it is refused", () =>
    Effect.gen(function* () {
      const { response } = yield* send(["bounced@simulator.mailroom.test"])
      assert.deepStrictEqual(yield* states(response.message_id), {
        status: "bounced",
        recipients: [["bounced@simulator.mailroom.test", "bounced"]],
        events: [["bounced", "bounced@simulator.mailroom.test"]]
      })
      const bounce = (yield* record(response.message_id)).events[0]?.bounce
      assert.deepStrictEqual([bounce?.kind, bounce?.code], ["hard", "5.1.1"])
      assert.deepStrictEqual(yield* suppressed, [["bounced@simulator.mailroom.test", "bounced"]])
      const again = yield* Effect.flip(send(["bounced@simulator.mailroom.test"]))
      assert.isTrue(ProviderError.isProviderError(again) && again.reason._tag === "RecipientSuppressed")
    }).pipe(Effect.provide(layer()))
  )

  it.effect("each other mailbox, with or without a label, as its vendors would report it", () =>
    Effect.gen(function* () {
      const { response } = yield* send([
        "delivered@simulator.mailroom.test",
        "Soft-Bounced+alice@simulator.mailroom.test",
        "complained+bob@simulator.mailroom.test",
        "suppressed@simulator.mailroom.test",
        "carol@example.com"
      ])
      const seen = yield* states(response.message_id)
      assert.deepStrictEqual(seen.recipients, [
        ["delivered@simulator.mailroom.test", "delivered"],
        ["Soft-Bounced+alice@simulator.mailroom.test", "bounced"],
        ["complained+bob@simulator.mailroom.test", "complained"],
        ["suppressed@simulator.mailroom.test", "failed"],
        ["carol@example.com", "delivered"]
      ])
      assert.deepStrictEqual(seen.events, [
        ["delivered", "delivered@simulator.mailroom.test"],
        ["bounced", "Soft-Bounced+alice@simulator.mailroom.test"],
        ["delivered", "complained+bob@simulator.mailroom.test"],
        ["complained", "complained+bob@simulator.mailroom.test"],
        ["rejected", "suppressed@simulator.mailroom.test"],
        ["delivered", "carol@example.com"]
      ])
      // A soft bounce and the vendor's own list do not suppress; a complaint does.
      assert.deepStrictEqual(yield* suppressed, [["complained+bob@simulator.mailroom.test", "complained"]])
    }).pipe(Effect.provide(layer()))
  )

  it.effect("delayed@ is deferred at once and delivered a second later, on the Clock", () =>
    Effect.gen(function* () {
      const events = yield* MailEvents.MailEvents
      const feed = yield* events.subscribe()
      const seen = yield* Effect.forkChild(Stream.runCollect(Stream.take(feed, 2)))
      const { response } = yield* send(["delayed@simulator.mailroom.test"])
      assert.strictEqual((yield* record(response.message_id)).status, "delivery_delayed")
      yield* TestClock.adjust("999 millis")
      assert.strictEqual((yield* record(response.message_id)).status, "delivery_delayed")
      yield* TestClock.adjust("1 millis")
      const both = yield* Fiber.join(seen)
      assert.deepStrictEqual(
        both.map((e) => [e.type, e.occurred_at]),
        [
          ["deferred", "1970-01-01T00:00:00.000Z"],
          ["delivered", "1970-01-01T00:00:01.000Z"]
        ]
      )
      assert.strictEqual((yield* record(response.message_id)).status, "delivered")
    }).pipe(Effect.scoped, Effect.provide(layer()))
  )

  it.effect("a mailbox the domain does not have is refused, naming the ones it has; nothing is sent", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(send(["alice@example.com", "bounce@simulator.mailroom.test"]))
      assert.isTrue(ProviderError.isProviderError(error) && error.reason._tag === "InvalidRequest")
      assert.include(error.message, "no mailbox bounce@simulator.mailroom.test")
      assert.include(error.message, "bounced@simulator.mailroom.test")
      const provider = (yield* EmailProvider.EmailProvider) as EmailProvider.MemoryEmailProvider
      assert.lengthOf(provider.sent, 0)
    }).pipe(Effect.provide(layer()))
  )
})

describe("the vendors' simulators", () => {
  const mailbox = (address: string) => {
    const parsed = Simulator.parse(address)
    if (parsed === undefined || "unknown" in parsed) throw new Error(`not a mailbox: ${address}`)
    return parsed
  }

  it("maps to SES's mailbox simulator with its own label, and back; SES's own addresses are left alone", () => {
    const cases = [
      ["delivered@simulator.mailroom.test", "success+mailroom@simulator.amazonses.com"],
      ["bounced+alice@simulator.mailroom.test", "bounce+mailroom-alice@simulator.amazonses.com"],
      ["complained@simulator.mailroom.test", "complaint+mailroom@simulator.amazonses.com"],
      ["suppressed+x.y@simulator.mailroom.test", "suppressionlist+mailroom-x.y@simulator.amazonses.com"]
    ] as const
    for (const [ours, theirs] of cases) {
      assert.deepStrictEqual(Simulator.toVendor("ses", mailbox(ours)), { address: theirs })
      assert.strictEqual(Simulator.fromVendor("ses", theirs), ours)
    }
    for (const missing of ["soft-bounced@simulator.mailroom.test", "delayed@simulator.mailroom.test"]) {
      const answer = Simulator.toVendor("ses", mailbox(missing))
      assert.isTrue("refused" in answer && answer.refused.includes("no soft bounce and no delay"))
    }
    for (const own of ["bounce@simulator.amazonses.com", "bounce+label@simulator.amazonses.com", "a@example.com"]) {
      assert.strictEqual(Simulator.fromVendor("ses", own), own)
    }
  })

  it("finds a simulator address in cc or bcc alone, and leaves a message to none as it is", () => {
    const email = { to: ["alice@example.com"], cc: [] as Array<string>, bcc: [] as Array<string> }
    assert.deepStrictEqual(Simulator.forVendor("ses", email, true), { email })
    const inCc = Simulator.forVendor("ses", { ...email, cc: ["Delivered@Simulator.Mailroom.Test"] }, true)
    assert.deepStrictEqual("email" in inCc && inCc.email.cc, ["success+mailroom@simulator.amazonses.com"])
    const inBcc = Simulator.forVendor("ses", { ...email, bcc: ["bounced@simulator.mailroom.test"] }, false)
    assert.isTrue("refused" in inBcc && inBcc.refused.includes("bounced@simulator.mailroom.test"))
  })

  it("maps to Postmark's bounce-testing domain with the bounce type, and back; no delivery there", () => {
    assert.deepStrictEqual(Simulator.toVendor("postmark", mailbox("bounced+alice@simulator.mailroom.test")), {
      address: "bounced+alice@bounce-testing.postmarkapp.com",
      bounceType: "HardBounce"
    })
    assert.deepStrictEqual(
      ["soft-bounced", "complained", "delayed", "suppressed"].map(
        (o) =>
          (Simulator.toVendor("postmark", mailbox(`${o}@simulator.mailroom.test`)) as { bounceType: string }).bounceType
      ),
      ["SoftBounce", "SpamNotification", "Transient", "ManuallyDeactivated"]
    )
    assert.strictEqual(
      Simulator.fromVendor("postmark", "bounced+alice@bounce-testing.postmarkapp.com"),
      "bounced+alice@simulator.mailroom.test"
    )
    assert.strictEqual(
      Simulator.fromVendor("postmark", "HardBounce@bounce-testing.postmarkapp.com"),
      "HardBounce@bounce-testing.postmarkapp.com"
    )
    const delivered = Simulator.toVendor("postmark", mailbox("delivered@simulator.mailroom.test"))
    assert.isTrue("refused" in delivered && delivered.refused.includes("sandbox server"))
  })
})
