// The server's one rule for dependencies at start-up: each one the config names is asked once, with a
// deadline, and one that cannot be used stops start-up with a message naming its field and the cause.
import { EmailProvider, MailroomError, ObjectStore, Organizations, type ProviderError } from "@mailroom/core"
import * as Cause from "effect/Cause"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { Config } from "../ServerConfig.js"

/** A dependency the config names could not be used at start-up; `problems` name each field and cause. */
export class ServerStartError extends Data.TaggedError("ServerStartError")<{
  readonly problems: ReadonlyArray<string>
}> {
  override get message(): string {
    return `mailroom could not start:\n${this.problems.map((p) => `  - ${p}`).join("\n")}`
  }
}

/** True for a ServerStartError (also from another copy of the package, by its tag). */
export const isServerStartError = (u: unknown): u is ServerStartError =>
  typeof u === "object" && u !== null && (u as { _tag?: unknown })._tag === "ServerStartError"

/** Why the server cannot listen, as a ServerStartError naming the port and how to choose another. */
export const listenError = (error: Error & { readonly code?: string }, port: number, host: string): Error => {
  const another = `choose another with the PORT environment variable (PORT=${port === 3000 ? 3001 : 3000}) or "port" in the config`
  switch (error.code) {
    case "EADDRINUSE":
      return new ServerStartError({
        problems: [
          `port: ${port} is already in use on ${host} (another mailroom, or another server): stop it, or ${another}`
        ]
      })
    case "EACCES":
      return new ServerStartError({ problems: [`port: ${port} may not be used by this user on ${host}: ${another}`] })
    case "EADDRNOTAVAIL":
      return new ServerStartError({ problems: [`HOST: ${host} is not an address of this machine`] })
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return new ServerStartError({
        problems: [`HOST: ${host} is not an address, and no address was found for it (${error.code})`]
      })
    default:
      return new ServerStartError({ problems: [`port: cannot listen on ${host} port ${port}: ${error.message}`] })
  }
}

/** How long each dependency has to answer at start-up (Redis's connect has its client's own 5 s). */
export const deadline = Duration.seconds(5)

/** The passwords of the URLs the config names: never repeated in a message, even when a driver echoes one. */
const secretsOf = (config: Config): ReadonlyArray<string> =>
  [
    config.organizationsSource.kind === "postgres" ? config.organizationsSource.url : undefined,
    config.idempotency.kind === "redis" ? config.idempotency.url : undefined,
    config.events?.queue.kind === "redis" ? config.events.queue.url : undefined,
    config.sending.rateLimit?.store.kind === "redis" ? config.sending.rateLimit.store.url : undefined
  ].flatMap((url) => {
    if (url === undefined || !URL.canParse(url)) return []
    const password = decodeURIComponent(new URL(url).password)
    return password.length >= 4 ? [password, url] : [url]
  })

/** Each distinct message down an error's causes ("Redis at ... cannot be reached: connect ECONNREFUSED"), secrets taken out. */
export const describe = (error: unknown, secrets: ReadonlyArray<string>): string => {
  const messages: Array<string> = []
  for (let at = error, depth = 0; at instanceof Error && depth < 4; at = at.cause, depth++) {
    const text = at.message.trim()
    if (text !== "" && !messages.some((m) => m.includes(text))) messages.push(text)
  }
  const text = messages.length === 0 ? String(error) : messages.join(": ")
  return secrets.reduce((out, secret) => out.split(secret).join("<redacted>"), text)
}

/** Where each Redis URL is named in the config, so a Redis that cannot be reached names its field. */
export const redisFields = (config: Config): ReadonlyMap<string, string> => {
  const fields = new Map<string, Array<string>>()
  const add = (url: string | undefined, field: string) => {
    if (url !== undefined) fields.set(url, [...(fields.get(url) ?? []), field])
  }
  add(config.idempotency.kind === "redis" ? config.idempotency.url : undefined, "idempotency.url")
  add(config.events?.queue.kind === "redis" ? config.events.queue.url : undefined, "events.queue.url")
  const store = config.sending.rateLimit?.store
  add(store?.kind === "redis" ? store.url : undefined, "sending.rateLimit.store.url")
  return new Map([...fields].map(([url, names]) => [url, names.join(", ")]))
}

/**
 * The layer, an outage it fails with (`Unavailable`) saying which field of the config names what
 * could not be reached; `start` reports it as a ServerStartError.
 */
