// Two organisations on the memory layers, shared by the service tests.
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import {
  Attachments,
  EmailProvider,
  IdempotencyStore,
  Mailer,
  MessageLog,
  Messages,
  ObjectStore,
  Organizations,
  SendQueue,
  Suppressions
} from "../src/index.js"

export const acme: Organizations.Principal = { orgId: "org_acme", slug: "acme" }
export const globex: Organizations.Principal = { orgId: "org_globex", slug: "globex" }

/** `base` with some fields replaced (or removed, with `undefined`): a request one field away from a valid one. */
export const withFields = (base: Record<string, unknown>, fields: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries({ ...base, ...fields }).filter(([, value]) => value !== undefined))

export const organizations = Organizations.makeStatic({
  serviceDomain: "mailroom.test",
  organizations: [
    {
      id: "org_acme",
      slug: "acme",
      verifiedDomains: ["acme.example"],
      apiKeys: ["mr_test_acme"],
      accessTokens: ["tok_acme"]
    },
    { id: "org_globex", slug: "globex", verifiedDomains: ["globex.example"], apiKeys: ["mr_test_globex"] }
  ]
})

/**
 * Runs `effect` (a test with its world provided) with the TestClock at `iso` from the start. The
 * send queue's sweep, once its layer has started, fires for every minute a later jump skips: from
 * the epoch to 2026 that is seconds of CPU spent on nothing.
 */
export const startingAt =
  (iso: string) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.andThen(TestClock.setTime(Date.parse(iso)), effect)

/** Fresh memory layers; the store and provider are returned so a test can look inside them. */
export const makeWorld = (
  options: {
    readonly provider?: EmailProvider.EmailProvider
    readonly attachments?: Attachments.Config
    readonly mailer?: Mailer.Config
    readonly idempotency?: IdempotencyStore.IdempotencyStore
    readonly log?: MessageLog.MessageLog
    readonly suppressions?: Suppressions.Suppressions
  } = {}
) => {
  const store = ObjectStore.makeMemory()
  const provider = options.provider ?? EmailProvider.makeMemory()
  const log = options.log ?? MessageLog.makeMemory()
  const suppressions = options.suppressions ?? Suppressions.makeMemory()
  const base = Layer.mergeAll(
    Layer.succeed(MessageLog.MessageLog, log),
    Layer.succeed(Suppressions.Suppressions, suppressions),
    Layer.succeed(ObjectStore.ObjectStore, store),
    Layer.succeed(EmailProvider.EmailProvider, provider),
    Layer.succeed(Organizations.Organizations, organizations),
    options.idempotency === undefined
      ? IdempotencyStore.layerMemory()
      : Layer.succeed(IdempotencyStore.IdempotencyStore, options.idempotency),
    SendQueue.layerMemory()
  )
  const layer = Layer.mergeAll(
    Mailer.layer(options.mailer),
    Attachments.layer(options.attachments),
    Messages.layer
  ).pipe(Layer.provideMerge(base))
  return { store, provider, log, suppressions, layer }
}
