// `EmailProvider.failover`: one provider made of several, which hands a message to the next only when
// the current one certainly did not take it, with a circuit breaker (Effect's CircuitBreaker) per provider.
import type * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as CircuitBreaker from "effect/persistence/CircuitBreaker"
import type * as Scope from "effect/Scope"
import type { EmailProvider, Limits, OutboundEmail, SendResult } from "../EmailProvider.js"
import * as MailroomMetrics from "../MailroomMetrics.js"
import { ProviderError, type Reason, Unavailable } from "../ProviderError.js"
import { duration, invalidOption, positiveInteger } from "./options.js"
import { defaultHeldPerAttachmentByte } from "./sendAttachments.js"

/** The circuit each provider of a failover has: when it stops being called, and when it is tried again. */
export interface CircuitOptions {
  /**
   * Failures in a row that open a provider's circuit: answers that it did not take the message
   * (unreachable, throttled, paused) or may have lost it (a dropped connection after sending). A
   * rejection of the message itself is an answer, so it counts as a success. Default 5.
   */
  readonly failures?: number
  /**
   * How long an open circuit skips its provider without calling it. Then one send probes it
   * (half-open, the others still skip it): a success closes the circuit, a failure opens it again.
   * Default 30 seconds.
   */
  readonly openDuration?: Duration.Input
}

/** How `failover` trips and tries again each provider's circuit. */
export interface FailoverOptions {
  readonly circuit?: CircuitOptions
}

// Marks a failover, so that one nested in another passes on the names its own providers gave.
const FailoverTypeId = Symbol.for("@mailroom/core/EmailProvider/failover")

/**
 * Whether the next provider may have the message after this answer: only when this one certainly did
 * not take it, and another vendor may. A rejection of the message itself (its sender, recipients,
 * size, content) stays final: another vendor would send what this one refused, around a suppression
 * or a sender the operator has not verified with it.
 */
const failsOver = (reason: Reason): boolean => {
  switch (reason._tag) {
    case "Unavailable":
      return !reason.possiblySent
    case "RateLimited":
    case "SendingPaused":
      return true
    default:
      return false
  }
}

/** What a call says about its provider's health, for its circuit. */
const health = (exit: Exit.Exit<SendResult, ProviderError>): CircuitBreaker.Outcome => {
  if (Exit.isSuccess(exit)) return CircuitBreaker.success
  const error = Exit.findErrorOption(exit)
  // A defect: the provider did not answer as a provider does.
  if (error._tag === "None") return CircuitBreaker.failure()
  const { reason } = error.value
  switch (reason._tag) {
    case "Unavailable":
    case "SendingPaused":
      return CircuitBreaker.failure()
    case "RateLimited":
      return CircuitBreaker.failure({ retryAfter: reason.retryAfter })
    // Unclassified: it says nothing either way.
    case "Unknown":
      return CircuitBreaker.ignored
    default:
      return CircuitBreaker.success
  }
}

/**
 * What every provider accepts: the smallest of each limit, every forbidden extension and header; and
 * the most memory any of them holds per attachment byte.
 */
export const strictestLimits = (limits: ReadonlyArray<Limits>): Limits => {
  const smallest = (pick: (l: Limits) => number | undefined) => {
    const given = limits.map(pick).filter((n): n is number => n !== undefined)
    return given.length === 0 ? undefined : Math.min(...given)
  }
  const every = (pick: (l: Limits) => ReadonlyArray<string> | undefined) => [
    ...new Set(limits.flatMap((l) => (pick(l) ?? []).map((s) => s.toLowerCase())))
  ]
  const maxCustomHeaders = smallest((l) => l.maxCustomHeaders)
  const maxTags = smallest((l) => l.maxTags)
  const forbiddenHeaders = every((l) => l.forbiddenHeaders)
  const held = limits.every((l) => l.heldPerAttachmentByte === undefined)
    ? undefined
    : Math.max(...limits.map((l) => l.heldPerAttachmentByte ?? defaultHeldPerAttachmentByte))
  return {
    maxRecipients: smallest((l) => l.maxRecipients) ?? 0,
    maxMessageBytes: smallest((l) => l.maxMessageBytes) ?? 0,
    forbiddenExtensions: every((l) => l.forbiddenExtensions),
    ...(maxCustomHeaders === undefined ? {} : { maxCustomHeaders }),
    ...(maxTags === undefined ? {} : { maxTags }),
    ...(forbiddenHeaders.length === 0 ? {} : { forbiddenHeaders }),
    ...(held === undefined ? {} : { heldPerAttachmentByte: held })
  }
}

/** `error` named as the chain names its provider, with the other providers' answers when given. */
const answered = (error: ProviderError, name: string, others?: ReadonlyArray<ProviderError>) =>
  new ProviderError({
    provider: name,
    reason: error.reason,
    ...(error.cause === undefined ? {} : { cause: error.cause }),
    ...(others === undefined ? {} : { failover: [...(error.failover ?? []), ...others] })
  })

const checkNames = (providers: ReadonlyArray<EmailProvider>) => {
  const seen = new Set<string>()
  for (const [i, provider] of providers.entries()) {
    if (seen.has(provider.name)) {
      return Effect.fail(
        invalidOption(
          ["providers", i, "name"],
          `two providers are named "${provider.name}": name them apart ({ ...provider, name: "${provider.name}-backup" }), so that records and metrics say which one sent`
        )
      )
    }
    seen.add(provider.name)
  }
  return Effect.void
}

