// The conformance suite every MessageLog runs against its real database: records as accepted, states
// that only move forward whatever order events arrive in, lists and cursors, scheduling races, purge.
import { randomUUID } from "node:crypto"
import { assert, describe, it, layer, type Vitest } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as MailEvent from "../MailEvent.js"
import { isValidationError } from "../MailroomError.js"
import { type EmailRecord, MessageLog, makeId, type NewMessage, type State } from "../MessageLog.js"
import { abandonCases } from "./messageLogAbandon.js"
import { applyAllCases } from "./messageLogApplyCases.js"
import { waitingCases } from "./messageLogWaiting.js"

export interface MessageLogSuiteOptions {
  /** Builds the log. Records of a shared database may outlive a run: the suite uses fresh organisations. */
  readonly layer: Layer.Layer<MessageLog, unknown>
  /**
   * A second log on the same database, as another instance of a server has: the suite then checks
   * that what one writes the other reads, and that claims race fairly between them.
   */
  readonly second?: Layer.Layer<MessageLog, unknown>
}

const log = MessageLog

const at = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms).toISOString()

/** A message to three recipients, one of each kind, as the Mailer accepts it. */
export const newMessage = (organizationId: string, overrides: Partial<NewMessage> = {}): NewMessage => ({
  id: makeId(),
  organizationId,
  createdAt: new Date().toISOString(),
  from: "billing@acme.example",
  fromName: "Acme Billing",
  subject: "Votre reçu n° 42 ✔",
  recipients: [
    { email: "alice@example.com", kind: "to", state: "sending" },
    { email: "Bob@Example.COM", kind: "cc", state: "sending" },
    { email: "carol@example.net", kind: "bcc", state: "sending" }
  ],
  tags: [{ name: "category", value: "receipt" }],
  attachments: [{ filename: "reçu.pdf", content_type: "application/pdf", size: 1234, key: "attachments/x/1-r.pdf" }],
  htmlBytes: 120,
  textBytes: 40,
  ...overrides
})

/** A routed event of `message` for `recipient`. */
export const eventOf = (
  message: { readonly id: string; readonly organizationId: string },
  type: MailEvent.Type,
  recipient: string | null,
  occurredAt: string,
  extra: Partial<MailEvent.Fields> = {}
): MailEvent.MailEvent => ({
  ...MailEvent.make({
    type,
    provider: "suite",
    messageId: message.id,
    recipient,
    occurredAt,
    organizationId: message.organizationId,
    raw: { type },
    ...extra
  }),
  organization_id: message.organizationId
})

const stateOf = (record: EmailRecord | undefined, email: string): State | undefined =>
  record?.recipients.find((r) => r.email === email)?.state

