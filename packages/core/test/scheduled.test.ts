// Sending later on the memory layers with a TestClock: a scheduled message leaves at its time, once;
// everything checkable is checked when it is scheduled; cancel and reschedule; what changes meanwhile.
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import {
  Attachments,
  EmailProvider,
  Mailer,
  MailroomError,
  MessageLog,
  ProviderError,
  Suppressions,
  type Wire
} from "../src/index.js"
import { acme, globex } from "./fixtures.js"
import { at, inWorld, until, world } from "./scheduling.js"

const request = (overrides: Record<string, unknown> = {}) => ({
  from: "billing@acme.example",
  to: ["alice@example.com", "bob@example.com"],
  subject: "Your invoice",
  body: { text: "See attached." },
  scheduled_at: at("1 hour"),
  ...overrides
})

const mailer = Mailer.Mailer
const schedule = (overrides: Record<string, unknown> = {}, principal = acme) =>
  Effect.flatMap(
    mailer,
    (m) =>
      m.send(principal, request(overrides) as never) as unknown as Effect.Effect<
        Mailer.SendOutcome<Wire.ScheduledEmailResponse>,
        Mailer.SendError
      >
  )
const record = (id: string, principal = acme) =>
  Effect.flatMap(MessageLog.MessageLog, (log) => log.find(principal.orgId, id))

const statusIs = (id: string, status: MessageLog.State) => Effect.map(record(id), (r) => r?.status === status)

const refusal = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.flip(effect)

