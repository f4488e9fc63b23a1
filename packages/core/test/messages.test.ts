// The send path and the event pipeline with a message log: what a record says after a send, after a
// failure and after events; suppressions dropping recipients; tags, headers and inline parts.
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer, Option } from "effect"
import { TestClock } from "effect/testing"
import {
  Attachments,
  EmailProvider,
  MailEvent,
  MailEvents,
  Mailer,
  Mailroom,
  MailroomError,
  MessageLog,
  ObjectStore,
  Organizations,
  ProviderError,
  Suppressions
} from "../src/index.js"
import { acme, globex, makeWorld, organizations } from "./fixtures.js"

const request = (overrides: Record<string, unknown> = {}) => ({
  from: "billing@acme.example",
  to: ["alice@example.com", "Bob@Example.com"],
  cc: ["carol@example.net"],
  subject: "Your invoice",
  body: { text: "See attached.", html: "<p>See attached.</p>" },
  ...overrides
})

const send = (body: Record<string, unknown> = request(), principal = acme, options?: Mailer.SendOptions) =>
  Effect.flatMap(Mailer.Mailer, (mailer) => mailer.send(principal, body as never, options))

const now = new Date().toISOString()

describe("the message log on the send path", () => {
  it.effect("a send is a record: mailroom's id, every recipient sent, the provider's id kept", () => {
    const world = makeWorld()
    return Effect.gen(function* () {
      const { response } = yield* send(request({ tags: [{ name: "kind", value: "invoice" }] }), acme, {
        idempotencyKey: "k-1"
      })
      const provider = world.provider as EmailProvider.MemoryEmailProvider
      const sent = provider.sent[0]
      assert.strictEqual(sent?.email.metadata?.[MailEvent.messageKey], response.message_id)
      assert.strictEqual(sent?.email.metadata?.[MailEvent.organizationKey], acme.orgId)
      const record = yield* world.log.find(acme.orgId, response.message_id)
      assert.strictEqual(record?.status, "sent")
      assert.deepStrictEqual(
        record?.recipients.map((r) => [r.email, r.kind, r.state]),
        [
          ["alice@example.com", "to", "sent"],
          ["Bob@Example.com", "to", "sent"],
          ["carol@example.net", "cc", "sent"]
        ]
      )
      assert.strictEqual(record?.provider, "memory")
      assert.strictEqual(record?.provider_message_id, sent?.messageId)
      assert.strictEqual(record?.idempotency_key, "k-1")
      assert.deepStrictEqual(record?.tags, [{ name: "kind", value: "invoice" }])
      assert.strictEqual(record?.html_bytes, "<p>See attached.</p>".length)
      assert.isUndefined(yield* world.log.find(globex.orgId, response.message_id), "another organisation's id is none")
      // A replay under the same key records nothing new.
      yield* send(request({ tags: [{ name: "kind", value: "invoice" }] }), acme, { idempotencyKey: "k-1" })
      assert.strictEqual((yield* world.log.list(acme.orgId, { limit: 10 })).data.length, 1)
    }).pipe(Effect.provide(world.layer))
  })

  it.effect("a refusal is recorded failed, a possible send unknown, both with the provider's reason", () => {
    let answer: ProviderError.Reason = new ProviderError.RecipientNotVerified({
      message: "sandbox: alice is not verified",
      recipients: ["alice@example.com"]
    })
    const provider: EmailProvider.EmailProvider = {
      name: "refusing",
      limits: EmailProvider.memoryLimits,
      send: () => Effect.fail(new ProviderError.ProviderError({ provider: "refusing", reason: answer }))
    }
    const world = makeWorld({ provider })
    return Effect.gen(function* () {
      yield* Effect.flip(send())
      answer = new ProviderError.Unavailable({ message: "the connection was reset", possiblySent: true })
      yield* Effect.flip(send())
      const records = (yield* world.log.list(acme.orgId, { limit: 10 })).data
      assert.deepStrictEqual(
        records.map((r) => [r.status, r.reason]),
        [
          ["unknown", "the connection was reset"],
          ["failed", "sandbox: alice is not verified"]
        ]
      )
    }).pipe(Effect.provide(world.layer))
  })

  it.effect("a request refused before sending (400, 422) leaves no record", () => {
    const world = makeWorld()
    return Effect.gen(function* () {
      yield* Effect.flip(send(request({ to: [] })))
      yield* Effect.flip(send(request({ from: "x@not-verified.example" })))
      assert.deepStrictEqual((yield* world.log.list(acme.orgId, { limit: 10 })).data, [])
    }).pipe(Effect.provide(world.layer))
  })

  it.effect("a log that cannot take the record refuses the send as Unavailable, and nothing is sent", () => {
    const log: MessageLog.MessageLog = {
      ...MessageLog.makeMemory(),
      accept: () => Effect.fail(new MailroomError.Unavailable({ message: "the message log cannot be reached" }))
    }
    const world = makeWorld({ log })
    return Effect.gen(function* () {
      const error = yield* Effect.flip(send())
      assert.strictEqual(error._tag, "Unavailable")
      assert.strictEqual((world.provider as EmailProvider.MemoryEmailProvider).sent.length, 0)
    }).pipe(Effect.provide(world.layer))
  })

  it.effect("a record that lands after the send was refused is taken back: failed, never sending", () => {
    // The database took the record but answered too late (a COMMIT a stalled server answers late).
    const memory = MessageLog.makeMemory()
    const log: MessageLog.MessageLog = {
      ...memory,
      accept: (message) =>
        Effect.andThen(
          memory.accept(message),
          Effect.fail(new MailroomError.Unavailable({ message: "no answer within 5 seconds" }))
        )
    }
    const world = makeWorld({ log })
    return Effect.gen(function* () {
      const error = yield* Effect.flip(send())
      assert.strictEqual(error._tag, "Unavailable")
      assert.strictEqual((world.provider as EmailProvider.MemoryEmailProvider).sent.length, 0)
      const [landed] = (yield* memory.list(acme.orgId, { limit: 10 })).data
      assert.strictEqual(landed?.status, "sending")
      yield* TestClock.adjust("5 seconds")
      const record = yield* memory.find(acme.orgId, landed?.id ?? "")
      assert.strictEqual(record?.status, "failed")
      assert.include(record?.reason ?? "", "nothing went to the provider")
    }).pipe(Effect.provide(world.layer))
  })
})

