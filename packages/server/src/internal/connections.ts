// The connections the server opens, once each however many parts of the config name them: one per
// Redis URL, shared by the stores on it and pinged by readiness.
import type { MailroomError } from "@mailroom/core"
import { type Config as EffectConfig, type Layer, Redacted } from "effect"
import type { Redis } from "effect/persistence"
import type { Config } from "../ServerConfig.js"
import { lazy } from "./lazy.js"

/**
 * One connection layer per Redis URL: a layer is built once per value within one runtime, so the
 * idempotency store and the events queue on the same Redis share one connection.
 */
export const redisConnections = () => {
  const connections = new Map<string, Layer.Layer<Redis.Redis, EffectConfig.ConfigError | MailroomError.Unavailable>>()
  return (url: string) => {
    let connection = connections.get(url)
    if (connection === undefined) {
      connection = lazy(async () =>
        (await import("@mailroom/redis")).RedisConnection.layer({ url: Redacted.make(url) })
      )
      connections.set(url, connection)
    }
    return connection
  }
}

/** Every Redis the config names, once each: readiness pings each of them. */
export const redisUrls = (config: Config): ReadonlyArray<string> => [
  ...new Set([
    ...(config.idempotency.kind === "redis" ? [config.idempotency.url] : []),
    ...(config.events?.queue.kind === "redis" ? [config.events.queue.url] : []),
    ...(config.sending.rateLimit?.store.kind === "redis" ? [config.sending.rateLimit.store.url] : [])
  ])
]
