// A send that its host stops waiting for: when the host's shutdown signal aborts (its grace period is
// over), a send still running fails with what is known of it, instead of being cut with no answer.
import * as Effect from "effect/Effect"
import { ProviderError, Unavailable } from "../ProviderError.js"

/** Whether the send has handed the message to the provider: set as the first attempt starts. */
export interface Progress {
  called: boolean
}

/** Resolves when `signal` aborts (at once if it has). */
const aborted = (signal: AbortSignal): Effect.Effect<void> =>
  Effect.callback<void>((resume) => {
    if (signal.aborted) return resume(Effect.void)
    const onAbort = () => resume(Effect.void)
    signal.addEventListener("abort", onAbort, { once: true })
    return Effect.sync(() => signal.removeEventListener("abort", onAbort))
  })

/** The failure of a send cut short by shutdown: possibly sent once the provider had it. */
export const stopped = (provider: string, called: boolean): ProviderError =>
  new ProviderError({
    provider,
    reason: new Unavailable({
      message: called
        ? "the server shut down while the provider had not answered; the message may have been sent"
        : "the server shut down before the message reached the provider; nothing was sent",
      possiblySent: called
    })
  })

/**
 * `send`, raced with `signal`: when the signal aborts first, `send` is interrupted (the provider's
 * request abandoned) and the result is `stopped`, so the caller is answered and an Idempotency-Key
 * is recorded as the send's outcome (uncertain once the provider had the message).
 */
export const stoppable = <A, E, R>(
  signal: AbortSignal,
  provider: string,
  send: (progress: Progress) => Effect.Effect<A, E, R>
): Effect.Effect<A, E | ProviderError, R> =>
  Effect.suspend(() => {
    const progress: Progress = { called: false }
    return Effect.raceFirst(
      send(progress),
      Effect.andThen(
        aborted(signal),
        Effect.suspend(() => Effect.fail(stopped(provider, progress.called)))
      )
    )
  })
