// The send operation of the API: validates a request, applies the organisation's sender domains and
// the provider's limits, loads the attachments, sends with bounded retries, and honours Idempotency-Key.
import { createHash } from "node:crypto"
import { Clock, Context, Duration, Effect, Exit, Layer, Metric, Random, Schedule } from "effect"
import { EmailProvider, type OutboundAttachment, type OutboundEmail } from "./EmailProvider.js"
import { IdempotencyStore, type Scope } from "./IdempotencyStore.js"
import { domainOf } from "./internal/address.js"
import * as SendAttachments from "./internal/sendAttachments.js"
import * as SendExtras from "./internal/sendExtras.js"
import * as SendRecord from "./internal/sendRecord.js"
import * as Shutdown from "./internal/shutdown.js"
import { withSpan } from "./internal/tracing.js"
import { messageKey, organizationKey } from "./MailEvent.js"
import { Conflict, type Unavailable, ValidationError } from "./MailroomError.js"
import * as MailroomMetrics from "./MailroomMetrics.js"
import * as MessageLog from "./MessageLog.js"
import { makeId } from "./MessageLog.js"
import { ObjectStore, type ObjectStoreError } from "./ObjectStore.js"
import { Organizations, type Principal } from "./Organizations.js"
import { ProviderError, RecipientSuppressed, SenderNotVerified } from "./ProviderError.js"
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
   * Attachment bytes that sends may hold in memory at once, counted as stored. A send that would go
   * over waits for room; one larger than the whole budget waits until it has the budget to itself.
   * Default 256 MiB (a message takes several times its attachments' size while it is composed).
   */
  readonly attachmentBytesInFlight?: number
  /** How long a send waits for that room before it fails with `Unavailable` (503, Retry-After). Default 10 s. */
  readonly attachmentBudgetWait?: Duration.Input
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
export interface SendOutcome {
  readonly response: Wire.SendEmailResponse
  /** True when this is the stored response of an earlier request with the same Idempotency-Key. */
  readonly replayed: boolean
}

/** `Unavailable` when the sender domains or the Idempotency-Key cannot be looked up (their store is down). */
export type SendError = ValidationError | ProviderError | Conflict | ObjectStoreError | Unavailable

/** The send operation of both API variants, and in-process sends. */
export interface Mailer {
  /** The API's `POST /emails`: attachments are stored files, named by key. */
  readonly send: (
    principal: Principal,
    request: typeof Wire.SendEmailRequest.Encoded,
    options?: SendOptions
  ) => Effect.Effect<SendOutcome, SendError>
  /**
   * For in-process callers: as `send`, and an attachment may instead carry the bytes the caller
   * holds, `{ filename, content, content_type? }`, checked against the same limits (size after
   * base64, forbidden extensions) and counted in the same memory budget. The response's
   * `attachments` lists the keys of stored files only.
   */
  readonly sendInProcess: (
    principal: Principal,
    request: typeof Wire.InProcessSendRequest.Encoded,
    options?: SendOptions
  ) => Effect.Effect<SendOutcome, SendError>
}

export const Mailer: Context.Service<Mailer, Mailer> = Context.Service("@mailroom/core/Mailer")

/** Order-independent JSON, so `{a, b}` and `{b, a}` are the same request; bytes count by their digest. */
const canonical = (value: unknown): string =>
  value instanceof Uint8Array
    ? JSON.stringify(`sha256:${createHash("sha256").update(value).digest("hex")}`)
    : Array.isArray(value)
      ? `[${value.map(canonical).join(",")}]`
      : typeof value === "object" && value !== null
        ? `{${Object.keys(value)
            .sort()
            .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
            .join(",")}}`
        : JSON.stringify(value)

type Request = Wire.InProcessSendRequest

/** Why `from` was refused before any provider saw it: its domain, the organisation's domains, nothing sent. */
const unverifiedSender = (from: string, principal: Principal, verified: ReadonlyArray<string>) => {
  const shown = verified.slice(0, 5).join(", ") + (verified.length > 5 ? ` and ${verified.length - 5} more` : "")
  const domains = verified.length === 0 ? "it has none" : `its verified domains are ${shown}, and their subdomains`
  return `from: ${from} is not on a verified domain of organization ${principal.orgId} (${domains}); nothing was sent`
}

const fingerprintOf = (request: Request) => createHash("sha256").update(canonical(request)).digest("hex")

/**
 * The key a provider hands its vendor for a caller's Idempotency-Key: a digest of the organisation and
 * the key, since organisations share the vendor account and may pick the same keys.
 */
const providerKeyOf = (orgId: string, key: string) =>
  `mailroom-${createHash("sha256").update(`${orgId}\u0000${key}`).digest("hex")}`

export const make = Effect.fnUntraced(function* (config: Config = {}) {
  const provider = MailroomMetrics.instrument(yield* EmailProvider)
  // Optional: with one in context, every attempt first takes a token per recipient from it.
  const limiter = yield* Effect.serviceOption(SendRateLimiter)
  const store = yield* ObjectStore
  const organizations = yield* Organizations
  const log = yield* MessageLog.MessageLog
  const suppressions = yield* Suppressions
  const idempotency = yield* IdempotencyStore
  const decodeRequest = Wire.decode(Wire.SendEmailRequest)
  const decodeInProcess = Wire.decode(Wire.InProcessSendRequest)
  const maxAttempts = config.retry?.maxAttempts ?? 3
  const baseDelay = Duration.toMillis(Duration.fromInputUnsafe(config.retry?.baseDelay ?? "250 millis"))
  const maxDelay = Duration.toMillis(Duration.fromInputUnsafe(config.retry?.maxDelay ?? "5 seconds"))
  const attachments = SendAttachments.make({
    store,
    limits: provider.limits,
    budget: {
      bytes: config.attachmentBytesInFlight ?? defaultAttachmentBytesInFlight,
      wait: Duration.fromInputUnsafe(config.attachmentBudgetWait ?? "10 seconds")
    }
  })

  // On every send: one step, not a generator. The same error as a provider's refusal of the sender
  // (one condition, one error to catch, a 422 on the wire), from provider "mailroom", with a message
  // that says it is mailroom's own check, what to change, and that nothing was sent.
  const checkSender = (principal: Principal, from: string): Effect.Effect<void, ProviderError | Unavailable> =>
    Effect.flatMap(organizations.verifiedDomains(principal), (verified) => {
      const domain = domainOf(from)
      return verified.some((v) => domain === v || domain.endsWith(`.${v}`))
        ? Effect.void
        : Effect.fail(
            new ProviderError({
              provider: "mailroom",
              reason: new SenderNotVerified({ message: unverifiedSender(from, principal, verified), sender: from })
            })
          )
    })

  /** How long the provider asked to wait, when it did (a `RateLimited` with `retryAfter`). */
  const askedMillis = (error: ProviderError) =>
    error.reason._tag === "RateLimited" && error.reason.retryAfter !== undefined
      ? Duration.toMillis(error.reason.retryAfter)
      : 0

  // Retried: what the provider certainly did not accept (`isRetryable`), unless it asks for a longer
  // wait than `maxDelay`. Not retried: core's own refusals (provider "mailroom"), such as the rate
  // limiter's, which already waited as long as it was allowed to, and a failover's answer (`failover`
  // set): it already tried each provider that could take the message, so retrying would multiply calls.
  const retryable = (error: ProviderError) =>
    error.provider !== "mailroom" && error.failover === undefined && error.isRetryable && askedMillis(error) <= maxDelay

  // Exponential from `baseDelay`, each wait capped at `maxDelay` and jittered over its upper half,
  // never shorter than the provider asked; `maxAttempts` in all.
  const retrySchedule = Schedule.exponential(Duration.millis(baseDelay)).pipe(
    Schedule.setInputType<ProviderError>(),
    Schedule.modifyDelay(({ duration, input }) =>
      Effect.map(Random.next, (random) => {
        const backoff = Math.min(maxDelay, Duration.toMillis(duration))
        return Duration.millis(Math.max(backoff / 2 + random * (backoff / 2), askedMillis(input)))
      })
    ),
    Schedule.upTo({ times: maxAttempts - 1 }),
    Schedule.while(({ input }) => Effect.succeed(retryable(input))),
    // Last, so it counts only the retries that happen.
    Schedule.tap(({ input }) =>
      Metric.update(
        Metric.withAttributes(MailroomMetrics.retries, { provider: provider.name, reason: input.reason._tag }),
        1
      )
    )
  )

  /**
   * Each attempt first takes its tokens from the rate limiter, when there is one. The schedule is
   * entered only once an attempt has failed, with that failure replayed as its first input, so the
   * retries are what `Effect.retry(attempt, retrySchedule)` makes and a send that succeeds at once
   * (nearly all of them) does not build the schedule's state.
   */
  const sendWithRetries = (email: OutboundEmail, progress: Shutdown.Progress | undefined) => {
    const recipients = email.to.length + email.cc.length + email.bcc.length
    const call =
      progress === undefined
        ? provider.send(email)
        : Effect.suspend(() => {
            progress.called = true
            return provider.send(email)
          })
    const attempt = limiter._tag === "Some" ? Effect.andThen(limiter.value.acquire(recipients), call) : call
    return Effect.catch(attempt, (first) => {
      let replayed = false
      const again = Effect.suspend(() => {
        if (replayed) return attempt
        replayed = true
        return Effect.fail(first)
      })
      return Effect.retry(again, retrySchedule)
    })
  }

  /** The recipients left once the organisation's suppressed addresses are dropped; none left is a 422. */
  const address = (principal: Principal, request: Request): Effect.Effect<SendRecord.Addressed, SendError> =>
    Effect.flatMap(
      suppressions.check(principal.orgId, [...request.to, ...(request.cc ?? []), ...(request.bcc ?? [])]),
      (found) => {
        const addressed = SendRecord.withoutSuppressed(request, new Set(found.map((s) => s.email)))
        return addressed.to.length + addressed.cc.length + addressed.bcc.length > 0
          ? Effect.succeed(addressed)
          : Effect.fail(
              new ProviderError({
                provider: "mailroom",
                reason: new RecipientSuppressed({
                  message: `every recipient is on this organization's suppression list, nothing was sent: ${addressed.suppressed.join(", ")}`,
                  recipients: addressed.suppressed
                })
              })
            )
      }
    )

  const outbound = (
    principal: Principal,
    id: string,
    request: Request,
    addressed: SendRecord.Addressed,
    loaded: ReadonlyArray<OutboundAttachment>,
    callerKey: string | undefined
  ): OutboundEmail => {
    const headers = SendExtras.headersOf(request)
    return {
      from:
        request.from_name === undefined
          ? { address: request.from }
          : { address: request.from, name: request.from_name },
      to: addressed.to,
      cc: addressed.cc,
      bcc: addressed.bcc,
      replyTo: request.reply_to ?? [],
      subject: request.subject,
      ...(request.body.html ? { html: request.body.html } : {}),
      ...(request.body.text ? { text: request.body.text } : {}),
      attachments: loaded,
      ...(headers.length === 0 ? {} : { headers }),
      ...(request.tags === undefined || request.tags.length === 0 ? {} : { tags: request.tags }),
      // The provider hands both back with each delivery event, which finds its record by them.
      metadata: { [organizationKey]: principal.orgId, [messageKey]: id },
      // A vendor that de-duplicates by key sends each message once: under the caller's key when it
      // gave one (a retry after a restart is then one message to the vendor too), else the message's id.
      idempotencyKey: callerKey === undefined ? `mailroom-${id}` : providerKeyOf(principal.orgId, callerKey)
    }
  }

  /** Accepts the record, then sends; the provider's answer settles it, whatever it is. */
  const sendRecorded = (
    principal: Principal,
    request: Request,
    addressed: SendRecord.Addressed,
    loaded: ReadonlyArray<OutboundAttachment>,
    idempotencyKey: string | undefined,
    progress: Shutdown.Progress | undefined
  ): Effect.Effect<Wire.SendEmailResponse, SendError> => {
    const id = makeId()
    const accept = Effect.flatMap(Clock.currentTimeMillis, (now) =>
      log.accept(
        SendRecord.newMessage({
          id,
          organizationId: principal.orgId,
          createdAt: new Date(now).toISOString(),
          request,
          addressed,
          attachments: loaded,
          idempotencyKey
        })
      )
    )
    const sent = sendWithRetries(outbound(principal, id, request, addressed, loaded, idempotencyKey), progress).pipe(
      Effect.onExit((exit) => settle(id, SendRecord.outcomeOf(provider.name, exit, progress)))
    )
    return Effect.andThen(
      accept,
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

  /**
   * The provider's answer, recorded: the message is sent (or not) whatever the log says, so a log
   * that cannot take it is retried briefly, then the record is left `sending` and the failure logged.
   */
  const settle = (id: string, outcome: MessageLog.Outcome) =>
    log.settle(id, outcome).pipe(
      Effect.retry(Schedule.exponential("100 millis").pipe(Schedule.upTo({ times: 3 }))),
      Effect.catch((error) =>
        Effect.logError(
          `[mailroom] the outcome of message ${id} (${outcome._tag.toLowerCase()}) could not be recorded; its record stays "sending": ${error.message}`
        )
      )
    )

  // Every send: validation first (every problem at once), then the sender, the suppression list, the
  // attachments' bytes (held in the memory budget until the provider has answered), the record, the call.
  const deliverOnce = (
    principal: Principal,
    request: Request,
    idempotencyKey: string | undefined,
    progress: Shutdown.Progress | undefined
  ): Effect.Effect<Wire.SendEmailResponse, SendError> => {
    const problems = attachments.staticProblems(principal, request)
    problems.errors.push(...SendExtras.problems(request, provider.limits))
    // A request that fails anyway reports every validation problem first, as it always has.
    const checked =
      problems.errors.length > 0
        ? Effect.andThen(attachments.report(request, problems), checkSender(principal, request.from))
        : Effect.catch(checkSender(principal, request.from), (error) =>
            Effect.andThen(attachments.report(request, problems), Effect.fail(error))
          )
    const send = (addressed: SendRecord.Addressed) =>
      request.attachments === undefined || request.attachments.length === 0
        ? sendRecorded(principal, request, addressed, [], idempotencyKey, progress)
        : Effect.scoped(
            Effect.flatMap(attachments.load(request), (loaded) =>
              sendRecorded(principal, request, addressed, loaded, idempotencyKey, progress)
            )
          )
    return Effect.andThen(checked, Effect.flatMap(address(principal, request), send))
  }

  // With a host's shutdown signal, a send still running when it aborts is answered (see Config.shutdown).
  const { shutdown } = config
  const deliver = (
    principal: Principal,
    request: Request,
    idempotencyKey?: string
  ): Effect.Effect<Wire.SendEmailResponse, SendError> =>
    shutdown === undefined
      ? deliverOnce(principal, request, idempotencyKey, undefined)
      : Shutdown.stoppable(shutdown, provider.name, (progress) =>
          deliverOnce(principal, request, idempotencyKey, progress)
        )

  // The outcome is what the caller needs: a store that fails to record it leaves the key in flight
  // (a 409 on retries until it expires), which never sends twice, so the failure is only logged. The
  // line says what happened to the message, and the store's own cause: not the store's message to a
  // caller ("nothing was sent"), which would be false of a message that was sent.
  const recorded = (write: Effect.Effect<void, Unavailable>, outcome: string) =>
    Effect.catch(write, (error) =>
      Effect.logError(
        `[mailroom] ${outcome}, but its Idempotency-Key could not be updated (${String(error.cause ?? error.message)}); the key stays in flight until it expires, so a retry under it is refused (409), never sent again`
      )
    )

  const withIdempotency = (principal: Principal, scope: Scope, request: Request) =>
    Effect.gen(function* () {
      const fingerprint = fingerprintOf(request)
      const existing = yield* idempotency.reserve(scope, fingerprint)
      if (existing !== undefined) {
        if (existing.fingerprint !== fingerprint) {
          return yield* new Conflict({ message: "this Idempotency-Key was already used with another request" })
        }
        switch (existing._tag) {
          case "Completed":
            yield* Metric.update(MailroomMetrics.idempotentReplays, 1)
            return { response: existing.response, replayed: true }
          case "InFlight":
            return yield* new Conflict({ message: "a request with this Idempotency-Key is still being processed" })
          case "Uncertain":
            return yield* new Conflict({
              message:
                "the first request with this Idempotency-Key failed after the provider may have accepted it; check whether it was delivered before sending again under a new key"
            })
        }
      }
      return yield* deliver(principal, request, scope.key).pipe(
        Effect.onExit((exit) => {
          if (Exit.isSuccess(exit))
            return recorded(
              idempotency.complete(scope, { _tag: "Completed", fingerprint, response: exit.value }),
              `message ${exit.value.message_id} was sent`
            )
          const failure = Exit.findErrorOption(exit)
          const uncertain =
            failure._tag === "Some" &&
            failure.value._tag === "ProviderError" &&
            failure.value.reason._tag === "Unavailable" &&
            failure.value.reason.possiblySent
          return uncertain
            ? recorded(
                idempotency.complete(scope, { _tag: "Uncertain", fingerprint }),
                "a message may have been sent (its provider did not confirm it)"
              )
            : recorded(idempotency.release(scope), "a send failed and nothing was sent")
        }),
        Effect.map((response) => ({ response, replayed: false }))
      )
    })

  const badIdempotencyKey = new ValidationError({
    errors: ["Idempotency-Key: must be 1 to 256 visible ASCII characters"]
  })

  const sendWith =
    (decode: (input: unknown) => Effect.Effect<Request, ValidationError>) =>
    (principal: Principal, input: unknown, options: SendOptions = {}): Effect.Effect<SendOutcome, SendError> => {
      const { idempotencyKey } = options
      const outcome: Effect.Effect<SendOutcome, SendError> =
        idempotencyKey === undefined
          ? Effect.flatMap(decode(input), (request) =>
              Effect.map(deliver(principal, request), (response) => ({ response, replayed: false }))
            )
          : !/^[\x21-\x7e]{1,256}$/.test(idempotencyKey)
            ? Effect.fail(badIdempotencyKey)
            : Effect.flatMap(decode(input), (request) =>
                withIdempotency(principal, { orgId: principal.orgId, key: idempotencyKey }, request)
              )
      return outcome.pipe(withSpan("Mailer.send", { attributes: { "mailroom.organization": principal.orgId } }))
    }

  return Mailer.of({ send: sendWith(decodeRequest), sendInProcess: sendWith(decodeInProcess) })
})

/** Provides the `Mailer` on the provider, store, organisations and stores in context. */
export const layer = (
  config: Config = {}
): Layer.Layer<
  Mailer,
  never,
  EmailProvider | ObjectStore | Organizations | IdempotencyStore | MessageLog.MessageLog | Suppressions
> => Layer.effect(Mailer, make(config))
