// The server's organisations: those listed in the config file, which a reload replaces as a whole,
// or those of a PostgreSQL database, which sees its own changes within `cacheSeconds`.
import { Organizations } from "@mailroom/core"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { type Config, ServerConfigError } from "../ServerConfig.js"
import type { SqlConnections } from "./connections.js"
import { lazy } from "./lazy.js"

const fromFile = (config: Config) => {
  try {
    return Organizations.makeStatic({ serviceDomain: config.serviceDomain, organizations: config.organizations })
  } catch (cause) {
    throw new ServerConfigError({ source: config.source ?? "config", problems: [(cause as Error).message] })
  }
}

/**
 * Throws a ServerConfigError when the file's organisations are invalid. Those of PostgreSQL are read
 * through the pool `sql` opens for their URL, which the message log shares when it names the same one.
 */
export const make = (config: Config, sql: SqlConnections) => {
  // Requests already running finish with the organisations they started with.
  let current = fromFile(config)
  const source = config.organizationsSource
  const layer =
    source.kind === "postgres"
      ? lazy(async () =>
          (await import("@mailroom/postgres")).PostgresOrganizations.layerFromClient({
            serviceDomain: config.serviceDomain,
            ...(source.cacheSeconds === undefined ? {} : { cacheTtl: Duration.seconds(source.cacheSeconds) }),
            ...(source.timeoutSeconds === undefined ? {} : { timeout: Duration.seconds(source.timeoutSeconds) }),
            ...(source.cacheCapacity === undefined ? {} : { cacheCapacity: source.cacheCapacity })
          })
        ).pipe(Layer.provide(sql({ kind: "postgres", url: source.url })))
      : Layer.succeed(Organizations.Organizations, {
          authenticate: (credential) => Effect.suspend(() => current.authenticate(credential)),
          find: (orgId) => Effect.suspend(() => current.find(orgId)),
          verifiedDomains: (principal) => Effect.suspend(() => current.verifiedDomains(principal))
        })

  /**
   * Serves the organisations of `next` from now on; throws a ServerConfigError, keeping the running ones,
   * when they are invalid. Answers the other sections of `next` that differ, which need a restart.
   */
  const reload = (next: Config): ReadonlyArray<string> => {
    if (source.kind !== "config" || next.organizationsSource.kind !== "config") {
      throw new ServerConfigError({
        source: next.source ?? "config",
        problems: [
          "organizations: only organisations listed in the config file are reloaded; restart to change their source"
        ]
      })
    }
    current = fromFile(next)
    const { organizations: _organizations, organizationsSource: _source, source: _file, ...others } = config
    return Object.keys(others).filter(
      (key) => JSON.stringify(config[key as keyof Config]) !== JSON.stringify(next[key as keyof Config])
    )
  }
  return { layer, reload }
}
