// A store on its own connection: its settings checked before anything connects, then built on a
// connection to `url` that closes with the scope. Every store of the package has this `layer`.
import type { MailroomError } from "@mailroom/core"
import type * as Adapter from "@mailroom/core/adapter"
import type { Config, Scope } from "effect"
import { Effect } from "effect"
import { Redis } from "effect/persistence"
import * as RedisConnection from "../RedisConnection.js"

export const connected = <S, A, E>(
  settings: Effect.Effect<S, Config.ConfigError>,
  url: Adapter.Secret,
  build: (settings: S) => Effect.Effect<A, E, Redis.Redis | Scope.Scope>
): Effect.Effect<A, E | Config.ConfigError | MailroomError.Unavailable, Scope.Scope> =>
  Effect.gen(function* () {
    const checked = yield* settings
    const redis = yield* RedisConnection.make({ url })
    return yield* Effect.provideService(build(checked), Redis.Redis, redis)
  })
