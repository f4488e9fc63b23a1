// Sending later: a scheduled send checked now and recorded with its request, cancel and reschedule
// while it waits, and the send at its time, which claims the record first so that it leaves once.
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { Conflict, NotFound, Unavailable, ValidationError } from "../MailroomError.js"
import type * as MessageLog from "../MessageLog.js"
import { makeId } from "../MessageLog.js"
import type { ObjectStoreError } from "../ObjectStore.js"
import type { Principal } from "../Organizations.js"
import type { ProviderError } from "../ProviderError.js"
import * as Wire from "../Wire.js"
import type { Delivery } from "./delivery.js"
import type * as SendAttachments from "./sendAttachments.js"
import * as SendExtras from "./sendExtras.js"
import type { SendQueue } from "./sendQueueService.js"
import * as SendRecord from "./sendRecord.js"
import { maxScheduleLeadMillis, minScheduleLeadMillis } from "./wireSchedule.js"

type Request = Wire.InProcessSendRequest

const isMessageId = Schema.is(Wire.MessageId)
const iso = (ms: number) => new Date(ms).toISOString()

/** Why `scheduledAt` (UTC ISO) cannot be a message's time at `now`, if it cannot. */
export const scheduleProblem = (scheduledAt: string, now: number): string | undefined => {
  const lead = Date.parse(scheduledAt) - now
  if (lead < minScheduleLeadMillis) return "scheduled_at: must be at least 1 second in the future"
  if (lead > maxScheduleLeadMillis) return "scheduled_at: must be at most 30 days in the future"
  return undefined
}

const noSuchEmail = (id: string) =>
  new NotFound({ message: isMessageId(id) ? `no email with id ${id}` : "no email with this id" })

export const make = (options: {
  readonly delivery: Delivery
  readonly attachments: ReturnType<typeof SendAttachments.make>
  readonly log: MessageLog.MessageLog
  readonly queue: SendQueue
}) => {
  const { delivery, attachments, log, queue } = options
  const decodeReschedule = Wire.decode(Wire.RescheduleRequest)

  /** The request as it is kept until the message leaves: the wire's fields, without its time. */
  const stored = (request: Request) => {
    const { scheduled_at: _, ...rest } = request
    return JSON.stringify(rest)
  }

  /**
   * Everything that can be checked now is: the time, the fields, the provider's limits, each
   * attachment's key and size, the sender, the suppression list. Then the queue is told when to
   * look, and only then is the record written: a look at a record never written finds nothing.
   */
  const schedule = (
    principal: Principal,
    request: Request,
    scheduledAt: string,
    idempotencyKey: string | undefined
  ): Effect.Effect<Wire.ScheduledEmailResponse, ValidationError | Unavailable | ProviderError | ObjectStoreError> =>
    Effect.gen(function* () {
      const problems = attachments.staticProblems(principal, request)
      const timing = scheduleProblem(scheduledAt, yield* Clock.currentTimeMillis)
      if (timing !== undefined) problems.errors.unshift(timing)
      ;(request.attachments ?? []).forEach((a, i) => {
        if (a.content !== undefined) {
          problems.errors.push(`attachments[${i}].content: a scheduled message takes stored files only (key)`)
        }
      })
      problems.errors.push(...SendExtras.problems(request, delivery.provider.limits))
      const infos = yield* attachments.report(request, problems)
      yield* delivery.checkSender(principal, request.from)
      const addressed = yield* delivery.address(principal, request)
      const id = makeId()
      yield* queue.offer({ id, organizationId: principal.orgId, scheduledAt })
      yield* log.accept(
        SendRecord.newMessage({
          id,
          organizationId: principal.orgId,
          createdAt: iso(yield* Clock.currentTimeMillis),
          request,
          addressed,
          attachments: (request.attachments ?? []).map((a, i) => SendRecord.storedAttachment(a, infos[i])),
          idempotencyKey,
          scheduledAt,
          stored: stored(request)
        })
      )
      return {
        message_id: id,
        status: "scheduled" as const,
        scheduled_at: scheduledAt,
        ...(addressed.suppressed.length === 0 ? {} : { suppressed: addressed.suppressed })
      }
    })

  const cancel = (
    principal: Principal,
    id: string
  ): Effect.Effect<Wire.CancelResponse, NotFound | Conflict | Unavailable> =>
    isMessageId(id)
      ? Effect.flatMap(
          log.cancel(principal.orgId, id.toLowerCase()),
          (refused): Effect.Effect<Wire.CancelResponse, NotFound | Conflict> => {
            const cancelled = { message_id: id.toLowerCase(), status: "cancelled" as const }
            if (refused === undefined) return Effect.succeed(cancelled)
            if (refused._tag === "NotFound") return Effect.fail(noSuchEmail(id))
            // A cancel retried after its answer was lost finds its own work done.
            if (refused.status === "cancelled") return Effect.succeed(cancelled)
            return Effect.fail(
              new Conflict({
                message: `the message has already started to send (status ${refused.status}); it can no longer be cancelled`
              })
            )
          }
        )
      : Effect.fail(noSuchEmail(id))

  const reschedule = (
    principal: Principal,
    id: string,
    body: unknown
  ): Effect.Effect<Wire.ScheduledEmailResponse, ValidationError | NotFound | Conflict | Unavailable> =>
    Effect.gen(function* () {
      const { scheduled_at } = yield* decodeReschedule(body)
      const problem = scheduleProblem(scheduled_at, yield* Clock.currentTimeMillis)
      if (problem !== undefined) return yield* new ValidationError({ errors: [problem] })
      if (!isMessageId(id)) return yield* noSuchEmail(id)
      const messageId = id.toLowerCase()
      const notScheduled = (status: MessageLog.State) =>
        new Conflict({
          message:
            status === "cancelled"
              ? "the message is cancelled; it can no longer be rescheduled"
              : `the message has already started to send (status ${status}); it can no longer be rescheduled`
        })
      const record = yield* log.find(principal.orgId, messageId)
      if (record === undefined) return yield* noSuchEmail(id)
      if (record.status !== "scheduled") return yield* notScheduled(record.status)
      // The queue first: if the record then cannot be moved, the look at the new time finds it elsewhere.
      yield* queue.offer({ id: messageId, organizationId: principal.orgId, scheduledAt: scheduled_at })
      const refused = yield* log.reschedule(principal.orgId, messageId, scheduled_at)
      if (refused?._tag === "NotFound") return yield* noSuchEmail(id)
      if (refused?._tag === "NotScheduled") return yield* notScheduled(refused.status)
      return { message_id: messageId, status: "scheduled" as const, scheduled_at }
    })

  return { schedule, cancel, reschedule }
}

/**
 * The provider key of a scheduled message: its id's, never the caller's Idempotency-Key's, which
 * every scheduled item of a batch shares (a provider de-duplicating by key would send one of them).
 * The Idempotency-Key has done its work once the message is recorded: a retry replays the answer.
 */
export const providerKeyFor = (id: string): string => `mailroom-${id}`

export const retryLater = (message: string): Unavailable =>
  new Unavailable({ message, retryAfter: Duration.seconds(1) })