export const MessageLogSuite = (name: string, options: MessageLogSuiteOptions): void => {
  const fresh = () => `org_${randomUUID()}`
  const accept = (message: NewMessage) => Effect.flatMap(log, (l) => l.accept(message))
  const find = (organizationId: string, id: string) => Effect.flatMap(log, (l) => l.find(organizationId, id))
  const apply = (event: MailEvent.MailEvent) => Effect.flatMap(log, (l) => l.apply(event))
  const sent = (id: string, providerMessageId = `pm-${id}`) =>
    Effect.flatMap(log, (l) => l.settle(id, { _tag: "Sent", provider: "suite", providerMessageId }))

  describe(`MessageLogSuite: ${name}`, () => {
    layer(options.layer, { timeout: 60_000, excludeTestServices: true })((it) => {
      it.effect("a message reads back as accepted: every field, recipients sending, no events", () =>
        Effect.gen(function* () {
          const message = newMessage(fresh(), { idempotencyKey: "key-1" })
          yield* accept(message)
          const record = yield* find(message.organizationId, message.id)
          assert.deepStrictEqual(record, {
            id: message.id,
            organization_id: message.organizationId,
            created_at: message.createdAt,
            status: "sending",
            from: message.from,
            from_name: "Acme Billing",
            subject: message.subject,
            recipients: message.recipients.map((r) => ({ ...r, updated_at: message.createdAt })),
            tags: message.tags,
            attachments: message.attachments,
            html_bytes: 120,
            text_bytes: 40,
            provider: null,
            provider_message_id: null,
            idempotency_key: "key-1",
            scheduled_at: null,
            last_event: null,
            reason: null,
            events: []
          })
        })
      )

      it.effect("another organisation never reads a record, by id or in a list", () =>
        Effect.gen(function* () {
          const message = newMessage(fresh())
          yield* accept(message)
          assert.isUndefined(yield* find(fresh(), message.id))
          const page = yield* Effect.flatMap(log, (l) => l.list(fresh(), { limit: 100 }))
          assert.deepStrictEqual(page.data, [])
          const event = { ...eventOf(message, "delivered", "alice@example.com", at(1)), organization_id: fresh() }
          assert.isFalse((yield* apply(event)).applied, "an event routed to another organisation moves nothing")
          assert.strictEqual(stateOf(yield* find(message.organizationId, message.id), "alice@example.com"), "sending")
        })
      )

      it.effect("the provider's answer: sent with its id (found again by it), failed or unknown with a reason", () =>
        Effect.gen(function* () {
          const org = fresh()
          const [ok, refused, unsure] = [newMessage(org), newMessage(org), newMessage(org)]
          yield* Effect.forEach([ok, refused, unsure], accept, { discard: true })
          yield* sent(ok.id, `pm-${ok.id}`)
          yield* Effect.flatMap(log, (l) =>
            l.settle(refused.id, { _tag: "Failed", provider: "suite", reason: "the sender is not verified" })
          )
          yield* Effect.flatMap(log, (l) =>
            l.settle(unsure.id, { _tag: "Unknown", provider: "suite", reason: "timeout" })
          )
          const okRecord = yield* find(org, ok.id)
          assert.strictEqual(okRecord?.status, "sent")
          assert.deepStrictEqual(
            okRecord?.recipients.map((r) => r.state),
            ["sent", "sent", "sent"]
          )
          assert.strictEqual(okRecord?.provider, "suite")
          assert.strictEqual(okRecord?.provider_message_id, `pm-${ok.id}`)
          assert.deepStrictEqual(yield* Effect.flatMap(log, (l) => l.resolve("suite", `pm-${ok.id}`)), {
            id: ok.id,
            organizationId: org
          })
          assert.isUndefined(yield* Effect.flatMap(log, (l) => l.resolve("other", `pm-${ok.id}`)))
          const refusedRecord = yield* find(org, refused.id)
          assert.strictEqual(refusedRecord?.status, "failed")
          assert.strictEqual(refusedRecord?.reason, "the sender is not verified")
          assert.strictEqual((yield* find(org, unsure.id))?.status, "unknown")
        })
      )

      it.effect("each recipient moves on its own events; the message is delivered only when all are", () =>
        Effect.gen(function* () {
          const message = newMessage(fresh())
          yield* accept(message)
          yield* sent(message.id)
          const applied = yield* apply(eventOf(message, "delivered", "alice@example.com", at(1)))
          assert.deepStrictEqual(applied, { applied: true, found: true, tags: message.tags })
          let record = yield* find(message.organizationId, message.id)
          assert.deepStrictEqual(
            record?.recipients.map((r) => r.state),
            ["delivered", "sent", "sent"]
          )
          assert.strictEqual(record?.status, "sent")
          // The event names the cc recipient with another case in its domain: the same address.
          yield* apply(eventOf(message, "delivered", "Bob@example.com", at(2)))
          yield* apply(eventOf(message, "delivered", "carol@example.net", at(3)))
          record = yield* find(message.organizationId, message.id)
          assert.strictEqual(record?.status, "delivered")
          assert.deepStrictEqual(record?.last_event, { type: "delivered", occurred_at: at(3) })
          assert.deepStrictEqual(
            record?.events.map((e) => [e.type, e.recipient]),
            [
              ["delivered", "alice@example.com"],
              ["delivered", "Bob@example.com"],
              ["delivered", "carol@example.net"]
            ]
          )
        })
      )

      it.effect("an event applies once: its redelivery changes nothing and is not in the history twice", () =>
        Effect.gen(function* () {
          const message = newMessage(fresh())
          yield* accept(message)
          yield* sent(message.id)
          const event = eventOf(message, "deferred", "alice@example.com", at(1))
          assert.isTrue((yield* apply(event)).applied)
          const again = yield* Effect.forEach([event, event, event], apply, { concurrency: "unbounded" })
          assert.deepStrictEqual(
            again.map((a) => a.applied),
            [false, false, false]
          )
          const record = yield* find(message.organizationId, message.id)
          assert.strictEqual(record?.events.length, 1)
          assert.strictEqual(stateOf(record, "alice@example.com"), "delivery_delayed")
        })
      )

      it.effect(
        "states only move forward: a late delivered never overwrites bounced; complained follows delivered",
        () =>
          Effect.gen(function* () {
            const message = newMessage(fresh())
            yield* accept(message)
            yield* sent(message.id)
            // Alice: the bounce is recorded first, then a delivery that happened before it arrives.
            yield* apply(eventOf(message, "bounced", "alice@example.com", at(5), { bounce: { kind: "hard" } }))
            yield* apply(eventOf(message, "delivered", "alice@example.com", at(4)))
            yield* apply(eventOf(message, "deferred", "alice@example.com", at(3)))
            // Bob: delivered, then a complaint.
            yield* apply(eventOf(message, "delivered", "Bob@Example.COM", at(4)))
            yield* apply(eventOf(message, "complained", "Bob@Example.COM", at(9)))
            yield* apply(eventOf(message, "delivered", "Bob@Example.COM", at(10), { discriminator: "again" }))
            // Carol: opened and clicked say nothing about delivery.
            yield* apply(eventOf(message, "opened", "carol@example.net", at(6)))
            const record = yield* find(message.organizationId, message.id)
            assert.strictEqual(stateOf(record, "alice@example.com"), "bounced")
            assert.strictEqual(stateOf(record, "Bob@Example.COM"), "complained")
            assert.strictEqual(stateOf(record, "carol@example.net"), "sent")
            assert.strictEqual(record?.status, "complained")
            assert.strictEqual(record?.events.length, 7, "every event is in the history, moved or not")
            assert.deepStrictEqual(
              record?.events.map((e) => e.occurred_at),
              [at(3), at(4), at(4), at(5), at(6), at(9), at(10)],
              "oldest first"
            )
            assert.deepStrictEqual(record?.last_event, { type: "delivered", occurred_at: at(10) })
          })
      )

      it.effect("an event that comes before the provider's answer is kept when the answer arrives", () =>
        Effect.gen(function* () {
          const message = newMessage(fresh())
          yield* accept(message)
          yield* apply(eventOf(message, "delivered", "alice@example.com", at(1)))
          yield* sent(message.id)
          const record = yield* find(message.organizationId, message.id)
          assert.deepStrictEqual(
            record?.recipients.map((r) => r.state),
            ["delivered", "sent", "sent"]
          )
        })
      )

      it.effect("an unknown outcome moves on when the vendor's events prove the message was accepted", () =>
        Effect.gen(function* () {
          const message = newMessage(fresh())
          yield* accept(message)
          yield* Effect.flatMap(log, (l) =>
            l.settle(message.id, { _tag: "Unknown", provider: "suite", reason: "reset" })
          )
          yield* apply(eventOf(message, "delivered", "alice@example.com", at(1)))
          const record = yield* find(message.organizationId, message.id)
          assert.strictEqual(stateOf(record, "alice@example.com"), "delivered")
          assert.strictEqual(record?.status, "unknown", "the others are still unknown")
        })
      )

      it.effect("suppressed recipients never move and do not count in the status", () =>
        Effect.gen(function* () {
          const message = newMessage(fresh(), {
            recipients: [
              { email: "alice@example.com", kind: "to", state: "sending" },
              { email: "gone@example.com", kind: "to", state: "suppressed" }
            ]
          })
          yield* accept(message)
          yield* sent(message.id)
          yield* apply(eventOf(message, "delivered", "alice@example.com", at(1)))
          yield* apply(eventOf(message, "delivered", "gone@example.com", at(1)))
          const record = yield* find(message.organizationId, message.id)
          assert.strictEqual(stateOf(record, "gone@example.com"), "suppressed")
          assert.strictEqual(record?.status, "delivered")
        })
      )

      it.effect("an event of a message the log does not keep is not applied, and says it was not found", () =>
        Effect.gen(function* () {
          const org = fresh()
          const applied = yield* apply(
            eventOf({ id: makeId(), organizationId: org }, "delivered", "a@b.example", at(1))
          )
          assert.deepStrictEqual(applied, { applied: false, found: false, tags: [] })
          // Named by the provider's id, as an event without mailroom's own id names it: not found either.
          const message = newMessage(org)
          yield* accept(message)
          yield* sent(message.id, `pm-${message.id}`)
          const byProviderId = yield* apply(
            eventOf({ id: `pm-${message.id}`, organizationId: org }, "delivered", "alice@example.com", at(2))
          )
          assert.deepStrictEqual(byProviderId, { applied: false, found: false, tags: [] })
          const redelivered = eventOf(message, "delivered", "alice@example.com", at(3))
          yield* apply(redelivered)
          assert.deepStrictEqual(yield* apply(redelivered), { applied: false, found: true, tags: message.tags })
        })
      )

      applyAllCases({ it, fresh, accept, find, at, eventOf, newMessage })

      listCases(it, fresh, accept, sent)
      scheduleCases(it, fresh, accept, find)
      waitingCases(it, fresh, accept, newMessage)
      abandonCases(it, fresh, accept, newMessage)

      it.effect("purge deletes the records created before a time, with their history", () =>
        Effect.gen(function* () {
          const org = fresh()
          const old = newMessage(org, { createdAt: "2001-01-01T00:00:00.000Z" })
          const recent = newMessage(org)
          yield* accept(old)
          yield* accept(recent)
          yield* sent(old.id, `pm-old-${old.id}`)
          yield* apply(eventOf(old, "delivered", "alice@example.com", at(1)))
          const purged = yield* Effect.flatMap(log, (l) => l.purge("2001-01-02T00:00:00.000Z"))
          assert.isAtLeast(purged, 1)
          assert.isUndefined(yield* find(org, old.id))
          assert.isUndefined(yield* Effect.flatMap(log, (l) => l.resolve("suite", `pm-old-${old.id}`)))
          assert.isDefined(yield* find(org, recent.id))
        })
      )
    })

    if (options.second !== undefined) sharedCases(options.layer, options.second)
  })
}

