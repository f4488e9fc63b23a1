// Environment variables changed for one test and put back after it, as an SDK's credential chain reads
// them: the AWS and Google chains look at variables, profile files and the home directory.
import * as Effect from "effect/Effect"

export interface EnvironmentChanges {
  /** Variables to set, or to remove (`undefined`). */
  readonly set?: Readonly<Record<string, string | undefined>>
  /** Removes every variable whose name matches first (`/^AWS_/`). */
  readonly clear?: RegExp
}

/** Runs `effect` with the environment changed, and puts every variable back as it was afterwards. */
export const withEnvironment = <A, E, R>(
  changes: EnvironmentChanges,
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const saved = { ...process.env }
      if (changes.clear !== undefined) {
        for (const name of Object.keys(process.env)) if (changes.clear.test(name)) delete process.env[name]
      }
      for (const [name, value] of Object.entries(changes.set ?? {})) {
        if (value === undefined) delete process.env[name]
        else process.env[name] = value
      }
      return saved
    }),
    () => effect,
    (saved) =>
      Effect.sync(() => {
        for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name]
        Object.assign(process.env, saved)
      })
  )

/** No AWS credentials anywhere the SDK's chain looks: no variable, no profile file, no home directory. */
export const withoutAwsCredentials = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  withEnvironment(
    {
      clear: /^AWS_/,
      set: {
        AWS_CONFIG_FILE: "/nonexistent/mailroom-test/config",
        AWS_SHARED_CREDENTIALS_FILE: "/nonexistent/mailroom-test/credentials",
        HOME: "/nonexistent/mailroom-test"
      }
    },
    effect
  )
