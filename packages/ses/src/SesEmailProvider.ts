// mailroom's EmailProvider on Amazon SES v2: one SendEmail call with Simple content (attachments
// included) per message, and every SES failure translated into core's ProviderError.
import { type SESv2Client, SendEmailCommand, type SendEmailCommandInput } from "@aws-sdk/client-sesv2"
import { EmailProvider, ProviderError, Simulator } from "@mailroom/core"
import * as Adapter from "@mailroom/core/adapter"
import * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import { acquireClient, type ConnectionOptions } from "./internal/client.js"
import { toProviderError } from "./internal/errors.js"
import { forbiddenHeaders, maxCustomHeaders, refusal, sendEmailInput } from "./internal/message.js"
import { notBlank } from "./internal/options.js"
import * as StreamedBody from "./internal/streamedBody.js"
import { verify } from "./internal/verify.js"

export type { ConnectionOptions } from "./internal/client.js"

/** The options a client built here and a client of your own both take. */
export interface CommonOptions {
  /**
   * How long one send may take, connecting included, before it fails as `Unavailable` "possibly
   * sent" (SES may have accepted it, so it is not retried). Applies to a client of your own too. Default 30 s.
   */
  readonly timeout?: Duration.Input | undefined
  /** SES configuration set applied to every message (event publishing, dedicated IPs). Default: none. */
  readonly configurationSetName?: string | undefined
  /**
   * Sends mail to mailroom's simulator addresses (`bounced@simulator.mailroom.test`...) to SES's
   * mailbox simulator instead (`bounce+mailroom@simulator.amazonses.com`), whose events
   * `SesEventSource` maps back; see the README's table. Default false: such a message is refused,
   * as SES would bounce it for real.
   */
  readonly simulator?: boolean | undefined
}

/** What `layerConfig` reads: the provider builds its client (with `maxAttempts: 1`) from the account, region and credentials. */
export interface ConfigOptions extends CommonOptions, ConnectionOptions {}

/**
 * A client of your own (custom middleware, retry policy, HTTP handler), not destroyed with the layer.
 * Give it `maxAttempts: 1`: core retries what is safe to retry.
 */
export interface ClientOptions extends CommonOptions {
  readonly client: SESv2Client
}

/** What `make` and `layer` take: the account to build a client for, or a client of your own. */
export type Options = ConfigOptions | ClientOptions

/**
 * SES v2's quotas: 50 recipients across To, Cc and Bcc; 40 MB per message once attachments are
 * base64-encoded (taken as 40 * 1024 * 1024 bytes, as SES counted its former 10 MB as 10485760 bytes);
 * 15 custom headers, none of those SES sets itself; and the file extensions its "Unsupported
 * attachment types" list refuses.
 */
export const limits: EmailProvider.Limits = {
  maxRecipients: 50,
  maxMessageBytes: 40 * 1024 * 1024,
  maxCustomHeaders,
  forbiddenHeaders,
  forbiddenExtensions: [
    "ade",
    "adp",
    "app",
    "asp",
    "bas",
    "bat",
    "cer",
    "chm",
    "cmd",
    "com",
    "cpl",
    "crt",
    "csh",
    "der",
    "exe",
    "fxp",
    "gadget",
    "hlp",
    "hta",
    "inf",
    "ins",
    "isp",
    "its",
    "js",
    "jse",
    "ksh",
    "lib",
    "lnk",
    "mad",
    "maf",
    "mag",
    "mam",
    "maq",
    "mar",
    "mas",
    "mat",
    "mau",
    "mav",
    "maw",
    "mda",
    "mdb",
    "mde",
    "mdt",
    "mdw",
    "mdz",
    "msc",
    "msh",
    "msh1",
    "msh2",
    "mshxml",
    "msh1xml",
    "msh2xml",
    "msi",
    "msp",
    "mst",
    "ops",
    "pcd",
    "pif",
    "plg",
    "prf",
    "prg",
    "reg",
    "scf",
    "scr",
    "sct",
    "shb",
    "shs",
    "sys",
    "ps1",
    "ps1xml",
    "ps2",
    "ps2xml",
    "psc1",
    "psc2",
    "tmp",
    "url",
    "vb",
    "vbe",
    "vbs",
    "vps",
    "vsmacros",
    "vss",
    "vst",
    "vsw",
    "vxd",
    "ws",
    "wsc",
    "wsf",
    "wsh",
    "xnk"
  ]
}

