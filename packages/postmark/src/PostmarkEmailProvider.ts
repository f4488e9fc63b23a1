// mailroom's EmailProvider on Postmark, through the official `postmark` client: one `POST /email` per
// message, with Postmark's limits declared so core refuses what Postmark would refuse.
import { EmailProvider, MailEvent, ProviderError, Simulator } from "@mailroom/core"
import * as Adapter from "@mailroom/core/adapter"
import * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { ServerClient } from "postmark"
import { toProviderError } from "./internal/errors.js"
import { base64Of, maxMetadataFields, refusal, toPostmarkMessage } from "./internal/message.js"
import { verify } from "./internal/verify.js"

interface CommonOptions {
  /** The message stream to send on. Default `"outbound"`, the server's default transactional stream. */
  readonly messageStream?: string
  /**
   * The name of the message's tag whose value becomes Postmark's one `Tag` (what its statistics and
   * message search group by). Every tag, this one too, is also sent as a `Metadata` field. Default
   * `"category"`, as in `tags: [{ name: "category", value: "receipt" }]`.
   */
  readonly tagFrom?: string
  /**
   * Sends mail to mailroom's simulator addresses (`bounced@simulator.mailroom.test`...) to Postmark's
   * bounce-testing domain instead, the outcome in `X-PM-Bounce-Type`; `PostmarkEventSource` maps its
   * events back. See the README's table. Default false: such a message is refused, as Postmark
   * would bounce it for real.
   */
  readonly simulator?: boolean
}

/** What `layerConfig` reads: the provider builds the `postmark` client from a server token. */
export interface ConfigOptions extends CommonOptions {
  /** The server's API token, sent as `X-Postmark-Server-Token`. Required. */
  readonly serverToken: Adapter.Secret
  /** Host (and port) of the API. Default `"api.postmarkapp.com"`; set it for a local stand-in or a proxy. */
  readonly requestHost?: string
  /** Default `true`. `false` sends over plain HTTP, for a local stand-in only. */
  readonly useHttps?: boolean
  /**
   * How long to wait for Postmark's answer. Default 30 seconds (the client's own default, 180 s, is long
   * for a caller waiting on an HTTP request). A timeout counts as "possibly sent" and is not retried.
   */
  readonly timeout?: Duration.Input
}

/** Use a `ServerClient` built elsewhere (custom `fetch`, proxy, shared instance). */
export interface ClientOptions extends CommonOptions {
  readonly client: ServerClient
}

/** What `make` and `layer` take: a server token, or a client of your own. */
export type Options = ConfigOptions | ClientOptions

/**
 * What Postmark accepts: 50 recipients across To, Cc and Bcc; a message of 10 MB counted after base64
 * (read as 10,000,000 bytes, the stricter of the two readings, so core refuses before Postmark does);
 * 8 tags (Postmark keeps 10 Metadata fields, and core's Mailer uses two, the organisation and the
 * message id); and no attachment of the file types Postmark forbids. And what a send through a client
 * of your own holds per attachment byte (one built from a token holds less: `make`).
 */
export const limits: EmailProvider.Limits = {
  maxRecipients: 50,
  maxMessageBytes: 10_000_000,
  // The file, its base64 in the message, the client's JSON of it, fetch's UTF-8 copy, what is not yet collected.
  heldPerAttachmentByte: 6,
  maxTags: maxMetadataFields - [MailEvent.organizationKey, MailEvent.messageKey].length,
  forbiddenExtensions: [
    "vbs",
    "exe",
    "bin",
    "bat",
    "chm",
    "com",
    "cpl",
    "crt",
    "hlp",
    "hta",
    "inf",
    "ins",
    "isp",
    "jse",
    "lnk",
    "mdb",
    "pcd",
    "pif",
    "reg",
    "scr",
    "sct",
    "shs",
    "vbe",
    "vba",
    "wsf",
    "wsh",
    "wsl",
    "msc",
    "msi",
    "msp",
    "mst"
  ]
}

/**
 * A client, the transport error behind its last network failure when it kept one, and what the
 * message carries as each file's `Content`.
 */
interface Connection {
  readonly client: ServerClient
  readonly transportError: () => unknown
  readonly content: (i: number) => string
}