type It = Vitest.MethodsNonLive<MessageLog>

const listCases = (
  it: It,
  fresh: () => string,
  accept: (m: NewMessage) => Effect.Effect<void, unknown, MessageLog>,
  sent: (id: string) => Effect.Effect<void, unknown, MessageLog>
) => {
  const list = (org: string, query: Parameters<MessageLog["list"]>[1]) => Effect.flatMap(log, (l) => l.list(org, query))

  it.effect("a list is newest first, page after page through its cursors, with nothing twice or missed", () =>
    Effect.gen(function* () {
      const org = fresh()
      const ids: Array<string> = []
      for (let i = 0; i < 23; i++) {
        const message = newMessage(org)
        ids.push(message.id)
        yield* accept(message)
      }
      const seen: Array<string> = []
      let cursor: string | undefined
      let pages = 0
      do {
        const page = yield* list(org, { limit: 10, ...(cursor === undefined ? {} : { cursor }) })
        seen.push(...page.data.map((r) => r.id))
        cursor = page.next_cursor ?? undefined
        pages++
      } while (cursor !== undefined)
      assert.strictEqual(pages, 3)
      assert.deepStrictEqual(seen, [...ids].reverse())
      const exact = yield* list(org, { limit: 23 })
      assert.strictEqual(exact.data.length, 23)
      assert.isNull(exact.next_cursor, "no cursor when nothing is left")
    })
  )

  it.effect("filters: status, recipient (any kind, domain case aside), tag, created since and until", () =>
    Effect.gen(function* () {
      const org = fresh()
      const a = newMessage(org, { createdAt: "2026-03-01T00:00:00.000Z", tags: [{ name: "kind", value: "welcome" }] })
      const b = newMessage(org, {
        createdAt: "2026-03-02T00:00:00.000Z",
        recipients: [{ email: "dave@example.org", kind: "to", state: "sending" }]
      })
      const c = newMessage(org, { createdAt: "2026-03-03T00:00:00.000Z" })
      yield* Effect.forEach([a, b, c], accept, { discard: true })
      yield* sent(b.id)
      const ids = (page: { readonly data: ReadonlyArray<EmailRecord> }) => page.data.map((r) => r.id)
      assert.deepStrictEqual(ids(yield* list(org, { limit: 10, status: "sent" })), [b.id])
      assert.deepStrictEqual(ids(yield* list(org, { limit: 10, status: "sending" })), [c.id, a.id])
      assert.deepStrictEqual(ids(yield* list(org, { limit: 10, to: "dave@EXAMPLE.org" })), [b.id])
      assert.deepStrictEqual(ids(yield* list(org, { limit: 10, to: "bob@example.com" })), [], "local parts keep case")
      assert.deepStrictEqual(ids(yield* list(org, { limit: 10, to: "Bob@example.com" })), [c.id, a.id])
      assert.deepStrictEqual(ids(yield* list(org, { limit: 10, tag: { name: "kind", value: "welcome" } })), [a.id])
      assert.deepStrictEqual(
        ids(yield* list(org, { limit: 10, since: "2026-03-02T00:00:00.000Z", until: "2026-03-03T00:00:00.000Z" })),
        [b.id]
      )
    })
  )

  it.effect("a message naming one address twice (to and cc) is listed once under that address", () =>
    Effect.gen(function* () {
      const org = fresh()
      const twice = newMessage(org, {
        recipients: [
          { email: "alice@example.com", kind: "to", state: "sending" },
          { email: "alice@EXAMPLE.com", kind: "cc", state: "sending" }
        ]
      })
      yield* accept(twice)
      const page = yield* list(org, { limit: 1, to: "alice@example.com" })
      assert.deepStrictEqual(
        page.data.map((r) => r.id),
        [twice.id]
      )
      assert.isNull(page.next_cursor, "no second page holding it again")
    })
  )

  it.effect("a cursor no list answered is refused naming cursor", () =>
    Effect.gen(function* () {
      // The last two hold a NUL, which PostgreSQL refuses in text: a bad cursor, never an outage.
      const crafted = [
        ["2030-01-01T00:00:00.000Z", "\u0000"],
        ["\u0000", "a"]
      ].map((key) => Buffer.from(JSON.stringify(key)).toString("base64url"))
      for (const cursor of ["", "not a cursor", "eyJhIjoxfQ", "W10", "W1sxXV0", "x".repeat(5000), ...crafted]) {
        const error = yield* Effect.flip(list(fresh(), { limit: 10, cursor }))
        assert.isTrue(isValidationError(error), cursor)
        if (isValidationError(error)) assert.match(error.errors[0] ?? "", /^cursor: /)
      }
    })
  )
}

