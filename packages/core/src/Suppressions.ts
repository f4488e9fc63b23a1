// The addresses an organisation no longer sends to: added on a hard bounce or a complaint of that
// recipient, or by hand; checked on every send, where a suppressed recipient is dropped.

import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { normalizeAddress } from "./internal/address.js"
import * as Memory from "./internal/memorySuppressions.js"
import type { Unavailable, ValidationError } from "./MailroomError.js"
import type { Page } from "./MessageLog.js"

/** Why an address is suppressed: `bounced` (a hard bounce), `complained` (marked as spam), `manual`. */
export const Reason = Schema.Literals(["bounced", "complained", "manual"])
export type Reason = typeof Reason.Type

/** An address on an organisation's list: why and since when. */
export const Suppression = Schema.Struct({
  /** The address as `normalize` writes it. */
  email: Schema.String,
  reason: Reason,
  created_at: Schema.String,
  /** The message whose bounce or complaint added it; null when added by hand. */
  message_id: Schema.NullOr(Schema.String),
  /** What the caller or the vendor said, when anything. */
  detail: Schema.NullOr(Schema.String)
}).annotate({ identifier: "Suppression" })
export type Suppression = typeof Suppression.Type

/** An address to add, with why. */
export interface NewSuppression {
  readonly email: string
  readonly reason: Reason
  readonly messageId?: string
  readonly detail?: string
}

/** A page of the list: its size and the cursor. */
export interface ListQuery {
  /** 1 to 100. */
  readonly limit: number
  readonly cursor?: string
  readonly reason?: Reason
}

/**
 * Per organisation, per address. Fails with `Unavailable` when its database cannot be reached: a
 * send is then refused rather than made without the check.
 */
export interface Suppressions {
  /**
   * Adds the addresses not already suppressed (an address added again keeps its first reason and
   * time); answers the ones it added. `email` is normalised here.
   */
  readonly add: (
    organizationId: string,
    entries: ReadonlyArray<NewSuppression>,
    now: string
  ) => Effect.Effect<ReadonlyArray<Suppression>, Unavailable>
  /** Removes an address; answers whether it was suppressed. */
  readonly remove: (organizationId: string, email: string) => Effect.Effect<boolean, Unavailable>
  /** Newest first. A cursor no list answered is a `ValidationError` naming it. */
  readonly list: (
    organizationId: string,
    query: ListQuery
  ) => Effect.Effect<Page<Suppression>, Unavailable | ValidationError>
  /** Which of `emails` are suppressed, as stored (normalised). */
  readonly check: (
    organizationId: string,
    emails: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlyArray<Suppression>, Unavailable>
}

export const Suppressions: Context.Service<Suppressions, Suppressions> = Context.Service("@mailroom/core/Suppressions")

/**
 * The form addresses are compared in: the local part as given (RFC 5321 lets a server tell cases
 * apart there), the domain in lower-case ASCII (punycode), so `Bob@Bücher.Example` and
 * `Bob@xn--bcher-kva.example` are one address and `bob@...` another.
 */
export const normalize: (email: string) => string = normalizeAddress

/** Suppressions kept in memory: for tests, and a single process that need not keep them across a restart. */
export const makeMemory = (): Suppressions => Memory.make()

/** The memory store as a layer. */
export const layerMemory = (): Layer.Layer<Suppressions> => Layer.sync(Suppressions, makeMemory)
