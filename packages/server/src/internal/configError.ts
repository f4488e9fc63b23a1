// The server's one configuration error, and how an adapter's refusal of an option becomes one.
import { Cause, type Config, Data, Effect, Layer, type SchemaIssue } from "effect"

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

const pathText = (path: ReadonlyArray<PropertyKey>) => path.map(String).join(".")

/** One problem per leaf of the issue, each "<section>.<option>: <what is wrong>". */
const problemsOf = (
  section: string,
  issue: SchemaIssue.Issue,
  path: ReadonlyArray<PropertyKey> = []
): Array<string> => {
  switch (issue._tag) {
    case "Pointer":
      return problemsOf(section, issue.issue, [...path, ...issue.path])
    case "Composite":
      return issue.issues.flatMap((inner) => problemsOf(section, inner, path))
    default: {
      const where = [section === "config" ? "" : section, pathText(path)].filter((part) => part !== "").join(".")
      const annotations = (issue as { annotations?: { message?: unknown } }).annotations
      const message = typeof annotations?.message === "string" ? annotations.message : String(issue)
      return [`${where}: ${message}`]
    }
  }
}

/** An adapter's `ConfigError` as the problems of the config section it was built from. */
export const fromAdapter = (section: string, error: Config.ConfigError): ServerConfigError => {
  // `section` "config" is the whole file: the option's own path is the field.
  const cause = error.cause
  const problems =
    cause._tag === "SchemaError" ? problemsOf(section, cause.issue) : [`${section}: ${cause.message ?? String(cause)}`]
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