const scheduleCases = (
  it: It,
  fresh: () => string,
  accept: (m: NewMessage) => Effect.Effect<void, unknown, MessageLog>,
  find: (org: string, id: string) => Effect.Effect<EmailRecord | undefined, unknown, MessageLog>
) => {
  const scheduled = (org: string, when: string) =>
    newMessage(org, {
      recipients: [
        { email: "alice@example.com", kind: "to", state: "scheduled" },
        { email: "gone@example.com", kind: "to", state: "suppressed" }
      ],
      scheduledAt: when,
      request: JSON.stringify({ subject: "later" })
    })
  const claim = (id: string, now: string) => Effect.flatMap(log, (l) => l.claim(id, now))

  it.effect("a scheduled message is claimed once it is due, once, with its request", () =>
    Effect.gen(function* () {
      const org = fresh()
      const message = scheduled(org, "2026-05-01T10:00:00.000Z")
      yield* accept(message)
      assert.strictEqual((yield* find(org, message.id))?.status, "scheduled")
      assert.isUndefined(yield* claim(message.id, "2026-05-01T09:59:59.999Z"), "not before its time")
      const claims = yield* Effect.forEach(
        Array.from({ length: 10 }, () => "2026-05-01T10:00:00.000Z"),
        (now) => claim(message.id, now),
        { concurrency: "unbounded" }
      )
      const won = claims.filter((c) => c !== undefined)
      assert.strictEqual(won.length, 1, "of concurrent claims exactly one wins")
      assert.strictEqual(won[0]?.request, message.request)
      assert.strictEqual(won[0]?.record.status, "sending")
      const record = yield* find(org, message.id)
      assert.deepStrictEqual(
        record?.recipients.map((r) => r.state),
        ["sending", "suppressed"]
      )
    })
  )

  it.effect("cancel and reschedule change a message only while it is scheduled, only for its organisation", () =>
    Effect.gen(function* () {
      const org = fresh()
      const a = scheduled(org, "2026-05-01T10:00:00.000Z")
      const b = scheduled(org, "2026-05-01T10:00:00.000Z")
      yield* accept(a)
      yield* accept(b)
      const cancel = (o: string, id: string) => Effect.flatMap(log, (l) => l.cancel(o, id))
      const reschedule = (o: string, id: string, when: string) => Effect.flatMap(log, (l) => l.reschedule(o, id, when))
      assert.deepStrictEqual(yield* cancel(fresh(), a.id), { _tag: "NotFound" })
      assert.deepStrictEqual(yield* reschedule(fresh(), a.id, "2026-06-01T00:00:00.000Z"), { _tag: "NotFound" })
      assert.deepStrictEqual(yield* cancel(org, makeId()), { _tag: "NotFound" })
      assert.isUndefined(yield* cancel(org, a.id))
      assert.strictEqual((yield* find(org, a.id))?.status, "cancelled")
      assert.deepStrictEqual(yield* cancel(org, a.id), { _tag: "NotScheduled", status: "cancelled" })
      assert.isUndefined(yield* claim(a.id, "2030-01-01T00:00:00.000Z"), "a cancelled message is never claimed")
      assert.isUndefined(yield* reschedule(org, b.id, "2026-06-01T00:00:00.000Z"))
      assert.strictEqual((yield* find(org, b.id))?.scheduled_at, "2026-06-01T00:00:00.000Z")
      assert.isUndefined(yield* claim(b.id, "2026-05-01T10:00:00.000Z"), "not at its old time")
      assert.isDefined(yield* claim(b.id, "2026-06-01T00:00:00.000Z"))
      assert.deepStrictEqual(yield* cancel(org, b.id), { _tag: "NotScheduled", status: "sending" })
    })
  )

  it.effect("a cancel racing a claim: exactly one wins, and the record says which", () =>
    Effect.gen(function* () {
      const org = fresh()
      for (let round = 0; round < 10; round++) {
        const message = scheduled(org, "2026-05-01T10:00:00.000Z")
        yield* accept(message)
        const [cancelled, claimed] = yield* Effect.all(
          [Effect.flatMap(log, (l) => l.cancel(org, message.id)), claim(message.id, "2026-05-01T10:00:00.000Z")],
          { concurrency: "unbounded" }
        )
        const status = (yield* find(org, message.id))?.status
        if (claimed === undefined) {
          assert.isUndefined(cancelled)
          assert.strictEqual(status, "cancelled")
        } else {
          assert.deepStrictEqual(cancelled, { _tag: "NotScheduled", status: "sending" })
          assert.strictEqual(status, "sending")
        }
      }
    })
  )
}

