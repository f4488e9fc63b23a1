// The message log's retention sweep: records older than the retention are purged once at start and then
// periodically, so a log never grows without bound; suppressions are never touched.
import * as Clock from "effect/Clock"
import type * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import type { MessageLog } from "../MessageLog.js"
import { duration } from "./options.js"

export interface RetentionOptions {
  readonly retention: Duration.Input
  readonly every?: Duration.Input | undefined
}

/** Checks the options, then sweeps `log` in a fiber of the scope: once now, then every `every`. */
export const start = (
  log: MessageLog,
  options: RetentionOptions
): Effect.Effect<void, Config.ConfigError, Scope.Scope> =>
  Effect.gen(function* () {
    const retention = yield* duration("retention", options.retention)
    const every = yield* duration("every", options.every ?? "1 hour")
    const sweep = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const before = new Date(now - Duration.toMillis(retention)).toISOString()
      const purged = yield* log.purge(before)
      if (purged > 0) {
        yield* Effect.logInfo(`[mailroom] retention: deleted ${purged} message records created before ${before}`)
      }
    }).pipe(
      // A database that is down now is tried again at the next sweep; the records wait meanwhile.
      Effect.catch((error) => Effect.logError(`[mailroom] retention: the sweep failed: ${error.message}`))
    )
    yield* Effect.forkScoped(Effect.repeat(sweep, Schedule.spaced(every)))
  })