describe("recording the provider's answer", () => {
  // A log whose `settle` fails its first `failures` calls, counting them.
  const failingSettle = (failures: number) => {
    const memory = MessageLog.makeMemory()
    const calls = { settle: 0 }
    const log: MessageLog.MessageLog = {
      ...memory,
      settle: (id, outcome) =>
        Effect.suspend(() => {
          calls.settle++
          return calls.settle <= failures
            ? Effect.fail(new MailroomError.Unavailable({ message: "the message log cannot be reached" }))
            : memory.settle(id, outcome)
        })
    }
    return { log, calls }
  }

  it.effect("is tried again after 100, 200 and 400 ms when the log fails, and then recorded", () => {
    const { log, calls } = failingSettle(3)
    const world = makeWorld({ log })
    return Effect.gen(function* () {
      const fiber = yield* Effect.forkChild(send())
      yield* TestClock.adjust("699 millis")
      assert.strictEqual(calls.settle, 3, "the third retry waits 400 ms after the second")
      yield* TestClock.adjust("1 millis")
      const { response } = yield* Fiber.join(fiber)
      assert.strictEqual(calls.settle, 4)
      assert.strictEqual((yield* world.log.find(acme.orgId, response.message_id))?.status, "sent")
    }).pipe(Effect.provide(world.layer))
  })

  it.effect("after three retries the send is answered; the answer is recorded once the log is back", () => {
    // A database back within a minute: the provider's answer (and its id) still reaches the record,
    // where the stalled sweep would otherwise record the message unknown ten minutes later.
    const { log, calls } = failingSettle(6)
    const world = makeWorld({ log })
    return Effect.gen(function* () {
      const fiber = yield* Effect.forkChild(send())
      yield* TestClock.adjust("1 second")
      const { response } = yield* Fiber.join(fiber)
      assert.strictEqual(calls.settle, 4, "answered after the three quick retries")
      assert.strictEqual((yield* world.log.find(acme.orgId, response.message_id))?.status, "sending")
      yield* TestClock.adjust("10 seconds")
      assert.strictEqual(calls.settle, 6, "tried again every 5 s in the background")
      yield* TestClock.adjust("5 seconds")
      assert.strictEqual(calls.settle, 7)
      assert.strictEqual((yield* world.log.find(acme.orgId, response.message_id))?.status, "sent")
    }).pipe(Effect.provide(world.layer))
  })

  it.effect("is given up after five minutes of tries: the record stays sending", () => {
    const { log, calls } = failingSettle(Number.POSITIVE_INFINITY)
    const world = makeWorld({ log })
    return Effect.gen(function* () {
      const fiber = yield* Effect.forkChild(send())
      yield* TestClock.adjust("1 second")
      const { response } = yield* Fiber.join(fiber)
      assert.strictEqual(calls.settle, 4)
      yield* TestClock.adjust("10 minutes")
      assert.strictEqual(calls.settle, 4 + 60, "sixty background tries, 5 s apart")
      assert.strictEqual((yield* world.log.find(acme.orgId, response.message_id))?.status, "sending")
    }).pipe(Effect.provide(world.layer))
  })
})

