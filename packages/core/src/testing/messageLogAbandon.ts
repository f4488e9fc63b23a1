// MessageLogSuite's cases for `abandon`, the taking back of a send refused because its record was not
// confirmed in time. A log without it (one of your own) has none to run.
import type { Vitest } from "@effect/vitest"
import { assert } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { MessageLog, type NewMessage } from "../MessageLog.js"

type It = Vitest.MethodsNonLive<MessageLog>
type Accept = (m: NewMessage) => Effect.Effect<void, unknown, MessageLog>
type MakeMessage = (organizationId: string, overrides?: Partial<NewMessage>) => NewMessage

const log = MessageLog
const reason = "not sent: its record was not confirmed in time"

export const abandonCases = (it: It, fresh: () => string, accept: Accept, newMessage: MakeMessage): void => {
  const abandon = (id: string) =>
    Effect.flatMap(log, (l) =>
      l.abandon === undefined ? Effect.succeed(false) : Effect.as(l.abandon(id, reason), true)
    )
  const find = (org: string, id: string) => Effect.flatMap(log, (l) => l.find(org, id))

  it.effect("abandon: a record that landed is failed with the reason; none that did not is made", () =>
    Effect.gen(function* () {
      const org = fresh()
      const landed = newMessage(org)
      yield* accept(landed)
      const never = newMessage(org)
      if (!(yield* abandon(landed.id))) return
      yield* abandon(never.id)
      const record = yield* find(org, landed.id)
      assert.strictEqual(record?.status, "failed")
      assert.strictEqual(record?.reason, reason)
      assert.deepStrictEqual(
        record?.recipients.map((r) => r.state),
        landed.recipients.map(() => "failed")
      )
      assert.isUndefined(yield* find(org, never.id), "nothing is left of a record that never landed")
      assert.isUndefined(yield* find("", never.id))
      const page = yield* Effect.flatMap(log, (l) => l.list(org, { limit: 100 }))
      assert.deepStrictEqual(
        page.data.map((r) => r.id),
        [landed.id]
      )
      // The id stays free: a message accepted under it later is recorded as any other.
      yield* accept({ ...never, createdAt: landed.createdAt })
      assert.strictEqual((yield* find(org, never.id))?.status, "sending")
    })
  )

  it.effect("abandon: a message the provider already answered is left as it is", () =>
    Effect.gen(function* () {
      const org = fresh()
      const message = newMessage(org)
      yield* accept(message)
      yield* Effect.flatMap(log, (l) =>
        l.settle(message.id, { _tag: "Sent", provider: "suite", providerMessageId: `pm-${message.id}` })
      )
      if (!(yield* abandon(message.id))) return
      assert.strictEqual((yield* find(org, message.id))?.status, "sent")
    })
  )
}