/**
 * The provider; a client it builds itself is destroyed when the scope closes. Fails with a
 * `ConfigError` naming the option when one is unusable (half a credential, a bad endpoint...).
 */
export const make = (
  options: Options = {}
): Effect.Effect<EmailProvider.EmailProvider, Config.ConfigError, Scope.Scope> =>
  Effect.gen(function* () {
    const timeout = yield* Adapter.duration("timeout", options.timeout ?? "30 seconds")
    yield* notBlank("configurationSetName", options.configurationSetName)
    // One attempt per send: core's Mailer already retries what is safe to retry (throttling, a
    // connection never made), and the SDK's own retries would multiply those, and would also
    // resend after a timeout or a 5xx, when SES may already have accepted the message.
    const client = "client" in options ? options.client : yield* acquireClient(options, 1)
    // A client built here sends through the SDK's Node handler, which streams a body: attachments go
    // out as they are encoded. A client of your own may have a handler that takes only bytes.
    const command =
      "client" in options
        ? (input: SendEmailCommandInput) => new SendEmailCommand(input)
        : StreamedBody.sendEmailCommand
    // Streamed, a send holds its attachments' bytes and one piece of their base64: core's budget counts that.
    const held: EmailProvider.Limits = "client" in options ? limits : { ...limits, heldPerAttachmentByte: 1 }
    const timeoutMillis = Duration.toMillis(timeout)
    const secrets =
      "client" in options
        ? []
        : [options.accessKeyId, options.secretAccessKey, options.sessionToken].flatMap((secret) =>
            secret === undefined ? [] : [Adapter.secretValue(secret)]
          )
    const provider: EmailProvider.EmailProvider = {
      name: "ses",
      limits: held,
      verify: verify(client, secrets),
      // The SDK's call, aborted at the deadline (reported as a timeout) or when the send is interrupted.
      send: (given) => {
        const simulated = Simulator.forVendor("ses", given, options.simulator === true)
        const email = "email" in simulated ? simulated.email : given
        const refused = "refused" in simulated ? simulated.refused : refusal(email)
        if (refused !== undefined) {
          return Effect.fail(
            new ProviderError.ProviderError({
              provider: "ses",
              reason: new ProviderError.InvalidRequest({ message: refused })
            })
          )
        }
        return Effect.suspend(() => {
          let timedOut = false
          return Effect.tryPromise({
            try: (signal) => {
              // One controller and one timer, cleared with the answer: AbortSignal.timeout would keep its
              // timer and signal alive for the whole deadline after every send, and AbortSignal.any a third.
              const controller = new AbortController()
              const interrupted = () => controller.abort(signal.reason)
              signal.addEventListener("abort", interrupted, { once: true })
              const timer = setTimeout(() => {
                timedOut = true
                controller.abort(new DOMException("The operation was aborted due to timeout", "TimeoutError"))
              }, timeoutMillis)
              timer.unref()
              return client
                .send(command(sendEmailInput(email, options.configurationSetName)), {
                  abortSignal: controller.signal
                })
                .finally(() => {
                  clearTimeout(timer)
                  signal.removeEventListener("abort", interrupted)
                })
            },
            catch: (error) =>
              toProviderError(error, { email: given, secrets, ...(timedOut ? { timedOutAfter: timeout } : {}) })
          }).pipe(
            Effect.flatMap((output) =>
              output.MessageId === undefined || output.MessageId === ""
                ? Effect.fail(toProviderError(output, { email: given, secrets }))
                : Effect.succeed({ messageId: output.MessageId })
            )
          )
        })
      }
    }
    return provider
  })

/** Provides core's `EmailProvider` (the server's `"provider": { "kind": "ses", ... }`). */
export const layer = (options: Options = {}): Layer.Layer<EmailProvider.EmailProvider, Config.ConfigError> =>
  Layer.effect(EmailProvider.EmailProvider, make(options))

/**
 * As `layer`, with the options read from `Config`, e.g.
 * `layerConfig({ region: Config.String("AWS_REGION") })`. A client cannot come from `Config`.
 */
export const layerConfig = (
  config: Config.Wrap<ConfigOptions>
): Layer.Layer<EmailProvider.EmailProvider, Config.ConfigError> =>
  Layer.effect(EmailProvider.EmailProvider, Effect.flatMap(Config.unwrap(config), make))
