// A scheduled message at its time: claimed (so it leaves once, whichever instance looks), checked
// again against what may have changed (sender, suppressions, files), sent, and its outcome recorded.
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import type { OutboundAttachment } from "../EmailProvider.js"
import { isNotFound, type Unavailable } from "../MailroomError.js"
import type * as MessageLog from "../MessageLog.js"
import type { Organizations, Principal } from "../Organizations.js"
import { isProviderError } from "../ProviderError.js"
import type { Suppressions } from "../Suppressions.js"
import * as Wire from "../Wire.js"
import { normalizeAddress } from "./address.js"
import type { Delivery } from "./delivery.js"
import { providerKeyFor, retryLater } from "./scheduling.js"
import type * as SendAttachments from "./sendAttachments.js"
import * as SendRecord from "./sendRecord.js"
import { withSpan } from "./tracing.js"

/** What became of a look at a due message, as `MailroomMetrics.scheduledSends` counts it. */
export type Dispatched = "sent" | "failed" | "unknown" | "suppressed" | "skipped"

/** Which attempt of the queue this is: `last` when no other will follow. */
export interface Attempt {
  readonly attempts: number
  readonly last: boolean
}

const iso = (ms: number) => new Date(ms).toISOString()

// For as long as the queue would wait before its next look anyway: two minutes, every 2 s.
const untilAnswered = Schedule.spaced(Duration.seconds(2)).pipe(Schedule.upTo({ times: 60 }))
const decodeStored = Schema.decodeUnknownEffect(Schema.fromJsonString(Wire.SendEmailRequest))

/** A failure of a deleted file names it: the reason a user reads on the record. */
const reasonOf = (errors: ReadonlyArray<string>, request: Wire.SendEmailRequest) =>
  errors
    .map((error) => {
      const missing = /^attachments\[(\d+)\]\.key: no file has been uploaded/.exec(error)
      const attachment = missing === null ? undefined : request.attachments?.[Number(missing[1])]
      return attachment === undefined
        ? error
        : `attachments[${missing?.[1]}] (${attachment.filename}): the file ${attachment.key} no longer exists`
    })
    .join("; ")

