// The checks the package makes of its options before it connects: each failure is core's
// `Adapter.invalidOption`, naming the option and what it must be, never its value.
import * as Adapter from "@mailroom/core/adapter"
import { type Config, Effect } from "effect"

/** The Redis URL, given plain or `Redacted`: `redis://` or `rediss://`. Its value may hold a password, so no message shows it. */
export const redisUrl = (url: Adapter.Secret): Effect.Effect<string, Config.ConfigError> => {
  const value = Adapter.secretValue(url)
  const parsed = typeof value === "string" ? URL.parse(value) : null
  return parsed !== null && (parsed.protocol === "redis:" || parsed.protocol === "rediss:")
    ? Effect.succeed(value)
    : Effect.fail(Adapter.invalidOption("url", "must be a redis:// or rediss:// URL"))
}
