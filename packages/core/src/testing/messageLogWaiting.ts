// MessageLogSuite's cases for what the scheduled sends read and write: release, due, stalled and the
// backlog. They read every organisation's rows, so each asserts on its own messages only.
import type { Vitest } from "@effect/vitest"
import { assert } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { MessageLog, type NewMessage } from "../MessageLog.js"

type It = Vitest.MethodsNonLive<MessageLog>
type Accept = (m: NewMessage) => Effect.Effect<void, unknown, MessageLog>
type MakeMessage = (organizationId: string, overrides?: Partial<NewMessage>) => NewMessage

const log = MessageLog

export const waitingCases = (it: It, fresh: () => string, accept: Accept, newMessage: MakeMessage): void => {
  const scheduled = (org: string, when: string) =>
    newMessage(org, {
      recipients: [
        { email: "alice@example.com", kind: "to", state: "scheduled" },
        { email: "bob@example.com", kind: "to", state: "scheduled" }
      ],
      scheduledAt: when,
      request: JSON.stringify({ subject: "later" })
    })
  const find = (org: string, id: string) => Effect.flatMap(log, (l) => l.find(org, id))
  const claim = (id: string, now: string) => Effect.flatMap(log, (l) => l.claim(id, now))
  const release = (id: string) => Effect.flatMap(log, (l) => l.release(id))
  const sent = (id: string) =>
    Effect.flatMap(log, (l) => l.settle(id, { _tag: "Sent", provider: "suite", providerMessageId: `pm-${id}` }))

  it.effect("a claimed message released is scheduled again, its request kept, and claimed once more", () =>
    Effect.gen(function* () {
      const org = fresh()
      const message = scheduled(org, "2026-05-01T10:00:00.000Z")
      yield* accept(message)
      assert.isFalse(yield* release(message.id), "a message not claimed is not released")
      assert.isDefined(yield* claim(message.id, "2026-05-01T10:00:00.000Z"))
      assert.isTrue(yield* release(message.id))
      assert.strictEqual((yield* find(org, message.id))?.status, "scheduled")
      const again = yield* claim(message.id, "2026-05-01T10:00:01.000Z")
      assert.strictEqual(again?.request, message.request)
      yield* sent(message.id)
      assert.isFalse(yield* release(message.id), "a settled message is not released")
      const direct = newMessage(org)
      yield* accept(direct)
      assert.isFalse(yield* release(direct.id), "a send made at once keeps no request to send again")
      assert.strictEqual((yield* find(org, direct.id))?.status, "sending")
    })
  )

  it.effect("a send whose outcome names suppressed recipients leaves them suppressed, the others sent", () =>
    Effect.gen(function* () {
      const org = fresh()
      const message = scheduled(org, "2026-05-01T10:00:00.000Z")
      yield* accept(message)
      yield* claim(message.id, "2026-05-01T10:00:00.000Z")
      yield* Effect.flatMap(log, (l) =>
        l.settle(message.id, {
          _tag: "Sent",
          provider: "suite",
          providerMessageId: "pm",
          suppressed: ["bob@example.com"]
        })
      )
      const record = yield* find(org, message.id)
      assert.deepStrictEqual(
        record?.recipients.map((r) => [r.email, r.state]),
        [
          ["alice@example.com", "sent"],
          ["bob@example.com", "suppressed"]
        ]
      )
      assert.strictEqual(record?.status, "sent")
    })
  )

  it.effect("the provider's answer is recorded once: a late second one (a recovered send) changes nothing", () =>
    Effect.gen(function* () {
      const org = fresh()
      const message = newMessage(org)
      yield* accept(message)
      yield* Effect.flatMap(log, (l) =>
        l.settle(message.id, { _tag: "Unknown", provider: "suite", reason: "its instance stopped" })
      )
      yield* sent(message.id)
      const record = yield* find(org, message.id)
      assert.strictEqual(record?.status, "unknown")
      assert.strictEqual(record?.reason, "its instance stopped")
      assert.isNull(record?.provider_message_id ?? null)
    })
  )

  it.effect("due lists the scheduled messages whose time has come, oldest first, and not the others", () =>
    Effect.gen(function* () {
      const org = fresh()
      const first = scheduled(org, "2002-01-01T00:00:00.000Z")
      const second = scheduled(org, "2002-01-01T00:00:01.000Z")
      const later = scheduled(org, "2002-01-01T00:00:03.000Z")
      const cancelled = scheduled(org, "2002-01-01T00:00:00.500Z")
      for (const m of [later, second, first, cancelled]) yield* accept(m)
      yield* Effect.flatMap(log, (l) => l.cancel(org, cancelled.id))
      const due = yield* Effect.flatMap(log, (l) => l.due("2002-01-01T00:00:02.000Z", 1000))
      const ours = due.filter((d) => d.organizationId === org)
      assert.deepStrictEqual(ours, [
        { id: first.id, organizationId: org, scheduledAt: first.scheduledAt },
        { id: second.id, organizationId: org, scheduledAt: second.scheduledAt }
      ])
      const one = yield* Effect.flatMap(log, (l) => l.due("2002-01-01T00:00:02.000Z", 1))
      assert.strictEqual(one.length, 1, "at most limit")
      // Claimed and sent, so no later run of the suite on this database finds them due.
      for (const m of [first, second, later]) {
        yield* claim(m.id, "2002-01-01T00:00:03.000Z")
        yield* sent(m.id)
      }
      const after = yield* Effect.flatMap(log, (l) => l.due("2002-01-01T00:00:09.000Z", 1000))
      assert.isFalse(
        after.some((d) => d.organizationId === org),
        "a claimed message is not due"
      )
    })
  )

  it.effect("stalled lists the messages still sending since before a time, claimed or sent at once", () =>
    Effect.gen(function* () {
      const org = fresh()
      const direct = newMessage(org, { createdAt: "2002-03-01T00:00:00.000Z" })
      const recent = newMessage(org, { createdAt: "2002-03-01T00:10:00.000Z" })
      const claimedEarly = scheduled(org, "2002-03-01T00:00:00.000Z")
      const claimedLate = scheduled(org, "2002-03-01T00:00:00.000Z")
      for (const m of [direct, recent, claimedEarly, claimedLate]) yield* accept(m)
      yield* claim(claimedEarly.id, "2002-03-01T00:01:00.000Z")
      yield* claim(claimedLate.id, "2002-03-01T00:20:00.000Z")
      const stalled = yield* Effect.flatMap(log, (l) => l.stalled("2002-03-01T00:05:00.000Z", 1000))
      const ours = stalled.filter((id) => [direct, recent, claimedEarly, claimedLate].some((m) => m.id === id))
      assert.deepStrictEqual(ours, [direct.id, claimedEarly.id], "by when they began sending")
      for (const m of [direct, recent, claimedEarly, claimedLate]) yield* sent(m.id)
      const settled = yield* Effect.flatMap(log, (l) => l.stalled("2002-03-01T01:00:00.000Z", 1000))
      assert.isFalse(settled.some((id) => [direct, recent, claimedEarly, claimedLate].some((m) => m.id === id)))
    })
  )

  it.effect("the backlog counts the scheduled messages and names the oldest that is due", () =>
    Effect.gen(function* () {
      const org = fresh()
      const before = yield* Effect.flatMap(log, (l) => l.backlog("2000-01-01T00:00:00.000Z"))
      const old = scheduled(org, "2000-01-01T00:00:00.000Z")
      const future = scheduled(org, "2100-01-01T00:00:00.000Z")
      yield* accept(old)
      yield* accept(future)
      const now = yield* Effect.flatMap(log, (l) => l.backlog("2000-01-01T00:00:01.000Z"))
      assert.strictEqual(now.scheduled, before.scheduled + 2)
      assert.strictEqual(now.oldestDue, "2000-01-01T00:00:00.000Z")
      yield* Effect.flatMap(log, (l) => l.cancel(org, future.id))
      yield* claim(old.id, "2000-01-01T00:00:01.000Z")
      yield* sent(old.id)
      const after = yield* Effect.flatMap(log, (l) => l.backlog("2000-01-01T00:00:01.000Z"))
      assert.strictEqual(after.scheduled, before.scheduled)
      assert.notStrictEqual(after.oldestDue, "2000-01-01T00:00:00.000Z")
    })
  )
}
