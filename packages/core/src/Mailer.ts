// The send operations of the API: validates a request, applies the organisation's sender domains and
// the provider's limits, sends now (bounded retries) or schedules, sends batches, honours Idempotency-Key.
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { EmailProvider, type OutboundAttachment } from "./EmailProvider.js"
import { IdempotencyStore } from "./IdempotencyStore.js"
import * as Batch from "./internal/batch.js"
import * as Delivery from "./internal/delivery.js"
import * as Dispatch from "./internal/dispatch.js"
import * as Idempotent from "./internal/idempotent.js"
import * as Scheduling from "./internal/scheduling.js"
import * as SendAttachments from "./internal/sendAttachments.js"
import * as SendExtras from "./internal/sendExtras.js"
import { type Attempt, SendQueue } from "./internal/sendQueueService.js"
import * as SendRecord from "./internal/sendRecord.js"
import * as Shutdown from "./internal/shutdown.js"
import { withSpan } from "./internal/tracing.js"
import { type Conflict, type NotFound, type Unavailable, ValidationError } from "./MailroomError.js"
import * as MailroomMetrics from "./MailroomMetrics.js"
import * as MessageLog from "./MessageLog.js"
import { ObjectStore, type ObjectStoreError } from "./ObjectStore.js"
import { Organizations, type Principal } from "./Organizations.js"
import type { ProviderError } from "./ProviderError.js"
import { SendRateLimiter } from "./SendRateLimiter.js"
import { Suppressions } from "./Suppressions.js"
import * as Wire from "./Wire.js"

/** How a send is retried when the provider certainly did not take it. */
export interface RetryPolicy {
  /** Attempts in all, the first included. Default 3. */
  readonly maxAttempts?: number
  /** Delay before the first retry, doubled each time, with jitter. Default 250 ms. */
  readonly baseDelay?: Duration.Input
  /** No single wait is longer; a provider asking for a longer Retry-After gets the error back instead. Default 5 s. */
  readonly maxDelay?: Duration.Input
}

/** The send's retries and the attachment bytes sends may hold at once. */
export interface Config {
  readonly retry?: RetryPolicy
  /**
   * Bytes that sends may hold in memory at once for their attachments, each file counted as the
   * provider holds it (`Limits.heldPerAttachmentByte`): by default its bytes and their base64 in the
   * message being composed (about 2.33 times the file), its bytes alone for one that streams them.
   * A send that would go over waits for room; one larger than the whole budget waits until it has
   * the budget to itself. Default 256 MiB: about 109 MB of attachments at once by default.
   */
  readonly attachmentBytesInFlight?: number
  /** How long a send waits for that room before it fails with `Unavailable` (503, Retry-After). Default 10 s. */
  readonly attachmentBudgetWait?: Duration.Input
  /**
   * Items of one batch sent at once (each under the rate limiter, as a single send is). Default 32:
   * below the 16 connections a client sends single requests over, a batch of 100 is slower than they are.
   */
  readonly batchConcurrency?: number
  /**
   * Aborted by the host when it stops waiting for sends (its shutdown grace period is over): a send
   * still running then fails as `Unavailable` at once, possibly sent when the provider had the message
   * (its Idempotency-Key is recorded as uncertain), nothing sent when it had not (the key is released).
   * Default: none, sends run to their end.
   */
  readonly shutdown?: AbortSignal
}

/** The attachment bytes sends may hold in memory at once by default: 256 MiB. */
export const defaultAttachmentBytesInFlight = 256 * 1024 * 1024

/** A send's options: its Idempotency-Key. */
export interface SendOptions {
  /** Same key and same request within 24 h: the first response again, nothing sent. */
  readonly idempotencyKey?: string
}

/** A send's answer, and whether it was replayed. */
export interface SendOutcome<A = Wire.SendEmailResponse | Wire.ScheduledEmailResponse> {
  /** The message as sent (201), or, with `scheduled_at`, as scheduled (202: `status: "scheduled"`). */
  readonly response: A
  /** True when this is the stored response of an earlier request with the same Idempotency-Key. */
  readonly replayed: boolean
}

/**
 * The answer a request gets: a request without `scheduled_at` is sent (`SendEmailResponse`), one with
 * it is scheduled (`ScheduledEmailResponse`); either, when its type does not say.
 */
