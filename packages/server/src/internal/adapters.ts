// The adapter layers a config names (storage, provider, Idempotency-Keys); each vendor's package is
// imported only when the config names it (lazy).
import { type EmailProvider, IdempotencyStore, type MailroomError, type ObjectStore } from "@mailroom/core"
import { DiskIdempotencyStore, DiskObjectStore, OutboxEmailProvider } from "@mailroom/local"
import type * as EffectConfig from "effect/Config"
import type * as Duration from "effect/Duration"
import * as Layer from "effect/Layer"
import type * as Redis from "effect/persistence/Redis"
import * as Redacted from "effect/Redacted"
import type { Config, ResendProviderConfig } from "../ServerConfig.js"
import * as Failover from "./failoverProvider.js"
import { lazy } from "./lazy.js"
import * as Smtp from "./smtpProvider.js"

/** `{ [key]: value }`, or nothing when the value is absent (the adapters' options are exact). */
export const optional = <K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } =>
  (value === undefined ? {} : { [key]: value }) as { [P in K]?: V }

/** The object store of the `storage` section. */
export const storageLayer = (
  storage: Config["storage"],
  publicUrl: string
): Layer.Layer<ObjectStore.ObjectStore, EffectConfig.ConfigError> => {
  switch (storage.kind) {
    case "local":
      return DiskObjectStore.layer({
        dir: storage.dir,
        publicUrl,
        signingSecret: Redacted.make(storage.signingSecret),
        // The config checked it is a duration Effect reads.
        ...optional("transferIdleTimeout", storage.transferIdleTimeout as Duration.Input | undefined),
        ...optional("maxOpenFiles", storage.maxOpenFiles)
      })
    case "s3":
      return lazy(async () =>
        (await import("@mailroom/s3")).S3ObjectStore.layer({
          bucket: storage.bucket,
          region: storage.region,
          ...optional("endpoint", storage.endpoint),
          ...optional("forcePathStyle", storage.forcePathStyle),
          ...optional("accessKeyId", storage.accessKeyId),
          ...optional(
            "secretAccessKey",
            storage.secretAccessKey === undefined ? undefined : Redacted.make(storage.secretAccessKey)
          )
        })
      )
    case "gcs":
      return lazy(async () =>
        (await import("@mailroom/gcs")).GcsObjectStore.layer({
          bucket: storage.bucket,
          ...optional("projectId", storage.projectId),
          ...optional("keyFilename", storage.keyFilename),
          ...optional("apiEndpoint", storage.apiEndpoint)
        })
      )
  }
}

/** The email provider of the `provider` section. */
export const providerLayer = (
  provider: Config["provider"]
): Layer.Layer<EmailProvider.EmailProvider, EffectConfig.ConfigError> => {
  switch (provider.kind) {
    case "outbox":
      return OutboxEmailProvider.layer({
        dir: provider.dir,
        ...optional("sandbox", provider.sandbox),
        ...optional("suppressedRecipients", provider.suppressedRecipients),
        ...optional("paused", provider.paused),
        // The config checked it is a duration Effect reads.
        ...optional("simulatedDelay", provider.simulatedDelay as Duration.Input | undefined)
      })
    case "ses":
      return lazy(async () =>
        (await import("@mailroom/ses")).SesEmailProvider.layer({
          region: provider.region,
          ...optional("endpoint", provider.endpoint),
          ...optional("configurationSetName", provider.configurationSetName),
          ...optional("simulator", provider.simulator),
          ...optional("timeout", provider.timeout as Duration.Input | undefined),
          ...optional(
            "accessKeyId",
            provider.accessKeyId === undefined ? undefined : Redacted.make(provider.accessKeyId)
          ),
          ...optional(
            "secretAccessKey",
            provider.secretAccessKey === undefined ? undefined : Redacted.make(provider.secretAccessKey)
          )
        })
      )
    case "smtp":
      return lazy(async () => (await import("@mailroom/smtp")).SmtpEmailProvider.layer(Smtp.options(provider)))
    case "postmark":
      return lazy(async () =>
        (await import("@mailroom/postmark")).PostmarkEmailProvider.layer({
          serverToken: Redacted.make(provider.serverToken),
          ...optional("requestHost", provider.requestHost),
          ...optional("useHttps", provider.useHttps),
          ...optional("simulator", provider.simulator),
          ...optional("timeout", provider.timeout as Duration.Input | undefined)
        })
      )
    case "resend":
      return lazy(async () => (await import("@mailroom/resend")).ResendEmailProvider.layer(resendOptions(provider)))
    case "failover":
      return Failover.layer(provider, providerLayer)
  }
}

const resendOptions = (provider: ResendProviderConfig) => ({
  apiKey: Redacted.make(provider.apiKey),
  ...optional("baseUrl", provider.baseUrl),
  ...optional("timeout", provider.timeout as Duration.Input | undefined)
})

/** Where Idempotency-Keys live (the `idempotency` section); a Redis through its shared connection. */
export const idempotencyLayer = (
  idempotency: Config["idempotency"],
  redis: (url: string) => Layer.Layer<Redis.Redis, EffectConfig.ConfigError | MailroomError.Unavailable>
) => {
  switch (idempotency.kind) {
    case "memory":
      return IdempotencyStore.layerMemory()
    case "local":
      return DiskIdempotencyStore.layer({ dir: idempotency.dir })
    case "redis":
      return lazy(async () =>
        (await import("@mailroom/redis")).RedisIdempotencyStore.layerFromClient(optional("prefix", idempotency.prefix))
      ).pipe(Layer.provide(redis(idempotency.url)))
  }
}
