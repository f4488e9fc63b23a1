// The server's one configuration error, and how an adapter's refusal of an option becomes one.
import * as Cause from "effect/Cause"
import type * as Config from "effect/Config"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SchemaIssue from "effect/SchemaIssue"

/** A config that cannot be used; `problems` name each field ("storage.publicUrl: must be ..."). */
export class ServerConfigError extends Data.TaggedError("ServerConfigError")<{
  /** The file (or "config" for one given as a value). */
  readonly source: string
  readonly problems: ReadonlyArray<string>
}> {
  override get message(): string {
    return `${this.source} is not a valid mailroom config:\n${this.problems.map((p) => `  - ${p}`).join("\n")}`
  }
}

/** True for a ServerConfigError (also from another copy of the package, by its tag). */
export const isServerConfigError = (u: unknown): u is ServerConfigError =>
  typeof u === "object" && u !== null && (u as { _tag?: unknown })._tag === "ServerConfigError"

// Effect's own formatter: one message per leaf of the issue, an option's `invalidOption` message as is.
const formatIssue = SchemaIssue.makeFormatterStandardSchemaV1()

/** `section` and the option's path as the config file writes fields: `storage.credentials.private_key`, `events.webhooks[1]`. */
const fieldOf = (section: string, path: ReadonlyArray<PropertyKey>) =>
  path.reduce<string>(
    (out, key) => (typeof key === "number" ? `${out}[${key}]` : out === "" ? String(key) : `${out}.${String(key)}`),
    section
  )

/**
 * An adapter's `ConfigError` as the problems of the config section it was built from, each
 * "<section>.<option>: <what is wrong>"; `section` "" for an option of the file's top level.
 */
export const fromAdapter = (section: string, error: Config.ConfigError): ServerConfigError => {
  const cause = error.cause
  const problems =
    cause._tag === "SchemaError"
      ? formatIssue(cause.issue).issues.map(
          ({ path, message }) =>
            `${fieldOf(
              section,
              (path ?? []).map((p) => (typeof p === "object" && p !== null ? p.key : p))
            )}: ${message}`
        )
      : [`${section || "config"}: ${cause.message ?? String(cause)}`]
  return new ServerConfigError({ source: "config", problems })
}

/** The layer, its `ConfigError` reported against the section of the config it was built from. */
export const inSection = <A, E, R>(
  section: string,
  layer: Layer.Layer<A, E | Config.ConfigError, R>
): Layer.Layer<A, Exclude<E, Config.ConfigError> | ServerConfigError, R> =>
  Layer.catchCause(layer, (cause) => {
    const error = Cause.squash(cause)
    const failed: Effect.Effect<Layer.Layer<A>, Exclude<E, Config.ConfigError> | ServerConfigError> = isConfigError(
      error
    )
      ? Effect.fail(fromAdapter(section, error))
      : Effect.failCause(cause as Cause.Cause<Exclude<E, Config.ConfigError>>)
    return Layer.unwrap(failed)
  })

export const isConfigError = (u: unknown): u is Config.ConfigError =>
  typeof u === "object" && u !== null && (u as { _tag?: unknown })._tag === "ConfigError"