export type ResponseOf<R> = [R] extends [never]
  ? Wire.SendEmailResponse
  : "scheduled_at" extends keyof R
    ? [R] extends [{ readonly scheduled_at: string }]
      ? Wire.ScheduledEmailResponse
      : Wire.SendEmailResponse | Wire.ScheduledEmailResponse
    : Wire.SendEmailResponse

/** A batch's answer, and whether it was replayed. */
export interface BatchOutcome {
  /** Each item by its index: accepted in `data`, refused in `errors`. */
  readonly response: Wire.SendBatchResponse
  /** True when this is the stored response of an earlier batch with the same Idempotency-Key. */
  readonly replayed: boolean
}

/** `Unavailable` when the sender domains or the Idempotency-Key cannot be looked up (their store is down). */
export type SendError = ValidationError | ProviderError | Conflict | ObjectStoreError | Unavailable

/** The send operation of both API variants, and in-process sends. */
export interface Mailer {
  /**
   * The API's `POST /emails`: attachments are stored files, named by key. With `scheduled_at` the
   * message is checked now (fields, sender, suppressions, each file's key and size), recorded
   * `scheduled` with its request, and sent at its time by the send queue's worker.
   */
  readonly send: <R extends typeof Wire.SendEmailRequest.Encoded>(
    principal: Principal,
    request: R,
    options?: SendOptions
  ) => Effect.Effect<SendOutcome<ResponseOf<R>>, SendError>
  /**
   * For in-process callers: as `send`, and an attachment may instead carry the bytes the caller
   * holds, `{ filename, content, content_type? }`, checked against the same limits (size after
   * base64, forbidden extensions) and counted in the same memory budget. The response's
   * `attachments` lists the keys of stored files only. A scheduled message takes stored files only.
   */
  readonly sendInProcess: <R extends typeof Wire.InProcessSendRequest.Encoded>(
    principal: Principal,
    request: R,
    options?: SendOptions
  ) => Effect.Effect<SendOutcome<ResponseOf<R>>, SendError>
  /**
   * `POST /emails/batch`: 1 to 100 send requests, each decoded and sent (or scheduled) on its own.
   * An Idempotency-Key covers the whole batch: a retry answers each item as the first time did.
   */
  readonly sendBatch: (
    principal: Principal,
    requests: unknown,
    options?: SendOptions
  ) => Effect.Effect<BatchOutcome, ValidationError | Conflict | Unavailable>
  /** `POST /emails/{id}/cancel`: `Conflict` once the message started to send; `NotFound` for another organisation's. */
  readonly cancel: (
    principal: Principal,
    id: string
  ) => Effect.Effect<Wire.CancelResponse, NotFound | Conflict | Unavailable>
  /** `PATCH /emails/{id}` with `{scheduled_at}`: moves a message that is still scheduled. */
  readonly reschedule: (
    principal: Principal,
    id: string,
    request: typeof Wire.RescheduleRequest.Encoded
  ) => Effect.Effect<Wire.ScheduledEmailResponse, ValidationError | NotFound | Conflict | Unavailable>
  /**
   * For the send queue's worker (`SendQueue.worker`): looks at a message due now and sends it if it is
   * still scheduled at that time, after claiming it (so it leaves once, whichever instance looks).
   * Fails with `Unavailable` when it should be looked at again later.
   */
  readonly dispatch: (due: MessageLog.Due, attempt: Attempt) => Effect.Effect<Dispatched, Unavailable>
  /** For the worker's sweep: a message `sending` long after its instance stopped is sent again or made `unknown`. */
  readonly recover: (id: string) => Effect.Effect<Dispatched, Unavailable>
}

/** What became of a look at a due message: sent, failed, unknown, suppressed (every recipient), or skipped. */
export type Dispatched = Dispatch.Dispatched

export const Mailer: Context.Service<Mailer, Mailer> = Context.Service("@mailroom/core/Mailer")

type Request = Wire.InProcessSendRequest

const badIdempotencyKey = new ValidationError({
  errors: ["Idempotency-Key: must be 1 to 256 visible ASCII characters"]
})