describe("scheduled sends", () => {
  it.effect("a message scheduled an hour ahead is not sent before its time, and is sent once at it", () => {
    const w = world()
    return inWorld(
      w,
      Effect.gen(function* () {
        const { response } = yield* schedule({ tags: [{ name: "kind", value: "invoice" }] })
        assert.deepStrictEqual(response, {
          message_id: response.message_id,
          status: "scheduled",
          scheduled_at: at("1 hour")
        })
        const waiting = yield* record(response.message_id)
        assert.strictEqual(waiting?.status, "scheduled")
        assert.strictEqual(waiting?.scheduled_at, at("1 hour"))
        yield* TestClock.adjust("59 minutes")
        yield* Effect.yieldNow
        assert.strictEqual(w.provider.sent.length, 0, "not before its time")
        yield* TestClock.adjust("1 minute")
        yield* until("sent", statusIs(response.message_id, "sent"))
        assert.strictEqual(w.provider.sent.length, 1)
        const sent = w.provider.sent[0]?.email
        assert.deepStrictEqual(sent?.to, ["alice@example.com", "bob@example.com"])
        assert.strictEqual(sent?.subject, "Your invoice")
        assert.deepStrictEqual(sent?.tags, [{ name: "kind", value: "invoice" }])
        assert.strictEqual(sent?.idempotencyKey, `mailroom-${response.message_id}`)
        yield* TestClock.adjust("1 day")
        yield* Effect.yieldNow
        assert.strictEqual(w.provider.sent.length, 1, "once")
      })
    )
  })

  it.effect(
    "a time in the past, too soon, too far or malformed is refused naming scheduled_at; nothing is recorded",
    () => {
      const w = world()
      return inWorld(
        w,
        Effect.gen(function* () {
          for (const [when, message] of [
            [at("-1 minute"), "scheduled_at: must be at least 1 second in the future"],
            [at("500 millis"), "scheduled_at: must be at least 1 second in the future"],
            [at("30 days"), undefined],
            [
              new Date(Date.parse(at("30 days")) + 1).toISOString(),
              "scheduled_at: must be at most 30 days in the future"
            ],
            [
              "2026-05-01 10:00:00Z",
              "scheduled_at: must be an RFC 3339 date-time with an offset, such as 2026-05-01T09:00:00Z"
            ],
            [
              "2026-05-01T10:00:00",
              "scheduled_at: must be an RFC 3339 date-time with an offset, such as 2026-05-01T09:00:00Z"
            ]
          ] as const) {
            const outcome = yield* Effect.result(schedule({ scheduled_at: when }))
            if (message === undefined) {
              assert.strictEqual(outcome._tag, "Success", when)
              continue
            }
            assert.strictEqual(outcome._tag, "Failure", when)
            const error = outcome._tag === "Failure" ? outcome.failure : undefined
            assert.isTrue(MailroomError.isValidationError(error), when)
            assert.include((error as MailroomError.ValidationError).errors, message)
          }
          const listed = yield* Effect.flatMap(MessageLog.MessageLog, (log) => log.list(acme.orgId, { limit: 10 }))
          assert.strictEqual(listed.data.length, 1, "only the one 30 days ahead")
          const backlog = yield* Effect.flatMap(MessageLog.MessageLog, (log) => log.backlog(at("0 seconds")))
          assert.strictEqual(backlog.scheduled, 1)
        })
      )
    }
  )

  it.effect("what can be checked now is: the sender, every file's key, the suppression list", () => {
    const w = world()
    return inWorld(
      w,
      Effect.gen(function* () {
        const sender = yield* refusal(schedule({ from: "x@unverified.example" }))
        assert.isTrue(ProviderError.isProviderError(sender) && sender.reason._tag === "SenderNotVerified")
        const missing = yield* refusal(
          schedule({ attachments: [{ filename: "a.pdf", key: "attachments/org_acme/1_00000000000000000000-a.pdf" }] })
        )
        assert.deepStrictEqual((missing as MailroomError.ValidationError).errors, [
          "attachments[0].key: no file has been uploaded under this key"
        ])
        const foreign = yield* refusal(
          schedule({ attachments: [{ filename: "a.pdf", key: "attachments/org_globex/x" }] })
        )
        assert.deepStrictEqual((foreign as MailroomError.ValidationError).errors, [
          "attachments[0].key: is not an attachment of this organization"
        ])
        yield* Effect.flatMap(Suppressions.Suppressions, (s) =>
          s.add(acme.orgId, [{ email: "bob@example.com", reason: "manual" }], at("0 seconds"))
        )
        const { response } = yield* schedule()
        assert.deepStrictEqual(response.suppressed, ["bob@example.com"])
        const everyone = yield* refusal(schedule({ to: ["bob@example.com"] }))
        assert.isTrue(ProviderError.isProviderError(everyone) && everyone.reason._tag === "RecipientSuppressed")
        const inProcess = yield* refusal(
          Effect.flatMap(mailer, (m) =>
            m.sendInProcess(acme, request({ attachments: [{ filename: "a.txt", content: "hi" }] }) as never)
          )
        )
        assert.deepStrictEqual((inProcess as MailroomError.ValidationError).errors, [
          "attachments[0].content: a scheduled message takes stored files only (key)"
        ])
        const listed = yield* Effect.flatMap(MessageLog.MessageLog, (log) => log.list(acme.orgId, { limit: 10 }))
        assert.strictEqual(listed.data.length, 1, "only the valid one is recorded")
      })
    )
  })

  it.effect("a cancelled message never leaves; cancel answers 409 once it has, 404 for another's or none", () => {
    const w = world()
    return inWorld(
      w,
      Effect.gen(function* () {
        const m = yield* mailer
        const kept = (yield* schedule()).response.message_id
        const cancelled = (yield* schedule({ subject: "Never" })).response.message_id
        assert.deepStrictEqual(yield* m.cancel(acme, cancelled), { message_id: cancelled, status: "cancelled" })
        assert.deepStrictEqual(yield* m.cancel(acme, cancelled.toUpperCase()), {
          message_id: cancelled,
          status: "cancelled"
        })
        for (const [principal, id] of [
          [globex, kept],
          [acme, MessageLog.makeId()],
          [acme, "not-an-id"]
        ] as const) {
          assert.isTrue(MailroomError.isNotFound(yield* refusal(m.cancel(principal, id))), `${principal.orgId} ${id}`)
        }
        yield* TestClock.adjust("1 hour")
        yield* until("sent", statusIs(kept, "sent"))
        assert.deepStrictEqual(
          w.provider.sent.map((s) => s.email.subject),
          ["Your invoice"]
        )
        assert.strictEqual((yield* record(cancelled))?.status, "cancelled")
        const late = yield* refusal(m.cancel(acme, kept))
        assert.isTrue(MailroomError.isConflict(late))
        assert.include((late as MailroomError.Conflict).message, "already started to send (status sent)")
      })
    )
  })

  it.effect("a rescheduled message leaves at its new time only, later or sooner", () => {
    const w = world()
    return inWorld(
      w,
      Effect.gen(function* () {
        const m = yield* mailer
        const later = (yield* schedule({ subject: "later" })).response.message_id
        const sooner = (yield* schedule({ subject: "sooner" })).response.message_id
        assert.deepStrictEqual(yield* m.reschedule(acme, later, { scheduled_at: "2026-05-01T13:00:00+02:00" }), {
          message_id: later,
          status: "scheduled",
          scheduled_at: at("2 hours")
        })
        yield* m.reschedule(acme, sooner, { scheduled_at: at("10 minutes") })
        const problems = yield* refusal(m.reschedule(acme, later, { scheduled_at: at("-1 second") }))
        assert.deepStrictEqual((problems as MailroomError.ValidationError).errors, [
          "scheduled_at: must be at least 1 second in the future"
        ])
        const missing = yield* refusal(m.reschedule(acme, later, {} as never))
        assert.deepStrictEqual((missing as MailroomError.ValidationError).errors, ["scheduled_at: is required"])
        assert.isTrue(
          MailroomError.isNotFound(yield* refusal(m.reschedule(globex, later, { scheduled_at: at("3 hours") })))
        )
        yield* TestClock.adjust("10 minutes")
        yield* until("sooner sent", statusIs(sooner, "sent"))
        yield* TestClock.adjust("50 minutes")
        yield* Effect.yieldNow
        assert.deepStrictEqual(
          w.provider.sent.map((s) => s.email.subject),
          ["sooner"],
          "nothing at the old time"
        )
        yield* TestClock.adjust("1 hour")
        yield* until("later sent", statusIs(later, "sent"))
        assert.deepStrictEqual(
          w.provider.sent.map((s) => s.email.subject),
          ["sooner", "later"]
        )
        const conflict = yield* refusal(m.reschedule(acme, later, { scheduled_at: at("3 hours") }))
        assert.isTrue(MailroomError.isConflict(conflict))
      })
    )
  })

  it.effect("at its time the list is read again: a recipient suppressed meanwhile is dropped, and recorded so", () => {
    const w = world()
    return inWorld(
      w,
      Effect.gen(function* () {
        const some = (yield* schedule()).response.message_id
        const all = (yield* schedule({ to: ["bob@example.com"], subject: "bob only" })).response.message_id
        yield* Effect.flatMap(Suppressions.Suppressions, (s) =>
          s.add(acme.orgId, [{ email: "bob@EXAMPLE.com", reason: "bounced" }], at("1 minute"))
        )
        yield* TestClock.adjust("1 hour")
        yield* until("sent", statusIs(some, "sent"))
        yield* Effect.yieldNow
        yield* until("suppressed", statusIs(all, "suppressed"))
        assert.deepStrictEqual(
          w.provider.sent.map((s) => s.email.to),
          [["alice@example.com"]]
        )
        assert.deepStrictEqual(
          (yield* record(some))?.recipients.map((r) => [r.email, r.state]),
          [
            ["alice@example.com", "sent"],
            ["bob@example.com", "suppressed"]
          ]
        )
      })
    )
  })

  it.effect("a file deleted before the message's time makes it failed, with a reason naming the file", () => {
    const w = world()
    return inWorld(
      w,
      Effect.gen(function* () {
        const attachments = yield* Attachments.Attachments
        const { key, url } = yield* attachments.presign(acme, {
          filename: "invoice.pdf",
          content_type: "application/pdf"
        })
        yield* Effect.promise(() =>
          w.store.fetch(url, { method: "PUT", headers: { "content-type": "application/pdf" }, body: "%PDF" })
        )
        const id = (yield* schedule({ attachments: [{ filename: "invoice.pdf", key }] })).response.message_id
        assert.deepStrictEqual(
          (yield* record(id))?.attachments.map((a) => [a.filename, a.size, a.key]),
          [["invoice.pdf", 4, key]]
        )
        yield* attachments.delete(acme, key)
        yield* TestClock.adjust("1 hour")
        yield* until("failed", statusIs(id, "failed"))
        assert.strictEqual(w.provider.sent.length, 0)
        assert.strictEqual(
          (yield* record(id))?.reason,
          `not sent at its scheduled time: attachments[0] (invoice.pdf): the file ${key} no longer exists`
        )
      })
    )
  })

  it.effect("an Idempotency-Key replays the first answer of a scheduled send, and schedules it once", () => {
    const w = world()
    return inWorld(
      w,
      Effect.gen(function* () {
        const m = yield* mailer
        const first = yield* m.send(acme, request() as never, { idempotencyKey: "k1" })
        const again = yield* m.send(acme, request() as never, { idempotencyKey: "k1" })
        assert.isTrue(again.replayed)
        assert.deepStrictEqual(again.response, first.response)
        yield* TestClock.adjust("1 hour")
        yield* until("sent", statusIs(first.response.message_id, "sent"))
        assert.strictEqual(w.provider.sent.length, 1)
      })
    )
  })

  it.effect("the scheduled items of a batch under one Idempotency-Key each leave, under keys of their own", () => {
    // As Resend does: a second send under a key it has seen is answered as the first, and not sent.
    const memory = EmailProvider.makeMemory()
    const seen = new Map<string, string>()
    const provider: EmailProvider.EmailProvider = {
      ...memory,
      deduplicatesByKey: true,
      send: (email) => {
        const earlier = email.idempotencyKey === undefined ? undefined : seen.get(email.idempotencyKey)
        if (earlier !== undefined) return Effect.succeed({ messageId: earlier })
        return Effect.map(memory.send(email), (answer) => {
          if (email.idempotencyKey !== undefined) seen.set(email.idempotencyKey, answer.messageId)
          return answer
        })
      }
    }
    const w = world({ provider })
    return inWorld(
      w,
      Effect.gen(function* () {
        const m = yield* mailer
        const items = ["First", "Second", "Third"].map((subject) => request({ subject }))
        const { response } = yield* m.sendBatch(acme, items, { idempotencyKey: "batch-later" })
        assert.deepStrictEqual(
          response.data.map((d) => d.status),
          ["scheduled", "scheduled", "scheduled"]
        )
        yield* TestClock.adjust("1 hour")
        for (const d of response.data) yield* until("sent", statusIs(d.message_id, "sent"))
        assert.deepStrictEqual(memory.sent.map((s) => s.email.subject).sort(), ["First", "Second", "Third"])
        assert.strictEqual(new Set(memory.sent.map((s) => s.email.idempotencyKey)).size, 3)
      })
    )
  })
})
