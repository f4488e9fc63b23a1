// The checks every module of the package makes of its options before it builds anything: each
// failure is core's `Adapter.invalidOption`, naming the option and what it must be, never its value.
import * as Adapter from "@mailroom/core/adapter"
import type * as Config from "effect/Config"
import * as Effect from "effect/Effect"

/** An option's name, or its path within the options (`["limits", "maxRecipients"]`). */
type Option = string | ReadonlyArray<PropertyKey>

/** A directory option: any path but the empty one, which would quietly mean the working directory. */
export const directory = (option: Option, dir: string): Effect.Effect<string, Config.ConfigError> =>
  typeof dir === "string" && dir !== ""
    ? Effect.succeed(dir)
    : Effect.fail(Adapter.invalidOption(option, "must be a directory path, not empty"))