const sharedCases = (first: Layer.Layer<MessageLog, unknown>, second: Layer.Layer<MessageLog, unknown>) => {
  it.live(
    "two instances on one database: what one writes the other reads, and one claim wins",
    () =>
      Effect.gen(function* () {
        const one = Context.get(yield* Layer.build(first), MessageLog)
        const two = Context.get(yield* Layer.build(second), MessageLog)
        const org = `org_${randomUUID()}`
        const message = newMessage(org, {
          recipients: [{ email: "alice@example.com", kind: "to", state: "scheduled" }],
          scheduledAt: "2026-05-01T10:00:00.000Z",
          request: "{}"
        })
        yield* one.accept(message)
        assert.strictEqual((yield* two.find(org, message.id))?.status, "scheduled")
        const claims = yield* Effect.all(
          Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? one : two).claim(message.id, "2026-05-01T10:00:00.000Z")),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(claims.filter((c) => c !== undefined).length, 1)
        yield* two.settle(message.id, { _tag: "Sent", provider: "suite", providerMessageId: `pm-${message.id}` })
        yield* one.apply(eventOf(message, "delivered", "alice@example.com", at(1)))
        assert.strictEqual((yield* two.find(org, message.id))?.status, "delivered")
      }).pipe(Effect.scoped),
    60_000
  )
}
