// The steps every send takes, now or at its scheduled time: the sender's domain, the suppression
// list, the message the provider is handed, the call with bounded retries, and the outcome recorded.
import { createHash } from "node:crypto"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import * as Metric from "effect/Metric"
import type * as Option from "effect/Option"
import * as Random from "effect/Random"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import type { EmailProvider, OutboundAttachment, OutboundEmail, SendResult } from "../EmailProvider.js"
import { messageKey, organizationKey } from "../MailEvent.js"
import type { Unavailable } from "../MailroomError.js"
import * as MailroomMetrics from "../MailroomMetrics.js"
import type * as MessageLog from "../MessageLog.js"
import type { Organizations, Principal } from "../Organizations.js"
import { ProviderError, RecipientSuppressed, SenderNotVerified } from "../ProviderError.js"
import type { SendRateLimiter } from "../SendRateLimiter.js"
import type { Suppressions } from "../Suppressions.js"
import type * as Wire from "../Wire.js"
import { domainOf } from "./address.js"
import { type Held, HeldEvents } from "./publish.js"
import * as SendExtras from "./sendExtras.js"
import * as SendRecord from "./sendRecord.js"
import type * as Shutdown from "./shutdown.js"

type Request = Wire.InProcessSendRequest

export interface Retry {
  readonly maxAttempts: number
  readonly baseDelay: number
  readonly maxDelay: number
}

/**
 * The key a provider hands its vendor for a caller's Idempotency-Key: a digest of the organisation and
 * the key, since organisations share the vendor account and may pick the same keys.
 */
export const providerKeyOf = (orgId: string, key: string): string =>
  `mailroom-${createHash("sha256").update(`${orgId}\u0000${key}`).digest("hex")}`

/** Why `from` was refused before any provider saw it: its domain, the organisation's domains, nothing sent. */
const unverifiedSender = (from: string, principal: Principal, verified: ReadonlyArray<string>) => {
  const shown = verified.slice(0, 5).join(", ") + (verified.length > 5 ? ` and ${verified.length - 5} more` : "")
  const domains = verified.length === 0 ? "it has none" : `its verified domains are ${shown}, and their subdomains`
  return `from: ${from} is not on a verified domain of organization ${principal.orgId} (${domains}); nothing was sent`
}

/**
 * `Effect.retry(self, schedule)`, with the schedule entered only once `self` has failed, its failure
 * replayed as the schedule's first input: the same retries, and an effect that succeeds at once (a
 * send, its record, nearly always) builds none of the schedule's state.
 */
const retryOnFailure = <A, E, R>(
  self: Effect.Effect<A, E, R>,
  schedule: Schedule.Schedule<unknown, E>
): Effect.Effect<A, E, R> =>
  Effect.catch(self, (first) => {
    let replayed = false
    const again = Effect.suspend(() => {
      if (replayed) return self
      replayed = true
      return Effect.fail(first)
    })
    return Effect.retry(again, schedule)
  })