describe("suppressions on the send path", () => {
  it.effect("a suppressed recipient is dropped, recorded suppressed and named in the answer", () => {
    const world = makeWorld()
    return Effect.gen(function* () {
      yield* world.suppressions.add(acme.orgId, [{ email: "bob@example.COM", reason: "manual" }], now)
      yield* world.suppressions.add(acme.orgId, [{ email: "Bob@example.com", reason: "bounced" }], now)
      yield* world.suppressions.add(globex.orgId, [{ email: "alice@example.com", reason: "manual" }], now)
      const { response } = yield* send()
      assert.deepStrictEqual(response.suppressed, ["Bob@Example.com"])
      const sent = (world.provider as EmailProvider.MemoryEmailProvider).sent[0]?.email
      assert.deepStrictEqual(sent?.to, ["alice@example.com"], "local parts keep case: bob@ is another address")
      assert.deepStrictEqual(sent?.cc, ["carol@example.net"])
      const record = yield* world.log.find(acme.orgId, response.message_id)
      assert.deepStrictEqual(
        record?.recipients.map((r) => r.state),
        ["sent", "suppressed", "sent"]
      )
    }).pipe(Effect.provide(world.layer))
  })

  it.effect("when every recipient is suppressed the send is a RecipientSuppressed naming them, nothing sent", () => {
    const world = makeWorld()
    return Effect.gen(function* () {
      yield* world.suppressions.add(
        acme.orgId,
        ["alice@example.com", "Bob@example.com", "carol@EXAMPLE.net"].map((email) => ({
          email,
          reason: "manual" as const
        })),
        now
      )
      const error = yield* Effect.flip(send())
      assert.strictEqual(error._tag, "ProviderError")
      if (error._tag !== "ProviderError") return
      assert.strictEqual(error.reason._tag, "RecipientSuppressed")
      assert.include(error.reason.message, "carol@example.net")
      assert.strictEqual((world.provider as EmailProvider.MemoryEmailProvider).sent.length, 0)
      assert.deepStrictEqual((yield* world.log.list(acme.orgId, { limit: 10 })).data, [])
    }).pipe(Effect.provide(world.layer))
  })

  it.effect("a suppression list that cannot be read refuses the send as Unavailable", () => {
    const suppressions: Suppressions.Suppressions = {
      ...Suppressions.makeMemory(),
      check: () => Effect.fail(new MailroomError.Unavailable({ message: "down" }))
    }
    const world = makeWorld({ suppressions })
    return Effect.gen(function* () {
      assert.strictEqual((yield* Effect.flip(send()))._tag, "Unavailable")
      assert.strictEqual((world.provider as EmailProvider.MemoryEmailProvider).sent.length, 0)
    }).pipe(Effect.provide(world.layer))
  })
})

