// `sending.rateLimit` as a SendRateLimiter layer: one bucket per provider account and region, on Redis
// or in memory, at a fixed rate or at the SES account's MaxSendRate, read again every `refresh`.
import { createHash } from "node:crypto"
import { type MailroomError, SendRateLimiter } from "@mailroom/core"
import type * as EffectConfig from "effect/Config"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Redis from "effect/persistence/Redis"
import * as Redacted from "effect/Redacted"
import type { Config } from "../ServerConfig.js"
import { lazy } from "./lazy.js"

const fingerprint = (...parts: ReadonlyArray<string | undefined>) =>
  createHash("sha256")
    .update(parts.map((p) => p ?? "").join("\u0000"))
    .digest("hex")
    .slice(0, 16)

/**
 * The bucket's key: instances sending through one account in one region share it. Credentials are
 * only fingerprinted, never written to Redis; with the SDK's credential chain every instance is taken
 * to run as the same account.
 */
export const accountKey = (provider: Config["provider"]): string => {
  switch (provider.kind) {
    case "ses":
      return `ses:${provider.region}:${fingerprint(provider.accessKeyId, provider.endpoint)}`
    case "postmark":
      return `postmark:${fingerprint(provider.serverToken, provider.requestHost)}`
    case "resend":
      return `resend:${fingerprint(provider.apiKey, provider.baseUrl)}`
    case "outbox":
      return `outbox:${fingerprint(provider.dir)}`
    case "smtp":
      return `smtp:${fingerprint(provider.host, String(provider.port ?? ""), provider.auth?.user)}`
    // One bucket for the chain: the limiter paces sends before the failover picks a provider.
    case "failover":
      return `failover:${fingerprint(...provider.providers.map((p) => accountKey(p.provider)))}`
  }
}

export interface RateLimiting {
  readonly layer:
    | Layer.Layer<SendRateLimiter.SendRateLimiter, MailroomError.Unavailable | EffectConfig.ConfigError>
    | undefined
  /** Why the provider is not ready, if it is not: the SES quota could not be read at the last try. */
  readonly providerProblem: () => string | undefined
}

export const make = (
  config: Config,
  redis: (url: string) => Layer.Layer<Redis.Redis, EffectConfig.ConfigError | MailroomError.Unavailable>
): RateLimiting => {
  let problem: string | undefined
  const limit = config.sending.rateLimit
  if (limit === undefined) return { layer: undefined, providerProblem: () => undefined }
  const shared = limit.store
  const store =
    shared.kind === "redis"
      ? lazy(async () =>
          (await import("@mailroom/redis")).RedisRateLimitStore.layerFromClient(
            shared.prefix === undefined ? {} : { prefix: shared.prefix }
          )
        ).pipe(Layer.provide(redis(shared.url)))
      : SendRateLimiter.layerStoreMemory
  const key = accountKey(config.provider)
  const wait = limit.wait as Duration.Input
  const burst = limit.burst === undefined ? {} : { burst: limit.burst }
  const { rate } = limit
  if ("perSecond" in rate) {
    return {
      layer: SendRateLimiter.layer({ key, rate: { perSecond: rate.perSecond, ...burst }, wait }).pipe(
        Layer.provide(store)
      ),
      providerProblem: () => undefined
    }
  }
  const provider = config.provider
  if (provider.kind !== "ses") throw new Error("sending.rateLimit.from: the config allows ses only with SES")
  const layer = Layer.effect(
    SendRateLimiter.SendRateLimiter,
    Effect.gen(function* () {
      const { SesSendQuota } = yield* Effect.promise(() => import("@mailroom/ses"))
      const read = yield* SesSendQuota.make({
        region: provider.region,
        ...(provider.endpoint === undefined ? {} : { endpoint: provider.endpoint }),
        ...(provider.accessKeyId === undefined ? {} : { accessKeyId: Redacted.make(provider.accessKeyId) }),
        ...(provider.secretAccessKey === undefined ? {} : { secretAccessKey: Redacted.make(provider.secretAccessKey) })
      })
      // Without a rate nothing can be paced: a quota that cannot be read at start-up stops the server.
      let perSecond = (yield* read).maxSendRate
      yield* Effect.log(`[mailroom] sending paced to the SES account's ${perSecond} recipients per second`)
      const refresh = read.pipe(
        Effect.tap((quota) =>
          Effect.sync(() => {
            problem = undefined
            perSecond = quota.maxSendRate
          })
        ),
        Effect.catch((error) => {
          problem = error.message
          return Effect.logError(`[mailroom] ${error.message}; keeping ${perSecond} recipients per second`)
        })
      )
      yield* refresh.pipe(
        Effect.delay(Duration.fromInputUnsafe(rate.refresh as Duration.Input)),
        Effect.forever,
        Effect.forkScoped
      )
      return yield* SendRateLimiter.make({ key, rate: Effect.sync(() => ({ perSecond, ...burst })), wait })
    })
  ).pipe(Layer.provide(store))
  return { layer, providerProblem: () => problem }
}
