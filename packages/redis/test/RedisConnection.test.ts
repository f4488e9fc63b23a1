// RedisConnection's options: a URL that is not Redis's is refused before anything connects, naming
// the option and never its value (which may hold a password); a good one read from Config connects.
import { assert, it } from "@effect/vitest"
import { startRedisServer } from "@mailroom/test-support"
import { Config, ConfigProvider, Effect, Layer, Redacted } from "effect"
import { Redis } from "effect/persistence"
import { afterAll, describe } from "vitest"
import { RedisConnection } from "../src/index.js"

const redis = await startRedisServer()
afterAll(() => redis.dispose())

const buildFailure = <A, E>(layer: Layer.Layer<A, E>) => Effect.flip(Effect.scoped(Layer.build(layer)))
const fromEnv = (values: Record<string, string>) => ConfigProvider.layer(ConfigProvider.fromUnknown(values))

describe("RedisConnection", () => {
  const notRedis = ["http://mailroom:hunter2@127.0.0.1:6379", "127.0.0.1:6379", ""]

  it.effect("make and layer refuse a url that is not redis:// or rediss:// with a ConfigError naming it", () =>
    Effect.gen(function* () {
      for (const url of notRedis) {
        for (const error of [
          yield* Effect.flip(Effect.scoped(RedisConnection.make({ url }))),
          yield* buildFailure(RedisConnection.layer({ url: Redacted.make(url) }))
        ]) {
          assert.strictEqual(error._tag, "ConfigError", url)
          assert.include(error.message, `["url"]`)
          assert.notInclude(error.message, "hunter2")
        }
      }
    })
  )

  it.effect("layerConfig fails alike for a URL it read, and connects to a good one", () =>
    Effect.gen(function* () {
      const layer = RedisConnection.layerConfig({ url: Config.Redacted("REDIS_URL") })
      const refused = yield* buildFailure(layer).pipe(
        Effect.provide(fromEnv({ REDIS_URL: "http://mailroom:hunter2@127.0.0.1:6379" }))
      )
      assert.strictEqual(refused._tag, "ConfigError")
      assert.include(refused.message, `["url"]`)
      assert.notInclude(refused.message, "hunter2")
      const pong = yield* Effect.flatMap(Redis.Redis, (client) => client.send("PING")).pipe(
        Effect.provide(layer),
        Effect.provide(fromEnv({ REDIS_URL: redis.url }))
      )
      assert.strictEqual(pong, "PONG")
    })
  )
})
