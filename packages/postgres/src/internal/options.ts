// The checks PostgresOrganizations makes of its options before it connects: each failure is core's
// `Adapter.invalidOption`, naming the option and what it must be, never its value.
import * as Adapter from "@mailroom/core/adapter"
import type * as Config from "effect/Config"
import type * as Effect from "effect/Effect"

/** The database URL, given plain or `Redacted`: `postgres://` or `postgresql://`. It holds a password, so no message shows it. */
export const databaseUrl = (url: Adapter.Secret): Effect.Effect<string, Config.ConfigError> =>
  Adapter.secretUrl("url", url, ["postgres:", "postgresql:"])