describe("tags, headers, unsubscribe and inline parts", () => {
  it.effect("reach the provider as custom headers, tags and an inline part", () => {
    const world = makeWorld()
    return Effect.gen(function* () {
      const attachments = yield* Attachments.Attachments
      const { key, url } = yield* attachments.presign(acme, { filename: "logo.png", content_type: "image/png" })
      yield* Effect.promise(() =>
        world.store.fetch(url, { method: "PUT", headers: { "content-type": "image/png" }, body: "PNG" })
      )
      yield* send(
        request({
          body: { html: '<img src="cid:logo@acme">' },
          attachments: [{ filename: "logo.png", key, content_id: "logo@acme" }],
          tags: [{ name: "campaign", value: "spring-2026" }],
          headers: { "X-Campaign": "spring", "In-Reply-To": "<a@b.example>" },
          unsubscribe: { url: "https://acme.example/unsubscribe?u=1", mailto: "unsub@acme.example" }
        })
      )
      const email = (world.provider as EmailProvider.MemoryEmailProvider).sent[0]?.email
      assert.deepStrictEqual(email?.headers, [
        { name: "X-Campaign", value: "spring" },
        { name: "In-Reply-To", value: "<a@b.example>" },
        { name: "List-Unsubscribe", value: "<https://acme.example/unsubscribe?u=1>, <mailto:unsub@acme.example>" },
        { name: "List-Unsubscribe-Post", value: "List-Unsubscribe=One-Click" }
      ])
      assert.deepStrictEqual(email?.tags, [{ name: "campaign", value: "spring-2026" }])
      assert.strictEqual(email?.attachments[0]?.contentId, "logo@acme")
    }).pipe(Effect.provide(world.layer))
  })

  it.effect("unsubscribe alone reaches the provider as its two headers", () => {
    const world = makeWorld()
    return Effect.gen(function* () {
      yield* send(request({ unsubscribe: { url: "https://acme.example/unsubscribe?u=2" } }))
      assert.deepStrictEqual((world.provider as EmailProvider.MemoryEmailProvider).sent[0]?.email.headers, [
        { name: "List-Unsubscribe", value: "<https://acme.example/unsubscribe?u=2>" },
        { name: "List-Unsubscribe-Post", value: "List-Unsubscribe=One-Click" }
      ])
    }).pipe(Effect.provide(world.layer))
  })

  it.effect("each broken rule is a 400 naming its field", () => {
    const world = makeWorld()
    const cases: ReadonlyArray<readonly [Record<string, unknown>, string]> = [
      [{ tags: [{ name: "a b", value: "x" }] }, "tags[0].name: must be 1 to 256 ASCII letters, digits, _ or -"],
      [
        { tags: Array.from({ length: 11 }, (_, i) => ({ name: `t${i}`, value: "v" })) },
        "tags: must contain at most 10 tags"
      ],
      [
        {
          tags: [
            { name: "a", value: "1" },
            { name: "a", value: "2" }
          ]
        },
        "tags: must not name a tag twice"
      ],
      [
        { headers: { Subject: "x" } },
        "headers.Subject: is a header mailroom writes itself; use the request's subject field"
      ],
      [{ headers: { "content-type": "x" } }, "headers.content-type: is a header mailroom writes itself"],
      [{ headers: { "X-Ok": "a\r\nBcc: evil@example.com" } }, "headers.X-Ok: must not contain line breaks"],
      [{ headers: { "Bad:Name": "x" } }, "must be a header name of 1 to 76 visible ASCII characters, no colon"],
      [
        { headers: { "X-Campaign": "spring", "x-campaign": "autumn" } },
        "headers.x-campaign: is the same header as X-Campaign (header names ignore case); give it once"
      ],
      [{ unsubscribe: { url: "http://acme.example/u" } }, "unsubscribe.url: must be an https URL"],
      [
        { unsubscribe: { url: "https://acme.example/u" }, headers: { "List-Unsubscribe": "<mailto:x@y.example>" } },
        "headers.List-Unsubscribe: is written from unsubscribe; give one or the other"
      ],
      [{ body: { html: '<img src="cid:missing">' } }, "body.html: references cid:missing, which no attachment has"],
      [{ body: { html: '<img src="CID:Upper">' } }, "body.html: references cid:Upper, which no attachment has"],
      [
        { tags: [{ name: "mailroom-org", value: "org_globex" }] },
        "tags[0].name: mailroom-org is reserved for mailroom"
      ],
      [{ headers: { "Return-Path": "x@evil.example" } }, "headers.Return-Path: is a header mailroom writes itself"]
    ]
    return Effect.gen(function* () {
      for (const [fields, expected] of cases) {
        const error = yield* Effect.flip(send(request(fields)))
        assert.strictEqual(error._tag, "ValidationError", JSON.stringify(fields))
        if (error._tag !== "ValidationError") continue
        assert.isTrue(
          error.errors.some((e) => e.includes(expected)),
          `${JSON.stringify(fields)}: ${JSON.stringify(error.errors)} names ${expected}`
        )
      }
      assert.strictEqual((world.provider as EmailProvider.MemoryEmailProvider).sent.length, 0)
    }).pipe(Effect.provide(world.layer))
  })
})