export const asDependency = <A, E, R>(
  field: string,
  config: Config,
  layer: Layer.Layer<A, E, R>
): Layer.Layer<A, E, R> =>
  Layer.catchCause(layer, (cause) => {
    const error = Cause.squash(cause)
    return Layer.unwrap(
      MailroomError.isUnavailable(error)
        ? Effect.fail(
            new MailroomError.Unavailable({
              message: `${field}: ${describe(error, secretsOf(config))}`,
              cause: error
            }) as E
          )
        : Effect.failCause(cause)
    )
  })

/** The provider's field a failure of `verify` points to: where the vendor is reached, or its credentials. */
const providerField = (provider: Config["provider"], unreachable: boolean): string => {
  switch (provider.kind) {
    case "ses":
      if (!unreachable) return "provider.accessKeyId"
      return provider.endpoint === undefined ? "provider.region" : "provider.endpoint"
    case "postmark":
      return unreachable ? "provider.requestHost" : "provider.serverToken"
    case "resend":
      return unreachable ? "provider.baseUrl" : "provider.apiKey"
    case "smtp":
      return unreachable ? "provider.host" : "provider.auth"
    default:
      return "provider"
  }
}

/** Whether a provider's failure is about reaching it rather than about its credentials. */
const isUnreachable = (error: ProviderError.ProviderError) =>
  error.reason._tag === "Unavailable" && !/credentials/i.test(error.message)

/** The store's field a failure points to: its credentials when refused, else where it is reached. */
const storageField = (storage: Config["storage"], refused: boolean): string => {
  switch (storage.kind) {
    case "s3":
      if (refused) return "storage.accessKeyId"
      return storage.endpoint === undefined ? "storage.region" : "storage.endpoint"
    case "gcs":
      if (refused) return "storage.keyFilename"
      return storage.apiEndpoint === undefined ? "storage.bucket" : "storage.apiEndpoint"
    case "local":
      return "storage.dir"
    default:
      return "storage"
  }
}

type Needs = ObjectStore.ObjectStore | Organizations.Organizations | EmailProvider.EmailProvider

const within = (check: Effect.Effect<string | undefined, never, Needs>, late: string) =>
  check.pipe(
    Effect.timeoutOrElse({
      duration: deadline,
      orElse: () => Effect.succeed(`${late}: did not answer within ${Duration.format(deadline)}`)
    })
  )

/**
 * What a send needs, asked at once, each within the deadline: the store (a HEAD of a key no one
 * writes), the organisations' database when they live there, and the provider's `verify`.
 */
export const problems = (config: Config): Effect.Effect<ReadonlyArray<string>, never, Needs> => {
  const secrets = secretsOf(config)
  // A store's and a provider's messages are their adapters', which never hold a secret; their
  // causes are the vendors' own errors, which may (an echoed header), so only the messages are shown.
  const storage = Effect.flatMap(ObjectStore.ObjectStore, (store) =>
    store.head("_mailroom/readyz").pipe(
      Effect.as(undefined),
      Effect.catch((error) =>
        Effect.succeed(
          error._tag === "ObjectNotFound"
            ? undefined
            : `${storageField(config.storage, error._tag === "ObjectStoreError" && error.reason._tag === "AccessDenied")}: ${error.message}`
        )
      )
    )
  )
  const organizations = Effect.flatMap(Organizations.Organizations, (source) =>
    source.find("_mailroom_startup").pipe(
      Effect.as(undefined),
      Effect.catch((error) =>
        Effect.succeed(
          MailroomError.isUnavailable(error)
            ? `organizations.url: the database cannot be reached: ${describe(error.cause ?? error, secrets)}`
            : undefined
        )
      )
    )
  )
  const provider = Effect.flatMap(EmailProvider.EmailProvider, (service) =>
    (service.verify ?? Effect.void).pipe(
      Effect.as(undefined),
      Effect.catch((error) =>
        Effect.succeed(`${providerField(config.provider, isUnreachable(error))}: ${error.message}`)
      )
    )
  )
  const checks = [
    within(storage, storageField(config.storage, false)),
    ...(config.organizationsSource.kind === "postgres" ? [within(organizations, "organizations.url")] : []),
    within(provider, providerField(config.provider, true))
  ]
  return Effect.map(Effect.all(checks, { concurrency: "unbounded" }), (found) =>
    found.filter((p): p is string => p !== undefined)
  )
}
