// Idempotency-Key: an operation runs once per organisation, key and request; a repeat within 24 h
// answers its first response, a key reused with another request or still in flight is a Conflict.
import { createHash } from "node:crypto"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Metric from "effect/Metric"
import type { IdempotencyStore, Scope, StoredResponse } from "../IdempotencyStore.js"
import { Conflict, type Unavailable } from "../MailroomError.js"
import * as MailroomMetrics from "../MailroomMetrics.js"
import { isProviderError } from "../ProviderError.js"

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

/** The request's digest: the same request, in any field order, has the same one. */
export const fingerprintOf = (request: unknown): string => createHash("sha256").update(canonical(request)).digest("hex")

/** What was done, for the log line of a key that could not be updated. */
const outcomeOf = (response: StoredResponse): string =>
  "data" in response
    ? `a batch was answered (${response.data.length} accepted, ${response.errors.length} refused)`
    : "status" in response
      ? `message ${response.message_id} was scheduled`
      : `message ${response.message_id} was sent`

export const make = (idempotency: IdempotencyStore) => {
  // The outcome is what the caller needs: a store that fails to record it leaves the key in flight
  // (a 409 on retries until it expires), which never sends twice, so the failure is only logged.
  // (The line says what happened to the message, and the store's own cause: not the store's message
  // to a caller, "nothing was sent", which would be false of a message that was sent.)
  const recorded = (write: Effect.Effect<void, Unavailable>, outcome: string) =>
    Effect.catch(write, (error) =>
      Effect.logError(
        `[mailroom] ${outcome}, but its Idempotency-Key could not be updated (${String(error.cause ?? error.message)}); the key stays in flight until it expires, so a retry under it is refused (409), never sent again`
      )
    )

  /** Runs `run` once per key and request: a repeat within 24 h answers its first response, sending nothing. */
  const idempotent = <A extends StoredResponse, E>(
    scope: Scope,
    fingerprint: string,
    run: Effect.Effect<A, E>
  ): Effect.Effect<{ readonly response: A; readonly replayed: boolean }, E | Conflict | Unavailable> =>
    Effect.gen(function* () {
      const existing = yield* idempotency.reserve(scope, fingerprint)
      if (existing !== undefined) {
        if (existing.fingerprint !== fingerprint) {
          return yield* new Conflict({ message: "this Idempotency-Key was already used with another request" })
        }
        switch (existing._tag) {
          case "Completed":
            yield* Metric.update(MailroomMetrics.idempotentReplays, 1)
            // The same fingerprint is the same operation (a batch's is marked), so the same answer's shape.
            return { response: existing.response as A, replayed: true }
          case "InFlight":
            return yield* new Conflict({ message: "a request with this Idempotency-Key is still being processed" })
          case "Uncertain":
            return yield* new Conflict({
              message:
                "the first request with this Idempotency-Key failed after the provider may have accepted it; check whether it was delivered before sending again under a new key"
            })
        }
      }
      return yield* run.pipe(
        Effect.onExit((exit) => {
          if (Exit.isSuccess(exit))
            return recorded(
              idempotency.complete(scope, { _tag: "Completed", fingerprint, response: exit.value }),
              outcomeOf(exit.value)
            )
          const failure = Exit.findErrorOption(exit)
          const uncertain =
            failure._tag === "Some" &&
            isProviderError(failure.value) &&
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

  return idempotent
}
