// Remembers, per (organisation, Idempotency-Key), the request it was first used with and what came
// of it, for 24 hours, so a retried send replays its first answer instead of sending twice.
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { Unavailable } from "./MailroomError.js"
import type { ScheduledEmailResponse, SendBatchResponse, SendEmailResponse } from "./Wire.js"

/** An Idempotency-Key within its organisation. */
export interface Scope {
  readonly orgId: string
  readonly key: string
}

/** The first answer under a key: a send's (201), a scheduled send's (202), or a batch's (each item's outcome). */
export type StoredResponse = SendEmailResponse | ScheduledEmailResponse | SendBatchResponse

/** What is recorded under a key. `fingerprint` identifies the request body it was first used with. */
export type Entry =
  /** The first request is still running. */
  | { readonly _tag: "InFlight"; readonly fingerprint: string }
  /** The first request sent (or scheduled) its messages; this is its response. */
  | { readonly _tag: "Completed"; readonly fingerprint: string; readonly response: StoredResponse }
  /** The first request failed after the provider may have accepted it: whether it was sent is unknown. */
  | { readonly _tag: "Uncertain"; readonly fingerprint: string }

/**
 * A store that cannot be reached fails with `Unavailable`: the send is then refused (503) rather than
 * made without the check, since sending without it is how a message goes out twice.
 */
export interface IdempotencyStore {
  /**
   * Records `InFlight` under the key if nothing live is recorded there, and answers `undefined`;
   * otherwise answers what is recorded, and changes nothing. Atomic: of concurrent reserves of one
   * key, from any process sharing the store, exactly one answers `undefined`.
   */
  readonly reserve: (scope: Scope, fingerprint: string) => Effect.Effect<Entry | undefined, Unavailable>
  /** Replaces the in-flight entry with the outcome, kept for the retention period from now. */
  readonly complete: (scope: Scope, entry: Entry) => Effect.Effect<void, Unavailable>
  /** Forgets the key: the request failed without sending, so the key may be used again. */
  readonly release: (scope: Scope) => Effect.Effect<void, Unavailable>
}

export const IdempotencyStore: Context.Service<IdempotencyStore, IdempotencyStore> = Context.Service(
  "@mailroom/core/IdempotencyStore"
)

/** How long an entry is kept by default: 24 hours, as Stripe and Resend do. */
export const defaultRetention: Duration.Duration = Duration.hours(24)

/** A single-process store. Several instances behind one API need a shared store instead. */
export const makeMemory = (options: { readonly retention?: Duration.Input } = {}): IdempotencyStore => {
  const retention = Duration.toMillis(Duration.fromInputUnsafe(options.retention ?? defaultRetention))
  // Kept in expiry order (every write re-inserts with the same retention), so expired entries are
  // always at the front and each call drops only those.
  const entries = new Map<string, { readonly entry: Entry; readonly expiresAt: number }>()
  const id = (scope: Scope) => JSON.stringify([scope.orgId, scope.key])
  const sweep = (now: number) => {
    for (const [key, value] of entries) {
      if (value.expiresAt > now) break
      entries.delete(key)
    }
  }
  const write = (scope: Scope, entry: Entry, now: number) => {
    entries.delete(id(scope))
    entries.set(id(scope), { entry, expiresAt: now + retention })
  }
  return {
    reserve: (scope, fingerprint) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        sweep(now)
        const live = entries.get(id(scope))
        if (live !== undefined) return live.entry
        write(scope, { _tag: "InFlight", fingerprint }, now)
        return undefined
      }),
    complete: (scope, entry) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        sweep(now)
        write(scope, entry, now)
      }),
    release: (scope) => Effect.sync(() => void entries.delete(id(scope)))
  }
}

/** Provides a single-process store. */
export const layerMemory = (options: { readonly retention?: Duration.Input } = {}): Layer.Layer<IdempotencyStore> =>
  Layer.sync(IdempotencyStore, () => makeMemory(options))
