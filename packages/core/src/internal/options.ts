// The option checks core's own services and every adapter make: each failure is Effect's
// ConfigError naming the option, never its value. Re-exported by `@mailroom/core/adapter`.
import * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"

/** The largest upload core presigns by default (25 MiB): what a store serving its own URLs accepts unless told. */
export const defaultMaxUploadBytes = 25 * 1024 * 1024

/** How every adapter takes a secret: plain, or `Redacted` (as `Config.redacted` reads it). */
export type Secret = string | Redacted.Redacted<string>

/** The value of a secret given either way. */
export const secretValue = (secret: Secret): string => (Redacted.isRedacted(secret) ? Redacted.value(secret) : secret)

/**
 * The error an adapter's `make` fails with when an option is wrong: Effect's own `ConfigError`, so
 * `layerConfig` fails with one error type whether the value could not be read or was read but is
 * unusable. The message names the option (its path) and says what it must be; it never carries the
 * value, which may be a secret.
 */
export const invalidOption = (option: string | ReadonlyArray<PropertyKey>, message: string): Config.ConfigError =>
  new Config.ConfigError(
    new Schema.SchemaError(
      new SchemaIssue.Pointer(typeof option === "string" ? [option] : option, new SchemaIssue.InvalidValue({ message }))
    )
  )

/**
 * A duration option: one Effect reads (`"5 seconds"`, or milliseconds), finite and above zero, or zero
 * too where `zero` allows it (a cache that can be turned off).
 */
export const duration = (
  option: string | ReadonlyArray<PropertyKey>,
  input: Duration.Input,
  { zero = false }: { readonly zero?: boolean } = {}
): Effect.Effect<Duration.Duration, Config.ConfigError> => {
  const decoded = Duration.fromInput(input)
  return decoded._tag === "Some" &&
    Duration.isFinite(decoded.value) &&
    (Duration.isPositive(decoded.value) || (zero && Duration.isZero(decoded.value)))
    ? Effect.succeed(decoded.value)
    : Effect.fail(
        invalidOption(
          option,
          `must be a finite duration${zero ? "" : " above zero"}, such as "5 seconds" or 5000 (milliseconds)`
        )
      )
}

/** A count option: a whole number above zero. */
export const positiveInteger = (
  option: string | ReadonlyArray<PropertyKey>,
  value: number
): Effect.Effect<number, Config.ConfigError> =>
  Number.isSafeInteger(value) && value > 0
    ? Effect.succeed(value)
    : Effect.fail(invalidOption(option, "must be a whole number above zero"))

/**
 * A URL option that may hold a password (a database's, a Redis's), given plain or `Redacted`: one of
 * `protocols` (`["redis:", "rediss:"]`). No message shows its value.
 */
export const secretUrl = (
  option: string | ReadonlyArray<PropertyKey>,
  url: Secret,
  protocols: ReadonlyArray<string>
): Effect.Effect<string, Config.ConfigError> => {
  const value = secretValue(url)
  const parsed = typeof value === "string" ? URL.parse(value) : null
  return parsed !== null && protocols.includes(parsed.protocol)
    ? Effect.succeed(value)
    : Effect.fail(invalidOption(option, `must be a ${protocols.map((p) => `${p}//`).join(" or ")} URL`))
}
