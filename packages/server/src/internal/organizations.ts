// The server's organisations: those listed in the config file, or those of a PostgreSQL database,
// which sees its own changes within `cacheSeconds`.
import { Organizations } from "@mailroom/core"
import { PostgresOrganizations } from "@mailroom/postgres"
import { Duration, Layer, Redacted } from "effect"
import { type Config, ConfigError } from "../ServerConfig.js"

const fromFile = (config: Config) => {
  try {
    return Organizations.makeStatic({ serviceDomain: config.serviceDomain, organizations: config.organizations })
  } catch (cause) {
    throw new ConfigError("config", [(cause as Error).message])
  }
}

/** Throws a ConfigError when the file's organisations are invalid. */
export const make = (config: Config) => {
  const current = fromFile(config)
  const source = config.organizationsSource
  const layer =
    source.kind === "postgres"
      ? PostgresOrganizations.layer({
          url: Redacted.make(source.url),
          serviceDomain: config.serviceDomain,
          ...(source.cacheSeconds === undefined ? {} : { cacheTtl: Duration.seconds(source.cacheSeconds) }),
          ...(source.timeoutSeconds === undefined ? {} : { timeout: Duration.seconds(source.timeoutSeconds) }),
          ...(source.cacheCapacity === undefined ? {} : { cacheCapacity: source.cacheCapacity }),
          ...(source.maxConnections === undefined ? {} : { maxConnections: source.maxConnections })
        })
      : Layer.succeed(Organizations.Organizations, current)
  return { layer }
}