export const make = (options: {
  readonly provider: EmailProvider
  readonly limiter: Option.Option<SendRateLimiter>
  readonly organizations: Organizations
  readonly log: MessageLog.MessageLog
  readonly suppressions: Suppressions
  readonly retry: Retry
  /** Where the background retries of a record live: the layer's scope, closed with it. */
  readonly scope: Scope.Scope
}) => {
  const { provider, limiter, organizations, log, suppressions } = options
  const { maxAttempts, baseDelay, maxDelay } = options.retry

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
  const sendWithRetries = (email: OutboundEmail, progress?: Shutdown.Progress) => {
    const recipients = email.to.length + email.cc.length + email.bcc.length
    const call =
      progress === undefined
        ? provider.send(email)
        : Effect.suspend(() => {
            progress.called = true
            return provider.send(email)
          })
    const attempt = limiter._tag === "Some" ? Effect.andThen(limiter.value.acquire(recipients), call) : call
    return retryOnFailure(attempt, retrySchedule)
  }

  /**
   * The send with its retries, then `record` of its exit (the outcome written to the log), which runs
   * even when the send is interrupted. The events a local provider accepted meanwhile are held
   * (`HeldEvents`) and published before `record`, or beside it, their write begun first, on a log
   * whose writes begun together share a commit (`sharesCommits`, SQLite): one commit for both, where
   * publishing them during the send took a commit of its own. Each is done before this answers.
   */
  const sendThen = <B, E>(
    email: OutboundEmail,
    progress: Shutdown.Progress | undefined,
    record: (exit: Exit.Exit<SendResult, ProviderError>) => Effect.Effect<B, E>
  ): Effect.Effect<B, E> =>
    Effect.uninterruptibleMask((restore) => {
      const held: Held = { open: true, publications: [] }
      return Effect.flatMap(
        Effect.exit(restore(Effect.provideService(sendWithRetries(email, progress), HeldEvents, held))),
        (exit) => {
          held.open = false
          if (held.publications.length === 0) return record(exit)
          const publications = Effect.all(held.publications, { discard: true })
          if (log.sharesCommits !== true) return Effect.andThen(publications, record(exit))
          // `record`'s failure (the send's own, passed on) waits for the events rather than interrupting them.
          return Effect.flatMap(
            Effect.all([publications, Effect.exit(record(exit))], {
              concurrency: 2
            }),
            ([, recorded]) => recorded
          )
        }
      )
    })

  /** The recipients left once the organisation's suppressed addresses are dropped; none left is a 422. */
  const address = (
    principal: Principal,
    request: Request
  ): Effect.Effect<SendRecord.Addressed, ProviderError | Unavailable> =>
    Effect.flatMap(
      suppressions.check(principal.orgId, [...request.to, ...(request.cc ?? []), ...(request.bcc ?? [])]),
      (found) => {
        if (found.length === 0) return Effect.succeed(SendRecord.allAddressed(request))
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

  /** The message the provider is handed; `providerKey` is what a de-duplicating vendor keys it by. */
  const outbound = (
    principal: Principal,
    id: string,
    request: Request,
    addressed: SendRecord.Addressed,
    loaded: ReadonlyArray<OutboundAttachment>,
    providerKey: string
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
      idempotencyKey: providerKey
    }
  }

  // Built once: a schedule from a duration string parses it, and every send settles.
  const settleRetries = Schedule.exponential(Duration.millis(100)).pipe(Schedule.upTo({ times: 3 }))
  let takingBack = 0
  const maxTakingBack = 100
  // Sixty tries 5 s apart, five minutes: well before the stalled sweep (ten) would record the message `unknown`.
  const backgroundSpacing = Duration.seconds(5)
  const backgroundRetries = Schedule.spaced(backgroundSpacing).pipe(Schedule.upTo({ times: 59 }))

  /** `write` tried every 5 s for five minutes, from 5 s on; `gaveUp` said past that. Not forked: the caller forks it. */
  const later = (
    write: Effect.Effect<void, Unavailable>,
    gaveUp: (error: Unavailable) => string
  ): Effect.Effect<void> =>
    Effect.andThen(Effect.sleep(backgroundSpacing), Effect.retry(write, backgroundRetries)).pipe(
      Effect.catch((error) => Effect.logError(gaveUp(error)))
    )

  /**
   * The provider's answer, recorded: the message is sent (or not) whatever the log says, so a log
   * that cannot take it is retried briefly before the send answers, then every 5 s for five minutes
   * in the background (the answer and the provider's id are still in hand; a database back by then
   * gets them). Past that, the record is left `sending` and the failure logged.
   */
  const settle = (id: string, outcome: MessageLog.Outcome) => {
    const what = () => `the outcome of message ${id} (${outcome._tag.toLowerCase()})`
    return retryOnFailure(log.settle(id, outcome), settleRetries).pipe(
      Effect.catch((error) =>
        Effect.andThen(
          Effect.logError(
            `[mailroom] ${what()} could not be recorded yet; tried again every 5 s for five minutes: ${error.message}`
          ),
          // Built only on a failure: every send settles, and nearly every settle succeeds at once.
          Effect.forkIn(
            later(
              log.settle(id, outcome),
              (error) => `[mailroom] ${what()} could not be recorded; its record stays "sending": ${error.message}`
            ),
            options.scope
          )
        )
      ),
      Effect.asVoid
    )
  }

  /**
   * A send refused because its record was not confirmed: the record, if it lands after all, is settled
   * `failed` (`MessageLog.abandon`), in the background, as a late outcome is (every 5 s for five minutes).
   */
  const abandon = (id: string): Effect.Effect<void> => {
    const { abandon: takeBack } = log
    // At most `maxTakingBack` at once: in a long outage every send is refused, and each would query
    // the database every 5 s as it comes back. Past that, a record that lands is swept `unknown`.
    if (takeBack === undefined || takingBack >= maxTakingBack) return Effect.void
    takingBack++
    const reason =
      "not sent: the message's record was not confirmed in time, so the send was answered 503 and nothing went to the provider"
    return Effect.asVoid(
      Effect.forkIn(
        later(
          takeBack(id, reason),
          (error) => `[mailroom] message ${id}, refused, could not be taken back: ${error.message}`
        ).pipe(
          Effect.ensuring(
            Effect.sync(() => {
              takingBack--
            })
          )
        ),
        options.scope
      )
    )
  }

  return { provider, checkSender, address, outbound, sendWithRetries, sendThen, settle, abandon }
}

export type Delivery = ReturnType<typeof make>