describe("a header mailroom writes itself", () => {
  it.effect("names the request's field for it, and no field when the request has none", () => {
    const world = makeWorld()
    const cases: ReadonlyArray<readonly [string, string]> = [
      ["Subject", "headers.Subject: is a header mailroom writes itself; use the request's subject field"],
      ["Reply-To", "headers.Reply-To: is a header mailroom writes itself; use the request's reply_to field"],
      ["from", "headers.from: is a header mailroom writes itself; use the request's from and from_name fields"],
      ["Message-ID", "headers.Message-ID: is a header mailroom writes itself and cannot be set"],
      ["Content-Type", "headers.Content-Type: is a header mailroom writes itself and cannot be set"],
      [
        "X-Mailroom-Organization",
        "headers.X-Mailroom-Organization: is a header mailroom writes itself and cannot be set"
      ]
    ]
    return Effect.gen(function* () {
      for (const [name, expected] of cases) {
        const error = yield* Effect.flip(send(request({ headers: { [name]: "x" } })))
        assert.strictEqual(error._tag, "ValidationError", name)
        if (error._tag === "ValidationError") assert.deepStrictEqual(error.errors, [expected])
      }
    }).pipe(Effect.provide(world.layer))
  })
})

describe("the provider's declared limits on headers and tags", () => {
  it.effect("more headers or tags than the provider takes, or a header it writes, is a 400 before any call", () => {
    const memory = EmailProvider.makeMemory({
      limits: { ...EmailProvider.memoryLimits, maxCustomHeaders: 3, maxTags: 1, forbiddenHeaders: ["Importance"] }
    })
    const world = makeWorld({ provider: memory })
    return Effect.gen(function* () {
      const error = yield* Effect.flip(
        send(
          request({
            headers: { "X-A": "1", Importance: "high" },
            unsubscribe: { url: "https://acme.example/u" },
            tags: [
              { name: "a", value: "1" },
              { name: "b", value: "2" }
            ]
          })
        )
      )
      assert.strictEqual(error._tag, "ValidationError")
      if (error._tag !== "ValidationError") return
      assert.deepStrictEqual(error.errors, [
        "headers: the message has 4 custom headers (unsubscribe writes 2); the provider accepts at most 3",
        "headers.Importance: is not accepted by the provider",
        "tags: the message has 2 tags; the provider accepts at most 1"
      ])
      assert.strictEqual(memory.sent.length, 0)
    }).pipe(Effect.provide(world.layer))
  })
})

