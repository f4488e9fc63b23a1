// MessageLogSuite's cases of `applyAll`: the events a provider reports together, applied in one write
// as one after the other would be, each answered in order, found or not.
import { assert, type Vitest } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as MailEvent from "../MailEvent.js"
import { type EmailDetail, MessageLog, makeId, type NewMessage } from "../MessageLog.js"

const log = MessageLog

/** What the suite hands its cases. */
export interface Fixtures {
  readonly it: Vitest.MethodsNonLive<MessageLog>
  readonly fresh: () => string
  readonly accept: (m: NewMessage) => Effect.Effect<void, unknown, MessageLog>
  readonly find: (org: string, id: string) => Effect.Effect<EmailDetail | undefined, unknown, MessageLog>
  readonly at: (ms: number) => string
  readonly eventOf: (
    message: { readonly id: string; readonly organizationId: string },
    type: MailEvent.Type,
    recipient: string | null,
    occurredAt: string,
    extra?: Partial<MailEvent.Fields>
  ) => MailEvent.MailEvent
  readonly newMessage: (organizationId: string, overrides?: Partial<NewMessage>) => NewMessage
}

export const applyAllCases = ({ it, fresh, accept, find, at, eventOf, newMessage }: Fixtures): void => {
  const applyAll = (events: ReadonlyArray<MailEvent.MailEvent>) => Effect.flatMap(log, (l) => l.applyAll(events))

  it.effect("applyAll: the events of several messages at once, each answered in order, each applied once", () =>
    Effect.gen(function* () {
      const org = fresh()
      const [one, two] = [newMessage(org), newMessage(org, { tags: [] })]
      yield* accept(one)
      yield* accept(two)
      const bounced = eventOf(one, "bounced", "alice@example.com", at(2), { bounce: { kind: "hard" } })
      const events = [
        eventOf(one, "delivered", "alice@example.com", at(1)),
        bounced,
        eventOf(two, "delivered", "Bob@example.com", at(1)),
        eventOf({ id: makeId(), organizationId: org }, "delivered", "a@b.example", at(1)),
        { ...eventOf(two, "delivered", "carol@example.net", at(1)), organization_id: fresh() },
        bounced
      ]
      assert.deepStrictEqual(yield* applyAll(events), [
        { applied: true, found: true, tags: one.tags },
        { applied: true, found: true, tags: one.tags },
        { applied: true, found: true, tags: [] },
        { applied: false, found: false, tags: [] },
        { applied: false, found: false, tags: [] },
        { applied: false, found: true, tags: one.tags }
      ])
      const first = yield* find(org, one.id)
      assert.deepStrictEqual(
        first?.recipients.map((r) => r.state),
        ["bounced", "sending", "sending"],
        "a bounce after a delivery in the same call wins, as it would one call after the other"
      )
      assert.strictEqual(first?.recipients[0]?.detail, "hard bounce")
      assert.deepStrictEqual(first?.last_event, { type: "bounced", occurred_at: at(2) })
      assert.deepStrictEqual(
        first?.events.map((e) => e.type),
        ["delivered", "bounced"]
      )
      const second = yield* find(org, two.id)
      assert.deepStrictEqual(
        second?.recipients.map((r) => r.state),
        ["sending", "delivered", "sending"]
      )
      assert.strictEqual(second?.events.length, 1, "the event routed to another organisation is not in the history")
      assert.deepStrictEqual(yield* applyAll(events.slice(0, 3)), [
        { applied: false, found: true, tags: one.tags },
        { applied: false, found: true, tags: one.tags },
        { applied: false, found: true, tags: [] }
      ])
      assert.deepStrictEqual(yield* applyAll([]), [])
    })
  )

  it.effect("applyAll: out of order within one call, states still only move forward", () =>
    Effect.gen(function* () {
      const message = newMessage(fresh())
      yield* accept(message)
      yield* applyAll([
        eventOf(message, "complained", "alice@example.com", at(9)),
        eventOf(message, "delivered", "alice@example.com", at(4)),
        eventOf(message, "deferred", "Bob@Example.COM", at(3)),
        eventOf(message, "delivered", "Bob@Example.COM", at(5)),
        eventOf(message, "deferred", "Bob@Example.COM", at(6))
      ])
      const record = yield* find(message.organizationId, message.id)
      assert.deepStrictEqual(
        record?.recipients.map((r) => r.state),
        ["complained", "delivered", "sending"]
      )
      assert.deepStrictEqual(record?.last_event, { type: "complained", occurred_at: at(9) })
      assert.deepStrictEqual(
        record?.events.map((e) => e.occurred_at),
        [at(3), at(4), at(5), at(6), at(9)]
      )
    })
  )
}
