// `@mailroom/core/adapter`: what an adapter's author needs and an application does not. Building
// blocks shared by every adapter (download names, header encoding, the `read` admission check, the
// accepted events of local providers, the one reading of network failures) and the one way adapters
// refuse bad options. CONTRIBUTING.md shows them at work in the smallest adapter.
import type * as Config from "effect/Config"
import type * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import { invalidOption, type Secret, secretValue } from "./internal/options.js"
import { matcher } from "./internal/secret.js"
import { transportFailure } from "./internal/transportFailure.js"
import * as ProviderError from "./ProviderError.js"

export { filenameOf } from "./internal/attachmentKey.js"
export {
  /** The sort key a cursor names (undefined for none), or a `ValidationError` naming `cursor`. */
  decode as decodeCursor,
  /** The opaque cursor after a row whose sort key is `key`, as every keyset list of core answers it. */
  encode as encodeCursor
} from "./internal/cursor.js"
export {
  attachmentExtension,
  attachmentExtensions,
  contentDisposition,
  encodedWords,
  headerText
} from "./internal/headers.js"
export {
  type KeyedSha256,
  keyedSha256,
  /** Where the message starts in a buffer from `KeyedSha256.message`. */
  messageStart as keyedSha256MessageStart
} from "./internal/hmac.js"
export {
  /** What a call made once a host's `dispose` began fails with: `Unavailable`, nothing done. */
  disposing,
  /** The calls running on a host's runtime, which its `dispose` waits for before releasing the layers. */
  inFlight
} from "./internal/inFlight.js"
export {
  type JsonFiles,
  /** A JSON request body with files as base64, built as a Blob so a send holds its bytes once. */
  jsonFiles
} from "./internal/jsonFiles.js"
export {
  /** The recipients after a delivery event, or undefined when none moves: every `MessageLog` applies events so. */
  afterEvent,
  /** What a bounce or a refusal said, kept on the recipient it moved. */
  detailOf,
  /** The event as a message's history keeps it: without the vendor's raw record. */
  timelineOf
} from "./internal/memoryMessageLog.js"
export { outageLog } from "./internal/outageLog.js"
export { publishAccepted } from "./internal/publish.js"
export { admit } from "./internal/read.js"
export { constantTimeEqual, hashedProblem as hashedSecretProblem } from "./internal/secret.js"
export { withSpan } from "./internal/tracing.js"
export {
  type TransportFailure,
  type TransportFailureKind,
  transportFailure
} from "./internal/transportFailure.js"

/**
 * A provider's send that failed without an answer, as core's `Unavailable`: `possiblySent` from
 * `transportFailure`, and one wording for every provider, so that the same failure reads the same on
 * each and is retried (never sent) or not (maybe sent) alike. `vendor` is the name shown ("SES").
 */
export const transportUnavailable = (vendor: string, error: unknown): ProviderError.Unavailable => {
  const failure = transportFailure(error)
  return new ProviderError.Unavailable({
    message: failure.possiblySent
      ? `the request to ${vendor} failed: ${failure.description}; the message may have been sent`
      : `could not reach ${vendor}: ${failure.description}; the message was not sent`,
    possiblySent: failure.possiblySent
  })
}

/**
 * The shape of an adapter module (CONTRIBUTING.md, "The shape of an adapter"), for the type test every
 * adapter keeps: `expectTypeOf(S3ObjectStore).toExtend<Adapter.AdapterModule<typeof
 * ObjectStore.ObjectStore, S3ObjectStore.ConfigOptions, S3ObjectStore.ClientOptions>>()`.
 *
 * - `Key`: the core service key the layers provide (`typeof ObjectStore.ObjectStore`).
 * - `ConfigOptions`: what `layerConfig` reads through `Config.Wrap`; never a client.
 * - `ClientOptions`: the options with a client of your own (`{ client }`); `never` where none can be given.
 * - `Outage`: what a layer that connects may fail with besides a bad option (`MailroomError.Unavailable`).
 * - `Requires`: a service the module always takes from the context (`SqlClient` for `@mailroom/sql`).
 */
export interface AdapterModule<
  Key extends Context.Key<unknown, unknown>,
  ConfigOptions extends WithoutClient<ConfigOptions>,
  ClientOptions extends { readonly client: unknown } = never,
  Outage = never,
  Requires = never
