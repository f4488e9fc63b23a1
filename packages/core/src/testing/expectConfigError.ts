// The one check of a refused option, for every adapter's tests: building the layer fails with Effect's
// ConfigError, naming the option (as `Adapter.invalidOption` does), saying why, never quoting a secret.
import { assert } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"

export interface ExpectConfigErrorOptions {
  /** What the message must say besides the option (`/must not be empty/`). */
  readonly says?: RegExp
  /** Values the message must not hold: a password, a token, a URL with credentials. */
  readonly secrets?: ReadonlyArray<string>
}

/** What building the layer (or running the `make`) ends with; its value is not looked at. */
const attempt = <A, E, R>(
  built: Layer.Layer<A, E, R> | Effect.Effect<A, E, R>
): Effect.Effect<unknown, E, R | Scope.Scope> =>
  Layer.isLayer(built) ? Layer.build(built as Layer.Layer<A, E, R>) : (built as Effect.Effect<A, E, R>)

/**
 * Builds `layer` (or runs a `make`) and checks that it fails with a `ConfigError` whose message names
 * `option` (a name, or a path such as `["auth", "pass"]` or `["topicArns", 1]`), matches `says`, and
 * holds none of `secrets`; answers the error's message, so that `layer` and `layerConfig` can be shown
 * to fail alike.
 */
export const expectConfigError = <A, E, R>(
  built: Layer.Layer<A, E, R> | Effect.Effect<A, E, R>,
  option: string | ReadonlyArray<string | number>,
  { says, secrets = [] }: ExpectConfigErrorOptions = {}
): Effect.Effect<string, never, Exclude<R, Scope.Scope>> =>
  Effect.map(Effect.exit(Effect.scoped(attempt(built))), (exit) => {
    const path = (typeof option === "string" ? [option] : option)
      .map((name) => (typeof name === "number" ? `[${name}]` : `["${name}"]`))
      .join("")
    if (Exit.isSuccess(exit)) return assert.fail(`the layer was built; expected a ConfigError naming ${path}`)
    const error = Cause.findErrorOption(exit.cause)
    if (error._tag === "None" || !(error.value instanceof Config.ConfigError)) {
      return assert.fail(`expected a ConfigError naming ${path}, got ${Cause.pretty(exit.cause)}`)
    }
    const message = error.value.message
    // The whole path, as Effect prints it ("...\n  at ["auth"]["pass"])"), not a tail of another.
    const at = new RegExp(`\\bat ${path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?:\\)|\\n|$)`)
    assert.match(message, at, `the ConfigError names ${path}`)
    if (says !== undefined) assert.match(message, says)
    for (const secret of secrets) assert.notInclude(message, secret)
    return message
  })
