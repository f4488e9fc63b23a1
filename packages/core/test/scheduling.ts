// The world of the scheduled-send tests: the memory layers, the send queue and its worker, on a
// TestClock set to 2026-05-01T09:00Z before anything starts.
import { assert } from "@effect/vitest"
import { Duration, Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import {
  EmailProvider,
  type Mailer,
  Mailroom,
  type MessageLog,
  ObjectStore,
  Organizations,
  type SendQueue,
  type Suppressions
} from "../src/index.js"
import { organizations } from "./fixtures.js"

const start = Date.parse("2026-05-01T09:00:00.000Z")

/** The time `offset` after the world's start, as records write it. */
export const at = (offset: Duration.Input): string =>
  new Date(start + Duration.toMillis(Duration.fromInputUnsafe(offset))).toISOString()

/** The memory layers, the send queue and its worker, on the test's clock. */
export const world = <P extends EmailProvider.EmailProvider = EmailProvider.MemoryEmailProvider>(
  options: {
    readonly provider?: P
    readonly worker?: SendQueue.WorkerOptions
    readonly mailer?: Mailer.Config
    readonly messages?: Layer.Layer<MessageLog.MessageLog | Suppressions.Suppressions>
  } = {}
) => {
  const provider = options.provider ?? (EmailProvider.makeMemory() as EmailProvider.EmailProvider as P)
  const store = ObjectStore.makeMemory()
  const layer = Mailroom.layer({
    provider: Layer.succeed(EmailProvider.EmailProvider, provider),
    store: Layer.succeed(ObjectStore.ObjectStore, store),
    organizations: Layer.succeed(Organizations.Organizations, organizations),
    worker: options.worker ?? {},
    ...(options.messages === undefined ? {} : { messages: options.messages }),
    // One attempt per look: the Mailer's own retries would sleep on the test's clock.
    mailer: options.mailer ?? { retry: { maxAttempts: 1 } }
  })
  return { provider, store, layer }
}

/**
 * Runs `body` in the world from 2026-05-01T09:00Z: the clock is set first, since the worker's
 * timers, once started, would each fire for every minute of the 56 years a later jump skips.
 */
export const inWorld = <A, E>(
  w: { readonly layer: Layer.Layer<Mailroom.Services> },
  body: Effect.Effect<A, E, Mailroom.Services>
) => Effect.andThen(TestClock.setTime(start), Effect.provide(body, w.layer))

/** Lets the worker's fibers run until `check` holds (no time passes: the clock is the test's). */
export const until = (what: string, check: Effect.Effect<boolean, unknown, Mailroom.Services>) =>
  Effect.gen(function* () {
    for (let i = 0; i < 500; i++) {
      if (yield* check) return
      yield* Effect.yieldNow
    }
    assert.fail(`never: ${what}`)
  })

/** Moves the clock, then lets the worker's fibers take what came due. */
export const adjust = (duration: Duration.Input) =>
  Effect.andThen(TestClock.adjust(duration), Effect.repeat(Effect.yieldNow, { times: 50 }))