/** One breaker for the chain, each provider under its own key, on Effect's memory store. */
const circuitBreaker = (options: CircuitOptions = {}) =>
  Effect.gen(function* () {
    const failures = yield* positiveInteger(["circuit", "failures"], options.failures ?? 5)
    const openDuration = yield* duration(["circuit", "openDuration"], options.openDuration ?? "30 seconds")
    return yield* CircuitBreaker.make({
      tripPolicy: CircuitBreaker.consecutive(failures),
      openDuration,
      // A Retry-After may lengthen an opening up to this; no longer, or a vendor could park itself.
      maxOpenDuration: Duration.max(openDuration, Duration.minutes(5))
    }).pipe(Effect.provide(CircuitBreaker.layerStoreMemory()))
  })

/** What a provider of the chain answered: `called` false when its circuit skipped it. */
interface Answer {
  readonly error: ProviderError
  readonly called: boolean
}

/** A provider skipped without a call: its circuit is open, or half-open with another send probing it. */
const skipped = (name: string, error: CircuitBreaker.CircuitBreakerError) =>
  new ProviderError({
    provider: name,
    reason: new Unavailable({
      message:
        error.reason._tag === "CircuitOpen"
          ? `skipped: its circuit is open after repeated failures (tried again in ${Math.ceil(Duration.toSeconds(error.reason.retryAfter))} s); the message was not sent to it`
          : `skipped: its circuit is half-open and another send is probing it; the message was not sent to it`,
      possiblySent: false
    }),
    cause: error
  })

/** The chain's answer, once no provider is left: the last error of a provider that was called. */
const exhausted = (answers: ReadonlyArray<Answer>) => {
  const last = answers.findLastIndex((a) => a.called)
  const others = answers.filter((_, i) => i !== last).map((a) => a.error)
  const final = answers[last]?.error
  return final !== undefined
    ? answered(final, final.provider, others)
    : new ProviderError({
        provider: "failover",
        reason: new Unavailable({
          message: `every provider was skipped while its circuit is open (${others.map((e) => e.provider).join(", ")}); the message was not sent`,
          possiblySent: false
        }),
        failover: others
      })
}

/** One provider from several, tried in order: the next one takes a message the one before certainly did not send. */
export const failover = (
  providers: readonly [EmailProvider, ...Array<EmailProvider>],
  options: FailoverOptions = {}
): Effect.Effect<EmailProvider, Config.ConfigError, Scope.Scope> =>
  Effect.gen(function* () {
    yield* checkNames(providers)
    const breaker = yield* circuitBreaker(options.circuit)
    // Each provider counted and timed under its own name; the failover itself is not counted again.
    const members = providers.map((provider, i) => ({
      provider: MailroomMetrics.instrument(provider),
      name: provider.name,
      nested: FailoverTypeId in provider,
      key: `${i}:${provider.name}`
    }))

    const send = (email: OutboundEmail): Effect.Effect<SendResult, ProviderError> => {
      const answers: Array<Answer> = []
      const attempt = (i: number): Effect.Effect<SendResult, ProviderError> => {
        const member = members[i]
        if (member === undefined) return Effect.fail(exhausted(answers))
        return member.provider.send(email).pipe(
          breaker.execute({ key: member.key, classify: health }),
          Effect.matchEffect({
            onSuccess: (result) =>
              Effect.succeed({ ...result, provider: member.nested ? (result.provider ?? member.name) : member.name }),
            onFailure: (error) => {
              // Open, or half-open with another send probing: skipped without a call.
              if (error._tag === "CircuitBreakerError") {
                answers.push({ error: skipped(member.name, error), called: false })
                return attempt(i + 1)
              }
              const name = member.nested ? error.provider : member.name
              if (failsOver(error.reason)) {
                answers.push({ error: answered(error, name), called: true })
                return attempt(i + 1)
              }
              // Final: a rejection, or an answer that may hide an accepted message (never sent twice).
              return Effect.fail(
                answered(
                  error,
                  name,
                  answers.map((a) => a.error)
                )
              )
            }
          })
        )
      }
      return Effect.suspend(() => attempt(0))
    }

    // Ready when one of its providers is: a send needs one, and the others' problems say why it is alone.
    const verify = Effect.forEach(providers, (p) => Effect.result(p.verify ?? Effect.void), {
      concurrency: "unbounded"
    }).pipe(
      Effect.flatMap((results) => {
        const problems = results.flatMap((r, i) =>
          r._tag === "Failure" ? [`${providers[i]?.name}: ${r.failure.message}`] : []
        )
        return problems.length < results.length
          ? Effect.void
          : Effect.fail(
              new ProviderError({
                provider: "failover",
                reason: new Unavailable({
                  message: `no provider can send: ${problems.join("; ")}`,
                  possiblySent: false
                })
              })
            )
      })
    )

    const composite: EmailProvider = {
      name: "failover",
      limits: strictestLimits(providers.map((p) => p.limits)),
      send,
      verify,
      members: providers
    }
    return Object.assign(composite, { [FailoverTypeId]: FailoverTypeId, [MailroomMetrics.InstrumentedTypeId]: true })
  })
