// RedisConnection's options: a URL that is not Redis's is refused before anything connects, naming
// the option and never its value (which may hold a password); a good one read from Config connects.
import { assert, it } from "@effect/vitest"
import { expectConfigError } from "@mailroom/core/testing"
import { startRedisServer } from "@mailroom/test-support"
import { Config, ConfigProvider, Effect, Redacted } from "effect"
import { Redis } from "effect/persistence"
import { afterAll, describe } from "vitest"
import { RedisConnection } from "../src/index.js"

const redis = await startRedisServer()
afterAll(() => redis.dispose())

const fromEnv = (values: Record<string, string>) => ConfigProvider.layer(ConfigProvider.fromUnknown(values))

describe("RedisConnection", () => {
  const notRedis = ["http://mailroom:hunter2@127.0.0.1:6379", "127.0.0.1:6379", ""]

  it.effect("make and layer refuse a url that is not redis:// or rediss:// with a ConfigError naming it", () =>
    Effect.gen(function* () {
      for (const url of notRedis) {
        yield* expectConfigError(RedisConnection.make({ url }), "url", { secrets: ["hunter2"] })
        yield* expectConfigError(RedisConnection.layer({ url: Redacted.make(url) }), "url", { secrets: ["hunter2"] })
      }
    })
  )

  it.effect("layerConfig fails alike for a URL it read, and connects to a good one", () =>
    Effect.gen(function* () {
      const layer = RedisConnection.layerConfig({ url: Config.Redacted("REDIS_URL") })
      yield* expectConfigError(layer, "url", { secrets: ["hunter2"] }).pipe(
        Effect.provide(fromEnv({ REDIS_URL: "http://mailroom:hunter2@127.0.0.1:6379" }))
      )
      const pong = yield* Effect.flatMap(Redis.Redis, (client) => client.send("PING")).pipe(
        Effect.provide(layer),
        Effect.provide(fromEnv({ REDIS_URL: redis.url }))
      )
      assert.strictEqual(pong, "PONG")
    })
  )
})
