// The checks PostgresOrganizations makes of its options before it connects: each failure is core's
// `Adapter.invalidOption`, naming the option and what it must be, never its value.
import * as Adapter from "@mailroom/core/adapter"
import { type Config, Duration, Effect } from "effect"

/** A duration option: one Effect reads, finite, and above zero unless `zero` is allowed. */
export const duration = (
  option: string,
  input: Duration.Input,
  { zero = false }: { readonly zero?: boolean } = {}
): Effect.Effect<Duration.Duration, Config.ConfigError> => {
  const decoded = Duration.fromInput(input)
  return decoded._tag === "Some" &&
    Duration.isFinite(decoded.value) &&
    (Duration.isPositive(decoded.value) || (zero && Duration.isZero(decoded.value)))
    ? Effect.succeed(decoded.value)
    : Effect.fail(
        Adapter.invalidOption(option, `must be a finite duration${zero ? "" : " above zero"}, such as "5 seconds"`)
      )
}

/** A count option: a whole number above zero. */
export const positiveInteger = (option: string, value: number): Effect.Effect<number, Config.ConfigError> =>
  Number.isSafeInteger(value) && value > 0
    ? Effect.succeed(value)
    : Effect.fail(Adapter.invalidOption(option, "must be a whole number above zero"))

/** The database URL, given plain or `Redacted`: `postgres://` or `postgresql://`. It holds a password, so no message shows it. */
export const databaseUrl = (url: Adapter.Secret): Effect.Effect<string, Config.ConfigError> => {
  const value = Adapter.secretValue(url)
  const parsed = typeof value === "string" ? URL.parse(value) : null
  return parsed !== null && (parsed.protocol === "postgres:" || parsed.protocol === "postgresql:")
    ? Effect.succeed(value)
    : Effect.fail(Adapter.invalidOption("url", "must be a postgres:// or postgresql:// URL"))
}
