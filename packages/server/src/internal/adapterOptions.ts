// An adapter refuses an option it cannot use with Effect's ConfigError naming the option; the server
// reports it as a problem of its config file, under the section the adapter's options come from.
import { type Config, Effect, Layer, SchemaIssue } from "effect"
import { ConfigError } from "../ServerConfig.js"

const issuesOf = SchemaIssue.makeFormatterStandardSchemaV1()

const problemsOf = (section: string, error: Config.ConfigError): ReadonlyArray<string> =>
  error.cause._tag === "SchemaError"
    ? issuesOf(error.cause.issue).issues.map(
        ({ path, message }) => `${[section, ...(path ?? []).map(String)].join(".")}: ${message}`
      )
    : [`${section}: ${error.message}`]

/** `layer`, a refused option of which stops start-up as `<section>.<option>: <what it must be>`. */
export const reportedAt =
  (section: string) =>
  <A, R>(layer: Layer.Layer<A, Config.ConfigError, R>): Layer.Layer<A, ConfigError, R> =>
    Layer.catchTag(layer, "ConfigError", (error) =>
      Layer.unwrap(Effect.fail(new ConfigError("config", problemsOf(section, error))))
    )
