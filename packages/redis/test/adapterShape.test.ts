// The adapter shape, checked by the compiler (CONTRIBUTING.md): `pnpm run typecheck` fails when a
// module drifts from it; vitest only runs the file.
import type { IdempotencyStore, MailroomError, SendRateLimiter } from "@mailroom/core"
import type * as Adapter from "@mailroom/core/adapter"
import type { PersistedQueue, Redis } from "effect/persistence"
import { describe, expectTypeOf, it } from "vitest"
import { RedisConnection, RedisIdempotencyStore, RedisQueueStore, RedisRateLimitStore } from "../src/index.js"

describe("the adapter shape", () => {
  it("RedisConnection is an AdapterModule of Effect's Redis", () => {
    expectTypeOf(RedisConnection).toExtend<
      Adapter.AdapterModule<typeof Redis.Redis, RedisConnection.ConfigOptions, never, MailroomError.Unavailable>
    >()
  })

  it("each store is an AdapterModule of its service, with a client of your own or from the context", () => {
    expectTypeOf(RedisIdempotencyStore).toExtend<
      Adapter.AdapterModule<
        typeof IdempotencyStore.IdempotencyStore,
        RedisIdempotencyStore.ConfigOptions,
        RedisIdempotencyStore.ClientOptions,
        MailroomError.Unavailable
      > &
        Adapter.AdapterFromClient<
          typeof IdempotencyStore.IdempotencyStore,
          RedisIdempotencyStore.CommonOptions,
          Redis.Redis
        >
    >()
    expectTypeOf(RedisQueueStore).toExtend<
      Adapter.AdapterModule<
        typeof PersistedQueue.PersistedQueueStore,
        RedisQueueStore.ConfigOptions,
        RedisQueueStore.ClientOptions,
        MailroomError.Unavailable
      > &
        Adapter.AdapterFromClient<typeof PersistedQueue.PersistedQueueStore, RedisQueueStore.CommonOptions, Redis.Redis>
    >()
    expectTypeOf(RedisRateLimitStore).toExtend<
      Adapter.AdapterModule<
        typeof SendRateLimiter.RateLimitStore,
        RedisRateLimitStore.ConfigOptions,
        RedisRateLimitStore.ClientOptions,
        MailroomError.Unavailable
      > &
        Adapter.AdapterFromClient<typeof SendRateLimiter.RateLimitStore, RedisRateLimitStore.CommonOptions, Redis.Redis>
    >()
  })
})