> extends AdapterConstructor<Context.Service.Shape<Key>, ConfigOptions | ClientOptions, Outage, Requires> {
  /** `Layer.effect(Key, make(options))`. */
  readonly layer: (
    options: ConfigOptions | ClientOptions
  ) => Layer.Layer<Context.Service.Identifier<Key>, Config.ConfigError | Outage, Requires>
  /** As `layer`, the options read through `Config`: a value unread and a value unusable fail alike. */
  readonly layerConfig: (
    config: Config.Wrap<ConfigOptions>
  ) => Layer.Layer<Context.Service.Identifier<Key>, Config.ConfigError | Outage, Requires>
}

/** Options that hold no `client`: what `Config` can read. */
export type WithoutClient<Options> = "client" extends keyof Options ? never : unknown

/**
 * The `make` every adapter module has, alone for an adapter whose service core has no key for (an
 * `EventSource`): an Effect that fails only with a `ConfigError` for a bad option (or, for one that
 * connects, `Outage`), scoped when it owns what it must close.
 */
export interface AdapterConstructor<Service, Options, Outage = never, Requires = never> {
  /** Builds the service, refusing a bad option with `invalidOption`; never throws, never dies. */
  readonly make: (options: Options) => Effect.Effect<Service, Config.ConfigError | Outage, Scope.Scope | Requires>
}

/**
 * The `layerFromClient` of an adapter on a client that is an Effect service (Redis's `Redis`, a
 * `SqlClient`): the service on the `Client` in the context, with the options that go with any client.
 */
export interface AdapterFromClient<Key extends Context.Key<unknown, unknown>, CommonOptions, Client> {
  /** The service on the client in the context (one connection your application shares). */
  readonly layerFromClient: (
    options: CommonOptions
  ) => Layer.Layer<Context.Service.Identifier<Key>, Config.ConfigError, Client>
}

/**
 * The header fields a provider writes itself from the message's own fields (addressing, subject,
 * date, identity, MIME structure), which SES refuses as custom headers and the outbox, SES's
 * strictest reading, refuses too: a provider's `limits.forbiddenHeaders`.
 */
export const structuralHeaders: ReadonlyArray<string> = [
  "BCC",
  "CC",
  "Content-Disposition",
  "Content-Type",
  "Date",
  "From",
  "Message-ID",
  "MIME-Version",
  "Reply-To",
  "Return-Path",
  "Subject",
  "To"
]

/** How long an SDK's credential chain may look (an instance-metadata probe included) before `make` gives up. */
export const credentialChainDeadline: Duration.Duration = Duration.seconds(5)

/**
 * Resolves an SDK's credential chain once, in `make`, so that a machine without credentials fails at
 * start-up with a `ConfigError` naming `option` (saying `missing`, then why the chain found none)
 * instead of on every request; the SDK caches what it found.
 */
export const credentialsFromChain = (
  lookup: () => Promise<unknown>,
  option: string,
  missing: string
): Effect.Effect<void, Config.ConfigError> =>
  Effect.tryPromise({
    try: lookup,
    catch: (error) => (error instanceof Error ? error.message : String(error))
  }).pipe(
    Effect.timeoutOrElse({
      duration: credentialChainDeadline,
      orElse: () => Effect.fail(`the chain found none within ${Duration.format(credentialChainDeadline)}`)
    }),
    Effect.mapError((cause) => invalidOption(option, `${missing} (${cause})`)),
    Effect.asVoid
  )

/**
 * "PgConnection: Failed to connect: connect ECONNREFUSED 127.0.0.1:5432": each distinct message down
 * an error's causes, for a log line about an outage.
 */
export const describeCause = (cause: unknown): string => {
  const messages: Array<string> = []
  for (let at = cause, depth = 0; at instanceof Error && depth < 4; at = at.cause, depth++) {
    if (at.message !== "" && !messages.some((m) => m.includes(at.message))) messages.push(at.message)
  }
  return messages.length === 0 ? String(cause) : messages.join(": ")
}

export {
  defaultMaxUploadBytes,
  duration,
  invalidOption,
  positiveInteger,
  type Secret,
  secretUrl,
  secretValue
} from "./internal/options.js"

/**
 * A check of presented values against a configured secret (plain, `Redacted`, or `sha256:<64 hex>` of
 * it), in constant time, keeping only its digest; the check never throws. Building it throws for an
 * empty secret (which would let an empty header in) or a malformed hash, naming `what`.
 */
export const secretMatcher = (secret: Secret, what: string): ((presented: string | undefined) => boolean) =>
  matcher(secretValue(secret), what)