export const make = (options: {
  readonly delivery: Delivery
  readonly attachments: ReturnType<typeof SendAttachments.make>
  readonly log: MessageLog.MessageLog
  readonly organizations: Organizations
  readonly suppressions: Suppressions
}) => {
  const { delivery, attachments, log, organizations, suppressions } = options
  const { provider } = delivery

  const failed = (id: string, reason: string, suppressed?: ReadonlyArray<string>) =>
    Effect.as(
      delivery.settle(id, {
        _tag: "Failed",
        provider: "mailroom",
        reason: `not sent at its scheduled time: ${reason}`,
        ...(suppressed === undefined ? {} : { suppressed })
      }),
      suppressed === undefined ? ("failed" as const) : ("suppressed" as const)
    )

  /** The recipients the record still sends to, without those suppressed since it was scheduled. */
  const addressed = (principal: Principal, request: Wire.SendEmailRequest, record: MessageLog.EmailRecord) =>
    Effect.map(
      suppressions.check(
        principal.orgId,
        record.recipients.filter((r) => r.state === "sending").map((r) => r.email)
      ),
      (found) => {
        const left = record.recipients.filter((r) => r.state !== "sending").map((r) => normalizeAddress(r.email))
        return SendRecord.withoutSuppressed(request, new Set([...found.map((s) => s.email), ...left]))
      }
    )

  /**
   * A claim this look holds, put back to `scheduled`, tried again while the database is out: left
   * `sending` with nobody sending it, the queue's next look would take it for a stopped instance's
   * and record it `unknown`, never sent.
   */
  const putBack = (id: string) => Effect.retry(log.release(id), untilAnswered)

  /**
   * A send that certainly did not reach the provider and may be tried again: the message goes back
   * to `scheduled` and the queue looks again later; at the last attempt it is `failed`.
   */
  const notNow = (id: string, attempt: Attempt, reason: string): Effect.Effect<Dispatched, Unavailable> =>
    attempt.last
      ? failed(id, `${reason} (after ${attempt.attempts} attempts)`)
      : Effect.andThen(putBack(id), Effect.fail(retryLater(`message ${id} will be tried again: ${reason}`)))

  /**
   * A claim the database did not confirm in time may still commit (its COMMIT was sent to a server
   * that stalled). Once the database answers, a claim of this look's own comes first: it waits for
   * one still being committed (it locks the row) and, taken, says the message was still scheduled
   * (put straight back). Not taken, a message whose `sending` recipients were moved at this look's
   * `at` is this look's claim (a look of the queue or the sweep claims at its own time, seconds
   * later), and is put back for the queue's next look.
   */
  const unclaim = (organizationId: string, id: string, at: string) =>
    Effect.retry(
      Effect.gen(function* () {
        if ((yield* log.claim(id, iso(yield* Clock.currentTimeMillis))) !== undefined) {
          return yield* Effect.asVoid(log.release(id))
        }
        const record = yield* log.find(organizationId, id)
        const sending = record?.recipients.filter((r) => r.state === "sending") ?? []
        const ours = record?.status === "sending" && sending.length > 0 && sending.every((r) => r.updated_at === at)
        if (ours) yield* log.release(id)
      }),
      untilAnswered
    )

  /**
   * What the message is now: its request, its organisation, its recipients. A check that fails for
   * good is the reason it is `failed`; one that could not be made (a store out of reach) fails.
   */
  const prepare = (claimed: MessageLog.Claimed) =>
    Effect.gen(function* () {
      const { record } = claimed
      const decoded = yield* Effect.exit(decodeStored(claimed.request))
      if (Exit.isFailure(decoded)) return { refused: "its stored request could not be read" }
      const request = decoded.value
      const principal = yield* Effect.catchIf(organizations.find(record.organization_id), isNotFound, () =>
        Effect.succeed(undefined)
      )
      if (principal === undefined) return { refused: "its organisation no longer exists" }
      const sender = yield* Effect.exit(delivery.checkSender(principal, request.from))
      const refused = Exit.findErrorOption(sender)
      if (refused._tag === "Some") {
        if (isProviderError(refused.value)) return { refused: refused.value.reason.message }
        return yield* refused.value
      }
      return { principal, request, to: yield* addressed(principal, request, record) }
    })

  const send = (claimed: MessageLog.Claimed, attempt: Attempt): Effect.Effect<Dispatched, Unavailable> => {
    const id = claimed.record.id
    return Effect.matchEffect(prepare(claimed), {
      onFailure: (error) => notNow(id, attempt, error.message),
      onSuccess: (prepared): Effect.Effect<Dispatched, Unavailable> => {
        if ("refused" in prepared) return failed(id, prepared.refused)
        const { principal, request, to } = prepared
        if (to.to.length + to.cc.length + to.bcc.length === 0) {
          return failed(id, "every recipient is on this organization's suppression list", to.suppressed)
        }
        return Effect.scoped(
          Effect.flatMap(Effect.exit(attachments.load(request)), (loaded) => {
            if (Exit.isSuccess(loaded)) return sendLoaded(principal, claimed.record, request, to, loaded.value, attempt)
            const error = Exit.findErrorOption(loaded)
            return error._tag === "Some" && error.value._tag === "ValidationError"
              ? failed(id, reasonOf(error.value.errors, request))
              : notNow(id, attempt, "the attachments could not be read from storage")
          })
        )
      }
    })
  }

  const sendLoaded = (
    principal: Principal,
    record: MessageLog.EmailRecord,
    request: Wire.SendEmailRequest,
    to: SendRecord.Addressed,
    loaded: ReadonlyArray<OutboundAttachment>,
    attempt: Attempt
  ): Effect.Effect<Dispatched, Unavailable> => {
    const key = providerKeyFor(record.id)
    const email = delivery.outbound(principal, record.id, request, to, loaded, key)
    return delivery.sendThen(email, undefined, (exit) => {
      const failure = Exit.findErrorOption(exit)
      if (
        failure._tag === "Some" &&
        failure.value.isRetryable &&
        !(failure.value.reason._tag === "Unavailable" && failure.value.reason.possiblySent)
      ) {
        return notNow(record.id, attempt, failure.value.reason.message)
      }
      const outcome = SendRecord.outcomeOf(provider.name, exit)
      const suppressed = to.suppressed.length === 0 ? {} : { suppressed: to.suppressed }
      return Effect.as(
        delivery.settle(record.id, { ...outcome, ...suppressed }),
        outcome._tag === "Sent"
          ? ("sent" as const)
          : outcome._tag === "Failed"
            ? ("failed" as const)
            : ("unknown" as const)
      )
    })
  }

  /**
   * A message left `sending` by an instance that stopped before recording the provider's answer. A
   * provider that de-duplicates by key takes it once more (the key is the same); any other may have
   * sent it, so it is `unknown`, never sent again by itself (nor is a send made at once, which keeps
   * no request). An answer recorded meanwhile stays: the log takes only the first.
   */
  const recover = (id: string, attempt: Attempt): Effect.Effect<Dispatched, Unavailable> => {
    const unknown = Effect.as(
      delivery.settle(id, {
        _tag: "Unknown",
        provider: provider.name,
        reason:
          "the instance sending it stopped before the provider answered; it may have been sent, so mailroom does not send it again"
      }),
      "unknown" as const
    )
    return provider.deduplicatesByKey === true
      ? Effect.flatMap(log.release(id), (released) => (released ? look(id, attempt, 1) : unknown))
      : unknown
  }

  const look = (
    id: string,
    attempt: Attempt,
    round: number,
    organizationId?: string
  ): Effect.Effect<Dispatched, Unavailable> =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => {
      const at = iso(now)
      const claim =
        organizationId === undefined
          ? log.claim(id, at)
          : Effect.tapError(log.claim(id, at), () => Effect.ignore(unclaim(organizationId, id, at)))
      return Effect.flatMap(claim, (claimed) =>
        claimed === undefined ? Effect.succeed("skipped" as const) : Effect.uninterruptible(send(claimed, attempt))
      )
    }).pipe(withSpan("Mailer.dispatch", { attributes: { "mailroom.message": id, round } }))

  /**
   * The queue's look at a message due at `due.scheduledAt`. Skipped when the message is not there
   * (yet: its record is written just after the queue was told, so the first attempts look again),
   * was moved to another time (its own look comes then), cancelled, or already on its way.
   */
  const dispatch = (due: MessageLog.Due, attempt: Attempt): Effect.Effect<Dispatched, Unavailable> =>
    Effect.gen(function* () {
      for (let round = 0; round < 2; round++) {
        const claimed = yield* look(due.id, attempt, round, due.organizationId)
        if (claimed !== "skipped") return claimed
        const record = yield* log.find(due.organizationId, due.id)
        if (record === undefined) {
          if (attempt.attempts < 3 && !attempt.last) return yield* retryLater(`message ${due.id} is not recorded yet`)
          return "skipped"
        }
        if (record.scheduled_at !== due.scheduledAt) return "skipped"
        if (record.status === "sending" && attempt.attempts > 1) return yield* recover(due.id, attempt)
        if (record.status !== "scheduled") return "skipped"
        // Due by the queue's clock (the database's), not yet by this one: wait out the difference.
        const wait = Date.parse(record.scheduled_at) - (yield* Clock.currentTimeMillis)
        yield* Effect.sleep(Duration.millis(Math.max(1, wait)))
      }
      return "skipped" as const
    })

  return {
    dispatch,
    /** The sweep's recovery of a message `sending` since long before: as a later attempt of its look. */
    recover: (id: string) => recover(id, { attempts: 2, last: false })
  }
}
