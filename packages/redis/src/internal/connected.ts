// A store on a connection: its settings checked before anything connects, then built on the client
// given (`ClientOptions`) or on a connection of its own to `url` that closes with the scope.
import type { MailroomError } from "@mailroom/core"
import type * as Adapter from "@mailroom/core/adapter"
import type * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Redis from "effect/persistence/Redis"
import type * as Scope from "effect/Scope"
import * as RedisConnection from "../RedisConnection.js"

/** Either way in: a `url` to connect to, or a `Redis` service of the caller's. */
export type Target = { readonly url: Adapter.Secret } | { readonly client: Redis.Redis["Service"] }

export const connected = <S, A, E>(
  settings: Effect.Effect<S, Config.ConfigError>,
  target: Target,
  build: (settings: S) => Effect.Effect<A, E, Redis.Redis | Scope.Scope>
): Effect.Effect<A, E | Config.ConfigError | MailroomError.Unavailable, Scope.Scope> =>
  Effect.gen(function* () {
    const checked = yield* settings
    const redis = "client" in target ? target.client : yield* RedisConnection.make({ url: target.url })
    return yield* Effect.provideService(build(checked), Redis.Redis, redis)
  })
