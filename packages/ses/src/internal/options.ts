// The option checks the provider, the quota reader and the event source share: each unusable value is
// refused with a ConfigError naming its option, before anything is built.
import * as Adapter from "@mailroom/core/adapter"
import { type Config, Duration, Effect, Option } from "effect"

/** `input` as a positive, finite duration. */
export const positiveDuration = (
  option: string,
  input: Duration.Input
): Effect.Effect<Duration.Duration, Config.ConfigError> => {
  const duration = Duration.fromInput(input)
  return Option.isSome(duration) && Duration.isFinite(duration.value) && Duration.isPositive(duration.value)
    ? Effect.succeed(duration.value)
    : Effect.fail(Adapter.invalidOption(option, 'must be a positive duration, such as "10 seconds"'))
}

/** `value` unless it is given and blank. */
export const notBlank = (option: string, value: string | undefined): Effect.Effect<void, Config.ConfigError> =>
  value !== undefined && value.trim() === ""
    ? Effect.fail(Adapter.invalidOption(option, "must not be empty"))
    : Effect.void
