// mailroom's EmailProvider on Postmark, through the official `postmark` client: one `POST /email` per
// message, with Postmark's limits declared so core refuses what Postmark would refuse.
import { EmailProvider } from "@mailroom/core"
import { Config, Duration, Effect, Layer, Redacted } from "effect"
import { ServerClient } from "postmark"
import { fromAnswer, fromFailure } from "./internal/errors.js"
import { toPostmarkMessage } from "./internal/message.js"

interface CommonOptions {
  /** The message stream to send on. Default `"outbound"`, the server's default transactional stream. */
  readonly messageStream?: string
}

/** Build the `postmark` client from a server token. */
export interface TokenOptions extends CommonOptions {
  /** The server's API token, sent as `X-Postmark-Server-Token`. Required. */
  readonly serverToken: Redacted.Redacted<string> | string
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

export type Options = TokenOptions | ClientOptions

/**
 * What Postmark accepts: 50 recipients across To, Cc and Bcc; a message of 10 MB counted after base64
 * (read as 10,000,000 bytes, the stricter of the two readings, so core refuses before Postmark does);
 * and no attachment of the file types Postmark forbids.
 */
const limits: EmailProvider.Limits = {
  maxRecipients: 50,
  maxMessageBytes: 10_000_000,
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

interface Connection {
  readonly client: ServerClient
  readonly transportError: () => unknown
}

/**
 * A client per send when built from options: the client reduces a network failure to its message, so a
 * `fetch` that keeps the underlying error is what tells a refused connection (never sent, safe to retry)
 * from one dropped after the request went out (maybe sent). Building one is cheap: no connection is held.
 */
const connector = (options: Options): (() => Connection) => {
  if ("client" in options) {
    const { client } = options
    return () => ({ client, transportError: () => undefined })
  }
  const token = typeof options.serverToken === "string" ? options.serverToken : Redacted.value(options.serverToken)
  if (token.trim() === "") throw new Error("PostmarkEmailProvider: the serverToken option is empty")
  const configuration = {
    useHttps: options.useHttps ?? true,
    requestHost: options.requestHost ?? "api.postmarkapp.com",
    timeout: Duration.toSeconds(options.timeout ?? "30 seconds")
  }
  return () => {
    let transportError: unknown
    const client = new ServerClient(token, {
      ...configuration,
      fetch: (input, init) =>
        fetch(input, init).catch((error: unknown) => {
          transportError = error
          throw error
        })
    })
    return { client, transportError: () => transportError }
  }
}

/** The provider. Throws when `serverToken` is empty, so a misconfigured server fails at start-up. */
export const make = (options: Options): EmailProvider.EmailProvider => {
  const connect = connector(options)
  const messageStream = options.messageStream ?? "outbound"
  return {
    name: "postmark",
    limits,
    send: (email) =>
      Effect.suspend(() => {
        const { client, transportError } = connect()
        const context = (seen: unknown) => ({
          email,
          forbiddenExtensions: limits.forbiddenExtensions,
          messageStream,
          transportError: seen
        })
        return Effect.tryPromise({
          try: () => client.sendEmail(toPostmarkMessage(email, messageStream)),
          catch: (error) => fromFailure(error, context(transportError()))
        }).pipe(
          Effect.flatMap((answer) =>
            typeof answer?.MessageID === "string" && answer.MessageID !== ""
              ? Effect.succeed({ messageId: answer.MessageID })
              : Effect.fail(fromAnswer(answer, context(undefined)))
          )
        )
      })
  }
}

/** Provides core's `EmailProvider` (the server's `"provider": { "kind": "postmark", ... }`). */
export const layer = (options: Options): Layer.Layer<EmailProvider.EmailProvider> =>
  Layer.sync(EmailProvider.EmailProvider, () => make(options))

/**
 * Same as `layer`, with the options read from `Config`, e.g.
 * `layerConfig({ serverToken: Config.Redacted("POSTMARK_SERVER_TOKEN") })`.
 */
export const layerConfig = (
  options: Config.Wrap<TokenOptions>
): Layer.Layer<EmailProvider.EmailProvider, Config.ConfigError> =>
  Layer.effect(
    EmailProvider.EmailProvider,
    Effect.gen(function* () {
      return make(yield* Config.unwrap(options))
    })
  )
