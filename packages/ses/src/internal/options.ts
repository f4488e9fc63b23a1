// The option checks the provider, the quota reader and the event source share: each unusable value is
// refused with a ConfigError naming its option, before anything is built.
import * as Adapter from "@mailroom/core/adapter"
import type * as Config from "effect/Config"
import * as Effect from "effect/Effect"

/** `value` unless it is given and blank. */
export const notBlank = (option: string, value: string | undefined): Effect.Effect<void, Config.ConfigError> =>
  value !== undefined && value.trim() === ""
    ? Effect.fail(Adapter.invalidOption(option, "must not be empty"))
    : Effect.void
