// The metrics and spans core records with Effect's own Metric and Tracer: each call to the provider
// (outcome, latency), retries and idempotent replays. effect/observability exports them (Prometheus, OTLP).
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Metric from "effect/Metric"
import type { EmailProvider } from "./EmailProvider.js"
import { spanIn } from "./internal/tracing.js"

/** Calls to the provider by `provider` and `outcome`: "sent", or the failure's reason (`RateLimited`...). */
export const providerSends = Metric.counter("mailroom_provider_sends_total", {
  description: "Calls to the email provider, by provider and outcome (sent, or the reason it failed)",
  incremental: true
})

/** Seconds each call to the provider took, by `provider`, whatever its outcome. */
export const providerSeconds = Metric.histogram("mailroom_provider_send_seconds", {
  description: "How long each call to the email provider took",
  boundaries: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]
})

/** Sends tried again after a failure that certainly sent nothing, by `provider` and `reason`. */
export const retries = Metric.counter("mailroom_send_retries_total", {
  description: "Sends tried again after the provider certainly did not accept them, by provider and reason",
  incremental: true
})

/** Sends answered with the stored response of an earlier request with the same Idempotency-Key. */
export const idempotentReplays = Metric.counter("mailroom_idempotent_replays_total", {
  description: "Sends answered from an earlier request with the same Idempotency-Key, nothing sent",
  incremental: true
})

/**
 * Marks a provider whose calls are already counted: `instrument` returns it as it is. A failover
 * carries it, having counted each call under the name of the provider that answered it.
 */
export const InstrumentedTypeId: unique symbol = Symbol.for("@mailroom/core/MailroomMetrics/instrumented")

/** The same provider, each call counted, timed and traced (span `EmailProvider.send`). */
export const instrument = (provider: EmailProvider): EmailProvider => {
  if (InstrumentedTypeId in provider) return provider
  // A metric with attributes is built once per series, not per call: each new one would compute its
  // series key again (a sort and a JSON.stringify) on every update.
  const seconds = Metric.withAttributes(providerSeconds, { provider: provider.name })
  const sends = new Map<string, Metric.Metric<number, Metric.CounterState<number>>>()
  const sendsFor = (outcome: string) => {
    let metric = sends.get(outcome)
    if (metric === undefined) {
      metric = Metric.withAttributes(providerSends, { provider: provider.name, outcome })
      sends.set(outcome, metric)
    }
    return metric
  }
  const instrumented: EmailProvider = {
    ...provider,
    // One step around the call, not timed + exit + flatMap + two metric effects + a span check: this
    // wraps every send.
    send: (email) =>
      Effect.withFiber((fiber) => {
        const clock = fiber.getRef(Clock.Clock)
        const start = clock.monotonicTimeNanosUnsafe()
        const call = Effect.onExit(provider.send(email), (exit) => {
          const took = Number(clock.monotonicTimeNanosUnsafe() - start) / 1e9
          const failure = Exit.findErrorOption(exit)
          // "interrupted" or "defect": the call ended without the provider's own answer.
          const outcome = Exit.isSuccess(exit)
            ? "sent"
            : failure._tag === "Some"
              ? failure.value.reason._tag
              : Exit.hasInterrupts(exit)
                ? "interrupted"
                : "defect"
          sendsFor(outcome).updateUnsafe(1, fiber.context)
          seconds.updateUnsafe(took, fiber.context)
          return Effect.void
        })
        return spanIn(fiber, call, "EmailProvider.send", {
          kind: "client",
          attributes: {
            "mailroom.provider": provider.name,
            "mailroom.recipients": email.to.length + email.cc.length + email.bcc.length
          }
        })
      })
  }
  return Object.assign(instrumented, { [InstrumentedTypeId]: true })
}

/** Messages waiting for their time (`scheduled` in the message log), as the send queue last counted them. */
export const scheduledMessages = Metric.gauge("mailroom_scheduled_messages", {
  description: "Messages scheduled and not yet sent, as the send queue's worker last counted them"
})

/** How late the oldest due scheduled message is, in seconds; 0 when none is due. */
export const oldestDueSeconds = Metric.gauge("mailroom_scheduled_oldest_due_seconds", {
  description: "Seconds since the oldest scheduled message that is due became due; 0 when none waits"
})

/**
 * Looks at due messages by `outcome`: sent, failed, unknown, suppressed (every recipient), skipped
 * (cancelled, moved, already on its way) or retried (looked at again later).
 */
export const scheduledSends = Metric.counter("mailroom_scheduled_sends_total", {
  description: "Scheduled messages looked at when due, by outcome",
  incremental: true
})