describe("events on the record", () => {
  const mailroom = Mailroom.layer({
    provider: EmailProvider.layerMemory(),
    store: ObjectStore.layerMemory(),
    organizations: Layer.succeed(Organizations.Organizations, organizations)
  })
  /** Mailroom on a log of the test's own (the memory log, wrapped), with the memory provider unless told. */
  const withLog = (
    log: MessageLog.MessageLog,
    provider: Layer.Layer<EmailProvider.EmailProvider> = EmailProvider.layerMemory()
  ) =>
    Mailroom.layer({
      provider,
      store: ObjectStore.layerMemory(),
      organizations: Layer.succeed(Organizations.Organizations, organizations),
      messages: Layer.merge(Layer.succeed(MessageLog.MessageLog, log), Suppressions.layerMemory())
    })
  const publish = (events: ReadonlyArray<MailEvent.Unrouted>) =>
    Effect.flatMap(MailEvents.MailEvents, (e) => e.publish(events))
  const eventOf = (messageId: string, type: MailEvent.Type, recipient: string, extra: Partial<MailEvent.Fields> = {}) =>
    MailEvent.make({
      type,
      provider: "memory",
      messageId,
      recipient,
      occurredAt: new Date(Date.now() + 1000).toISOString(),
      organizationId: acme.orgId,
      raw: {},
      ...extra
    })

  it.effect(
    "the provider's delivered events move the record; a hard bounce and a complaint suppress their recipient only",
    () =>
      Effect.gen(function* () {
        const log = yield* MessageLog.MessageLog
        const suppressions = yield* Suppressions.Suppressions
        const { response } = yield* send(request({ tags: [{ name: "kind", value: "invoice" }] }))
        assert.strictEqual((yield* log.find(acme.orgId, response.message_id))?.status, "delivered")
        const published = yield* publish([
          eventOf(response.message_id, "bounced", "alice@example.com", {
            bounce: { kind: "hard", diagnostic: "5.1.1" }
          }),
          eventOf(response.message_id, "bounced", "Bob@Example.com", { bounce: { kind: "soft" } }),
          eventOf(response.message_id, "complained", "carol@example.net")
        ])
        assert.deepStrictEqual(
          published.map((e) => e.tags),
          [
            [{ name: "kind", value: "invoice" }],
            [{ name: "kind", value: "invoice" }],
            [{ name: "kind", value: "invoice" }]
          ],
          "events carry the message's tags"
        )
        const record = yield* log.find(acme.orgId, response.message_id)
        assert.deepStrictEqual(
          record?.recipients.map((r) => r.state),
          ["bounced", "bounced", "complained"]
        )
        const suppressed = yield* suppressions.list(acme.orgId, { limit: 10 })
        assert.deepStrictEqual(suppressed.data.map((s) => [s.email, s.reason, s.message_id]).sort(), [
          ["alice@example.com", "bounced", response.message_id],
          ["carol@example.net", "complained", response.message_id]
        ])
        assert.deepStrictEqual((yield* suppressions.list(globex.orgId, { limit: 10 })).data, [])
        // The next send to them drops them.
        const next = yield* send()
        assert.deepStrictEqual(next.response.suppressed, ["alice@example.com", "carol@example.net"])
      }).pipe(Effect.provide(mailroom))
  )

  /** A record the provider answered with an id of its own (`vendor-...`), unlike the memory provider. */
  const sentByVendor = Effect.gen(function* () {
    const log = yield* MessageLog.MessageLog
    const response = { message_id: MessageLog.makeId() }
    const providerId = `vendor-${response.message_id}`
    yield* log.accept({
      id: response.message_id,
      organizationId: acme.orgId,
      createdAt: new Date().toISOString(),
      from: "billing@acme.example",
      subject: "Hi",
      recipients: [{ email: "alice@example.com", kind: "to", state: "sending" }],
      tags: [],
      attachments: [],
      htmlBytes: 0,
      textBytes: 2
    })
    yield* log.settle(response.message_id, { _tag: "Sent", provider: "memory", providerMessageId: providerId })
    return { response, providerId }
  })

  it.effect("an event that names the message only by the provider's id finds its record through the log", () =>
    Effect.gen(function* () {
      const { response, providerId } = yield* sentByVendor
      const [event] = yield* publish([
        eventOf(providerId, "complained", "alice@example.com", { organizationId: undefined })
      ])
      assert.strictEqual(event?.message_id, response.message_id)
      assert.strictEqual(event?.provider_message_id, providerId)
      assert.strictEqual(event?.organization_id, acme.orgId)
    }).pipe(Effect.provide(mailroom))
  )

  it.effect("an event naming its organisation but only the provider's id is found through the log too", () =>
    Effect.gen(function* () {
      const log = yield* MessageLog.MessageLog
      const { response, providerId } = yield* sentByVendor
      const [event] = yield* publish([
        eventOf(providerId, "bounced", "alice@example.com", { bounce: { kind: "soft" } })
      ])
      assert.strictEqual(event?.message_id, response.message_id)
      assert.strictEqual(event?.provider_message_id, providerId)
      const record = yield* log.find(acme.orgId, response.message_id)
      assert.strictEqual(record?.recipients[0]?.state, "bounced")
      assert.deepStrictEqual(
        record?.events.map((e) => e.type),
        ["bounced"]
      )
    }).pipe(Effect.provide(mailroom))
  )

  it.effect("events carrying mailroom's own id are applied together, and never looked up by the provider's id", () => {
    const memory = MessageLog.makeMemory()
    const calls = { resolve: 0, apply: 0, applyAll: [] as Array<number> }
    const log: MessageLog.MessageLog = {
      ...memory,
      resolve: (provider, id) =>
        Effect.suspend(() => {
          calls.resolve++
          return memory.resolve(provider, id)
        }),
      apply: (event) =>
        Effect.suspend(() => {
          calls.apply++
          return memory.apply(event)
        }),
      applyAll: (events) =>
        Effect.suspend(() => {
          calls.applyAll.push(events.length)
          return memory.applyAll(events)
        })
    }
    const counted = withLog(log)
    return Effect.gen(function* () {
      // The memory provider reports a delivery to each of the three recipients, as the outbox does.
      const { response } = yield* send()
      assert.deepStrictEqual(calls, { resolve: 0, apply: 0, applyAll: [3] })
      const record = yield* memory.find(acme.orgId, response.message_id)
      assert.strictEqual(record?.status, "delivered")
      assert.strictEqual(record?.events.length, 3)
    }).pipe(Effect.provide(counted))
  })

  it.live(
    "on a log whose writes share a commit, a local provider's events of now are written beside its answer",
    () => {
      // The memory log, noting when each write begins and ends; the events' write waits (up to 2 s) for
      // the answer's to begin, which it does only if both are under way together.
      const memory = MessageLog.makeMemory()
      const steps: Array<string> = []
      const settleBegun = Deferred.makeUnsafe<void>()
      const log: MessageLog.MessageLog = {
        ...memory,
        sharesCommits: true,
        applyAll: (events) =>
          Effect.gen(function* () {
            steps.push("events begin")
            yield* Deferred.await(settleBegun).pipe(Effect.timeoutOption("2 seconds"))
            const applied = yield* memory.applyAll(events)
            steps.push("events end")
            return applied
          }),
        settle: (id, outcome) =>
          Effect.gen(function* () {
            steps.push("answer begin")
            yield* Deferred.succeed(settleBegun, undefined)
            yield* memory.settle(id, outcome)
            steps.push("answer end")
          })
      }
      const layer = withLog(log)
      return Effect.gen(function* () {
        const { response } = yield* send()
        assert.deepStrictEqual(steps.slice(0, 2), ["events begin", "answer begin"], "the events' write begins first")
        assert.deepStrictEqual(steps.slice(2).sort(), ["answer end", "events end"], "both are done by the reply")
        const record = yield* log.find(acme.orgId, response.message_id)
        assert.strictEqual(record?.status, "delivered")
        assert.strictEqual(record?.provider_message_id, response.message_id)
        // The provider called on its own (no send of core's around it) publishes at once.
        const provider = yield* EmailProvider.EmailProvider
        steps.length = 0
        yield* provider.send({
          from: { address: "billing@acme.example" },
          to: ["alice@example.com"],
          cc: [],
          bcc: [],
          replyTo: [],
          subject: "Hi",
          text: "Hi",
          attachments: [],
          metadata: { [MailEvent.organizationKey]: acme.orgId, [MailEvent.messageKey]: response.message_id }
        })
        assert.deepStrictEqual(steps, ["events begin", "events end"])
      }).pipe(Effect.provide(layer))
    }
  )

  it.effect("on any other log, they are written before the answer, one write at a time", () => {
    const memory = MessageLog.makeMemory()
    const steps: Array<string> = []
    const noted = <A>(name: string, effect: Effect.Effect<A, MailroomError.Unavailable>) =>
      Effect.suspend(() => {
        steps.push(`${name} begin`)
        return Effect.tap(effect, () => Effect.sync(() => steps.push(`${name} end`)))
      })
    const log: MessageLog.MessageLog = {
      ...memory,
      applyAll: (events) => noted("events", memory.applyAll(events)),
      settle: (id, outcome) => noted("answer", memory.settle(id, outcome))
    }
    return Effect.gen(function* () {
      const { response } = yield* send()
      assert.deepStrictEqual(steps, ["events begin", "events end", "answer begin", "answer end"])
      assert.strictEqual((yield* log.find(acme.orgId, response.message_id))?.status, "delivered")
    }).pipe(Effect.provide(withLog(log)))
  })

  it.live("held events are recorded even when the send fails after the provider accepted them", () => {
    // A provider that hands the message to the memory provider (which accepts it, its events held)
    // and then fails; the log's event write waits for the answer's to begin, as SQLite's group does.
    const memory = MessageLog.makeMemory()
    const settleBegun = Deferred.makeUnsafe<void>()
    const log: MessageLog.MessageLog = {
      ...memory,
      sharesCommits: true,
      applyAll: (events) =>
        Effect.andThen(
          Deferred.await(settleBegun).pipe(Effect.timeoutOption("2 seconds")),
          Effect.andThen(Effect.sleep("10 millis"), memory.applyAll(events))
        ),
      settle: (id, outcome) => Effect.andThen(Deferred.succeed(settleBegun, undefined), memory.settle(id, outcome))
    }
    const failingAfter = Layer.effect(
      EmailProvider.EmailProvider,
      // As the memory provider's own layer: MailEvents when Mailroom.layer provides it.
      Effect.map(Effect.serviceOption(MailEvents.MailEvents), (events): EmailProvider.EmailProvider => {
        const inner = EmailProvider.makeMemory(Option.isSome(events) ? { events: events.value } : {})
        return {
          name: "wrapping",
          limits: inner.limits,
          send: (email) =>
            Effect.andThen(
              inner.send(email),
              Effect.fail(
                new ProviderError.ProviderError({
                  provider: "wrapping",
                  reason: new ProviderError.InvalidRequest({ message: "refused after the copy was made" })
                })
              )
            )
        }
      })
    )
    const layer = withLog(log, failingAfter)
    return Effect.gen(function* () {
      const failed = yield* Effect.flip(send())
      assert.strictEqual(failed._tag, "ProviderError")
      const [record] = (yield* log.list(acme.orgId, { limit: 1 })).data
      const detail = record === undefined ? undefined : yield* log.find(acme.orgId, record.id)
      assert.deepStrictEqual(
        detail?.events.map((e) => [e.type, e.recipient]),
        [
          ["delivered", "alice@example.com"],
          ["delivered", "Bob@Example.com"],
          ["delivered", "carol@example.net"]
        ]
      )
    }).pipe(Effect.provide(layer))
  })

  it.effect("a log that cannot record the events fails the publish, so the provider delivers them again", () => {
    const log: MessageLog.MessageLog = {
      ...MessageLog.makeMemory(),
      apply: () => Effect.fail(new MailroomError.Unavailable({ message: "down" })),
      applyAll: () => Effect.fail(new MailroomError.Unavailable({ message: "down" }))
    }
    const events = MailEvents.layer().pipe(
      Layer.provide(
        Layer.mergeAll(
          Layer.succeed(Organizations.Organizations, organizations),
          Layer.succeed(MessageLog.MessageLog, log),
          Suppressions.layerMemory()
        )
      )
    )
    return Effect.gen(function* () {
      const error = yield* Effect.flip(publish([eventOf(MessageLog.makeId(), "delivered", "a@example.com")]))
      assert.strictEqual(error._tag, "MailEventsError")
      assert.isTrue(error.isRetryable)
    }).pipe(Effect.provide(events))
  })
})