/** Builds the `Mailer` on the provider, store, organisations, log, suppressions and queue in context. */
export const make = Effect.fnUntraced(function* (config: Config = {}) {
  const provider = MailroomMetrics.instrument(yield* EmailProvider)
  const store = yield* ObjectStore
  const organizations = yield* Organizations
  const log = yield* MessageLog.MessageLog
  const suppressions = yield* Suppressions
  const idempotency = yield* IdempotencyStore
  const queue = yield* SendQueue
  const decodeRequest = Wire.decode(Wire.SendEmailRequest)
  const decodeInProcess = Wire.decode(Wire.InProcessSendRequest)
  // Where work that outlives a send runs (its record's retries), closed with the layer.
  const scope = yield* Effect.scope
  const delivery = Delivery.make({
    scope,
    provider,
    // Optional: with one in context, every attempt first takes a token per recipient from it.
    limiter: yield* Effect.serviceOption(SendRateLimiter),
    organizations,
    log,
    suppressions,
    retry: {
      maxAttempts: config.retry?.maxAttempts ?? 3,
      baseDelay: Duration.toMillis(Duration.fromInputUnsafe(config.retry?.baseDelay ?? "250 millis")),
      maxDelay: Duration.toMillis(Duration.fromInputUnsafe(config.retry?.maxDelay ?? "5 seconds"))
    }
  })
  const attachments = SendAttachments.make({
    store,
    limits: provider.limits,
    budget: {
      bytes: config.attachmentBytesInFlight ?? defaultAttachmentBytesInFlight,
      wait: Duration.fromInputUnsafe(config.attachmentBudgetWait ?? "10 seconds")
    }
  })
  const scheduling = Scheduling.make({ delivery, attachments, log, queue })
  const dispatching = Dispatch.make({ delivery, attachments, log, organizations, suppressions })

  /** Accepts the record, then sends; the provider's answer settles it, whatever it is. */
  const sendRecorded = (
    principal: Principal,
    request: Request,
    addressed: SendRecord.Addressed,
    loaded: ReadonlyArray<OutboundAttachment>,
    keys: Batch.Keys,
    progress: Shutdown.Progress | undefined
  ): Effect.Effect<Wire.SendEmailResponse, SendError> => {
    const id = MessageLog.makeId()
    const accept = Effect.flatMap(Clock.currentTimeMillis, (now) =>
      log.accept(
        SendRecord.newMessage({
          id,
          organizationId: principal.orgId,
          createdAt: new Date(now).toISOString(),
          request,
          addressed,
          attachments: loaded.map(SendRecord.loadedAttachment),
          idempotencyKey: keys.record
        })
      )
    )
    // Refused unrecorded (503, nothing sent), the record may still land (a COMMIT that a stalled server
    // answers late): taken back in the background, so that it never reads `sending`, later `unknown`.
    const accepted = Effect.tapError(accept, () => delivery.abandon(id))
    // A vendor that de-duplicates by key sends each message once: under the caller's key when it
    // gave one (a retry after a restart is then one message to the vendor too), else the message's id.
    const providerKey = keys.provider ?? `mailroom-${id}`
    const email = delivery.outbound(principal, id, request, addressed, loaded, providerKey)
    const sent = delivery.sendThen(email, progress, (exit) =>
      Effect.andThen(delivery.settle(id, SendRecord.outcomeOf(provider.name, exit, progress)), exit)
    )
    return Effect.andThen(
      accepted,
      Effect.map(
        sent,
        (): Wire.SendEmailResponse => ({
          message_id: id,
          from: request.from,
          to: request.to,
          subject: request.subject,
          attachments: (request.attachments ?? []).flatMap((a) => (a.key === undefined ? [] : [a.key])),
          ...(addressed.suppressed.length === 0 ? {} : { suppressed: addressed.suppressed })
        })
      )
    )
  }

  // Every send: validation first (every problem at once), then the sender, the suppression list, the
  // attachments' bytes (held in the memory budget until the provider has answered), the record, the call.
  const deliverOnce = (
    principal: Principal,
    request: Request,
    keys: Batch.Keys,
    progress: Shutdown.Progress | undefined
  ): Effect.Effect<Wire.SendEmailResponse, SendError> => {
    const problems = attachments.staticProblems(principal, request)
    problems.errors.push(...SendExtras.problems(request, provider.limits))
    // A request that fails anyway reports every validation problem first, as it always has.
    const checked =
      problems.errors.length > 0
        ? Effect.andThen(attachments.report(request, problems), delivery.checkSender(principal, request.from))
        : Effect.catch(delivery.checkSender(principal, request.from), (error) =>
            Effect.andThen(attachments.report(request, problems), Effect.fail(error))
          )
    const send = (addressed: SendRecord.Addressed) =>
      request.attachments === undefined || request.attachments.length === 0
        ? sendRecorded(principal, request, addressed, [], keys, progress)
        : Effect.scoped(
            Effect.flatMap(attachments.load(request), (loaded) =>
              sendRecorded(principal, request, addressed, loaded, keys, progress)
            )
          )
    return Effect.andThen(checked, Effect.flatMap(delivery.address(principal, request), send))
  }

  // With a host's shutdown signal, a send still running when it aborts is answered (see Config.shutdown).
  // A scheduled message is only recorded now: the worker sends it.
  const { shutdown } = config
  const deliver = (
    principal: Principal,
    request: Request,
    keys: Batch.Keys
  ): Effect.Effect<Wire.SendEmailResponse | Wire.ScheduledEmailResponse, SendError> =>
    request.scheduled_at !== undefined
      ? scheduling.schedule(principal, request, request.scheduled_at, keys.record)
      : shutdown === undefined
        ? deliverOnce(principal, request, keys, undefined)
        : Shutdown.stoppable(shutdown, provider.name, (progress) => deliverOnce(principal, request, keys, progress))

  const idempotent = Idempotent.make(idempotency)

  const validKey = (key: string) => /^[\x21-\x7e]{1,256}$/.test(key)

  const sendWith =
    (decode: (input: unknown) => Effect.Effect<Request, ValidationError>) =>
    (principal: Principal, input: unknown, options: SendOptions = {}): Effect.Effect<SendOutcome, SendError> => {
      const { idempotencyKey } = options
      const outcome: Effect.Effect<SendOutcome, SendError> =
        idempotencyKey === undefined
          ? Effect.flatMap(decode(input), (request) =>
              Effect.map(deliver(principal, request, {}), (response) => ({ response, replayed: false }))
            )
          : !validKey(idempotencyKey)
            ? Effect.fail(badIdempotencyKey)
            : Effect.flatMap(decode(input), (request) =>
                idempotent(
                  { orgId: principal.orgId, key: idempotencyKey },
                  Idempotent.fingerprintOf(request),
                  deliver(principal, request, {
                    record: idempotencyKey,
                    provider: Delivery.providerKeyOf(principal.orgId, idempotencyKey)
                  })
                )
              )
      return outcome.pipe(withSpan("Mailer.send", { attributes: { "mailroom.organization": principal.orgId } }))
    }

  const batch = Batch.make({
    decode: decodeRequest,
    deliver,
    providerKey: (principal, key) => Delivery.providerKeyOf(principal.orgId, key),
    concurrency: Math.max(1, config.batchConcurrency ?? 32)
  })

  const sendBatch: Mailer["sendBatch"] = (principal, input, options = {}) => {
    const { idempotencyKey } = options
    const outcome = Effect.flatMap(
      Batch.itemsOf(input),
      (items): Effect.Effect<BatchOutcome, ValidationError | Conflict | Unavailable> =>
        idempotencyKey === undefined
          ? Effect.map(batch.run(principal, items, undefined), (response) => ({ response, replayed: false }))
          : !validKey(idempotencyKey)
            ? Effect.fail(badIdempotencyKey)
            : idempotent(
                { orgId: principal.orgId, key: idempotencyKey },
                // Marked, so that a key first used for one send is not replayed as a batch.
                Idempotent.fingerprintOf({ batch: items }),
                batch.run(principal, items, idempotencyKey)
              )
    )
    return outcome.pipe(withSpan("Mailer.sendBatch", { attributes: { "mailroom.organization": principal.orgId } }))
  }

  return Mailer.of({
    // The answer's type follows the request's: `deliver` schedules exactly the requests with `scheduled_at`.
    send: sendWith(decodeRequest) as Mailer["send"],
    sendInProcess: sendWith(decodeInProcess) as Mailer["sendInProcess"],
    sendBatch,
    cancel: (principal, id) =>
      scheduling
        .cancel(principal, id)
        .pipe(withSpan("Mailer.cancel", { attributes: { "mailroom.organization": principal.orgId } })),
    reschedule: (principal, id, request) =>
      scheduling
        .reschedule(principal, id, request)
        .pipe(withSpan("Mailer.reschedule", { attributes: { "mailroom.organization": principal.orgId } })),
    dispatch: dispatching.dispatch,
    recover: dispatching.recover
  })
})

/** Provides the `Mailer` on the provider, store, organisations and stores in context. */
export const layer = (
  config: Config = {}
): Layer.Layer<
  Mailer,
  never,
  EmailProvider | ObjectStore | Organizations | IdempotencyStore | MessageLog.MessageLog | Suppressions | SendQueue
> => Layer.effect(Mailer, make(config))