/** A host and optional port, as the client puts it between `https://` and `/email`. */
const isHost = (host: string): boolean => /^[^\s/?#@]+$/.test(host) && URL.canParse(`https://${host}`)

/** The timeout in seconds, as the client takes it. */
const timeoutSeconds = (timeout: Duration.Input): Effect.Effect<number, Config.ConfigError> =>
  Effect.map(Adapter.duration("timeout", timeout), Duration.toSeconds)

/**
 * A client per send when built from a token: the client reduces a network failure to its message, so
 * a `fetch` that keeps the underlying error is what tells a refused connection (never sent, safe to
 * retry) from one dropped after the request went out (maybe sent). That `fetch` also writes each
 * file's base64 into the JSON the client hands it, which the message holds only a placeholder for,
 * and sends it as a Blob (`Adapter.jsonFiles`): the send holds the body's bytes once. Building a
 * client is cheap: no connection is held, so there is nothing to close.
 */
const connector = (
  options: Options
): Effect.Effect<(files?: ReadonlyArray<Uint8Array>) => Connection, Config.ConfigError> =>
  Effect.gen(function* () {
    if ("client" in options) {
      const { client } = options
      return (files = []) => ({ client, transportError: () => undefined, content: base64Of(files) })
    }
    const token = Adapter.secretValue(options.serverToken)
    if (token.trim() === "") return yield* Effect.fail(Adapter.invalidOption("serverToken", "must not be empty"))
    // It travels in a header: a character a header cannot carry would fail every send, in words that
    // quote it (fetch names the character's code).
    if (!/^[\x21-\x7e]+$/.test(token)) {
      return yield* Effect.fail(
        Adapter.invalidOption("serverToken", "must be printable ASCII, as Postmark's server tokens are")
      )
    }
    const requestHost = options.requestHost ?? "api.postmarkapp.com"
    if (!isHost(requestHost)) {
      return yield* Effect.fail(
        Adapter.invalidOption("requestHost", "must be a host and optional port, without scheme or path")
      )
    }
    const configuration = {
      useHttps: options.useHttps ?? true,
      requestHost,
      timeout: yield* timeoutSeconds(options.timeout ?? "30 seconds")
    }
    return (files = []) => {
      let transportError: unknown
      const json = Adapter.jsonFiles(files)
      const client = new ServerClient(token, {
        ...configuration,
        fetch: (input, init) =>
          fetch(
            input,
            files.length > 0 && typeof init?.body === "string" ? { ...init, body: json.body(init.body) } : init
          ).catch((error: unknown) => {
            transportError = error
            throw error
          })
      })
      return { client, transportError: () => transportError, content: json.placeholder }
    }
  })

/** The provider. Fails with a `ConfigError` naming the option when one is unusable (an empty `serverToken`...). */
export const make = (options: Options): Effect.Effect<EmailProvider.EmailProvider, Config.ConfigError> =>
  Effect.gen(function* () {
    const messageStream = options.messageStream ?? "outbound"
    if (messageStream.trim() === "") {
      return yield* Effect.fail(Adapter.invalidOption("messageStream", "must not be empty"))
    }
    const tagFrom = options.tagFrom ?? "category"
    if (!/^[A-Za-z0-9_-]{1,20}$/.test(tagFrom)) {
      return yield* Effect.fail(
        Adapter.invalidOption("tagFrom", 'must be a tag name: 1-20 ASCII letters, digits, "_" or "-"')
      )
    }
    const connect = yield* connector(options)
    const host = "client" in options ? "the client's host" : (options.requestHost ?? "api.postmarkapp.com")
    // From a token: the file, the body's bytes in a Blob (1.33), and the pieces fetch copies out of the
    // Blob on their way to the socket, until the collector frees them (up to as much again).
    const held: EmailProvider.Limits = "client" in options ? limits : { ...limits, heldPerAttachmentByte: 5 }
    return EmailProvider.EmailProvider.of({
      name: "postmark",
      limits: held,
      verify: verify(connect, host),
      send: (given) =>
        Effect.suspend(() => {
          const simulated = Simulator.forVendor("postmark", given, options.simulator === true)
          const email = "email" in simulated ? simulated.email : given
          const refused = "refused" in simulated ? simulated.refused : refusal(email)
          if (refused !== undefined) {
            return Effect.fail(
              new ProviderError.ProviderError({
                provider: "postmark",
                reason: new ProviderError.InvalidRequest({ message: refused })
              })
            )
          }
          const { client, transportError, content } = connect(email.attachments.map((a) => a.content))
          const context = { email: given, forbiddenExtensions: limits.forbiddenExtensions, messageStream }
          return Effect.tryPromise({
            try: () => client.sendEmail(toPostmarkMessage(email, messageStream, tagFrom, content)),
            catch: (error) => toProviderError(error, { ...context, transportError: transportError() })
          }).pipe(
            Effect.flatMap((answer) =>
              typeof answer?.MessageID === "string" && answer.MessageID !== ""
                ? Effect.succeed({ messageId: answer.MessageID })
                : // Postmark can answer 2xx with its refusal in `ErrorCode` instead of a MessageID.
                  Effect.fail(toProviderError(answer, { ...context, transportError: undefined }))
            )
          )
        })
    })
  })

/** Provides core's `EmailProvider` (the server's `"provider": { "kind": "postmark", ... }`). */
export const layer = (options: Options): Layer.Layer<EmailProvider.EmailProvider, Config.ConfigError> =>
  Layer.effect(EmailProvider.EmailProvider, make(options))

/**
 * As `layer`, with the options read from `Config`, e.g.
 * `layerConfig({ serverToken: Config.Redacted("POSTMARK_SERVER_TOKEN") })`. A client cannot come from
 * `Config`, so only `ConfigOptions` can.
 */
export const layerConfig = (
  config: Config.Wrap<ConfigOptions>
): Layer.Layer<EmailProvider.EmailProvider, Config.ConfigError> =>
  Layer.effect(EmailProvider.EmailProvider, Effect.flatMap(Config.unwrap(config), make))
