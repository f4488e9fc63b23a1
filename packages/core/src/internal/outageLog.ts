// One error line per outage interval: while a dependency is down every request fails, and a line
// each (thousands a second under load) would drown the log. Timed on the `Clock`.
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"

/** Logs `message` as an error, at most once per `every` (default 10 seconds); the others are dropped. */
export const outageLog = (every: Duration.Input = "10 seconds") => {
  const interval = Duration.toMillis(Duration.fromInputUnsafe(every))
  let lastLogged = Number.NEGATIVE_INFINITY
  return (message: string): Effect.Effect<void> =>
    Effect.flatMap(Clock.currentTimeMillis, (at) => {
      if (at - lastLogged < interval) return Effect.void
      lastLogged = at
      return Effect.logError(message)
    })
}
