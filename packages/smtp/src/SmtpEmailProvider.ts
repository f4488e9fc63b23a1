// mailroom's EmailProvider on any SMTP server (Postfix, a company relay, SES, Postmark, Mailgun or Brevo
// over SMTP), through nodemailer's pooled SMTP transport, with DKIM signing and SMTP's replies as reasons.
import { EmailProvider, MailEvent, MailEvents, ProviderError } from "@mailroom/core"
import * as Adapter from "@mailroom/core/adapter"
import * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import nodemailer, { type Transporter } from "nodemailer"
import SMTPConnection from "nodemailer/lib/smtp-connection"
import type { SentMessageInfo } from "nodemailer/lib/smtp-transport"
import * as Delivery from "./internal/delivery.js"
import { type SendContext, toProviderError } from "./internal/errors.js"
import { compose } from "./internal/message.js"
import * as Check from "./internal/options.js"

/** A DKIM key to sign every message with (RFC 6376, `rsa-sha256`, relaxed/relaxed). */
export interface DkimOptions {
  /** The signing domain (`d=`), usually the sender's: `acme.example`. */
  readonly domainName: string
  /** The selector (`s=`): the public key is the TXT record of `{keySelector}._domainkey.{domainName}`. */
  readonly keySelector: string
  /** The RSA private key (at least 1024 bits; 2048 advised) as PEM, plain or `Redacted`. Never logged. */
  readonly privateKey: Adapter.Secret
}

/** The options a transporter built here and one of your own both take. */
export interface CommonOptions {
  /** Sign every message with this key. Default: unsigned (a relay may sign for you). */
  readonly dkim?: DkimOptions
  /**
   * What the server accepts, declared so core refuses first. Default `limits`: 100 recipients (the
   * least RFC 5321 lets a server accept) and 10,240,000 bytes (Postfix's default `message_size_limit`).
   * A smaller `SIZE` the server advertises in EHLO is honoured as well. `heldPerAttachmentByte` (what a
   * send holds in memory per attachment byte, which core's budget counts): 5.5, or 6.5 signed with DKIM.
   */
  readonly limits?: Partial<EmailProvider.Limits>
  /**
   * Write each of the message's tags as an `X-Mailroom-Tag-{name}: {value}` header (SMTP has no
   * standard for tags; recipients can read these headers). Default `true`; `false` leaves tags out.
   */
  readonly tagHeaders?: boolean
}

/** Where the SMTP server is and how to log in: nodemailer's own option names, durations as Effect reads them. */
export interface ConnectionOptions {
  /** The server's host name or IP address. Required. */
  readonly host: string
  /** Default 587 (submission with STARTTLS), or 465 when `secure`. */
  readonly port?: number
  /** TLS from the first byte (implicit TLS, port 465). Default `false`: STARTTLS when the server offers it. */
  readonly secure?: boolean
  /**
   * Refuse to go on unless STARTTLS upgrades the connection. Default `true` when `auth` is given and
   * `secure` is not, so that a password never crosses in clear text; `false` otherwise.
   */
  readonly requireTLS?: boolean
  /** Log in with AUTH PLAIN or LOGIN (the first the server offers, or `method`). Default: no login. */
  readonly auth?: {
    readonly user: string
    /** Plain or `Redacted`. Never logged, never in an error. */
    readonly pass: Adapter.Secret
    readonly method?: "PLAIN" | "LOGIN"
  }
  /** The host name this client gives in EHLO. Default: the machine's host name. */
  readonly name?: string
  /** node:tls settings: a private `ca`, the SNI `servername`, `minVersion`; `rejectUnauthorized: false` for tests only. */
  readonly tls?: Check.TlsInput
  /** How long to wait for the TCP (and implicit TLS) connection. Default `"10 seconds"`. */
  readonly connectionTimeout?: Duration.Input
  /** How long to wait for the server's 220 greeting once connected. Default `"30 seconds"`. */
  readonly greetingTimeout?: Duration.Input
  /**
   * How long the connection may stay silent while a reply is awaited. Default `"60 seconds"`. A timeout
   * after the whole message went out (waiting for the reply to the final `.`) counts as possibly sent.
   */
  readonly socketTimeout?: Duration.Input
  /** Connections kept open to the server and used in parallel. Default 5. */
  readonly maxConnections?: number
  /** Messages sent on one connection before it is replaced by a new one. Default 100. */
  readonly maxMessages?: number
}

/** What `layerConfig` reads: the provider keeps a pool of connections to the server. */
export interface ConfigOptions extends CommonOptions, ConnectionOptions {}

/** A nodemailer transporter of your own (a proxy, OAuth2, a shared pool). It is not closed. */
export interface ClientOptions extends CommonOptions {
  readonly client: Transporter<SentMessageInfo>
}

/** Everything the provider takes: where to connect, or a transporter of your own; DKIM, limits and tags either way. */
export type Options = ConfigOptions | ClientOptions

/**
 * What an SMTP server accepts unless `Options.limits` says otherwise (a smaller EHLO `SIZE` is honoured
 * too), and what a send holds per attachment byte, measured by `pnpm bench memory`.
 */
export const limits: EmailProvider.Limits = {
  maxRecipients: 100,
  maxMessageBytes: 10_240_000,
  forbiddenExtensions: [],
  // The file, the composed message (its base64 in lines, 1.37), the composer's pieces of it before they
  // are joined (1.37), and the dot-stuffed copies on their way to the socket until the collector frees them.
  heldPerAttachmentByte: 5.5
}

// Signed with DKIM, the message is copied once more: the signer's output, joined, beside the unsigned one.
const signedHeldPerAttachmentByte = 6.5

const limitsOf = (given: Partial<EmailProvider.Limits> | undefined, signed: boolean) =>
  Effect.gen(function* () {
    const maxRecipients = yield* Adapter.positiveInteger(
      ["limits", "maxRecipients"],
      given?.maxRecipients ?? limits.maxRecipients
    )
    const maxMessageBytes = yield* Adapter.positiveInteger(
      ["limits", "maxMessageBytes"],
      given?.maxMessageBytes ?? limits.maxMessageBytes
    )
    const forbiddenExtensions = (given?.forbiddenExtensions ?? limits.forbiddenExtensions).map((e) =>
      e.replace(/^\./, "").toLowerCase()
    )
    if (!forbiddenExtensions.every((e) => /^[a-z0-9]+$/.test(e))) {
      return yield* Effect.fail(
        Adapter.invalidOption(["limits", "forbiddenExtensions"], "must be file extensions such as exe")
      )
    }
    // A transporter of your own may hold more or less than nodemailer's SMTP transport.
    const heldPerAttachmentByte =
      given?.heldPerAttachmentByte ?? (signed ? signedHeldPerAttachmentByte : (limits.heldPerAttachmentByte as number))
    if (!Number.isFinite(heldPerAttachmentByte) || heldPerAttachmentByte < 1) {
      return yield* Effect.fail(
        Adapter.invalidOption(["limits", "heldPerAttachmentByte"], "must be a number of at least 1")
      )
    }
    return {
      maxRecipients,
      maxMessageBytes,
      forbiddenExtensions,
      heldPerAttachmentByte
    } satisfies EmailProvider.Limits
  })

/** `host:port` of a transporter built elsewhere, when it says. */
const describe = (transport: Transporter<SentMessageInfo>): string => {
  const { host, port } = (transport.options ?? {}) as { host?: unknown; port?: unknown }
  return typeof host === "string" ? `${host}${port === undefined ? "" : `:${String(port)}`}` : "(custom transport)"
}

const fail = (reason: ProviderError.Reason, cause?: unknown) =>
  Effect.fail(new ProviderError.ProviderError({ provider: "smtp", reason, ...(cause === undefined ? {} : { cause }) }))

/** The server's `Message-ID` when it replaced ours (SES, Microsoft 365 say so in their reply), else ours. */
const messageIdOf = (info: SentMessageInfo, ours: string): string => info.serverMessageId?.replace(/^<|>$/g, "") || ours

/** A pooled transporter, closed with the scope; or the one given, left open. */
const transporterOf = (options: Options) =>
  "client" in options
    ? Effect.succeed({ transport: options.client, server: describe(options.client), user: undefined })
    : Effect.flatMap(Check.connection(options), ({ settings, server, user }) =>
        Effect.map(
          Effect.acquireRelease(
            Effect.sync(() => nodemailer.createTransport(settings)),
            (transport) => Effect.sync(() => transport.close())
          ),
          (transport) => ({ transport: transport as Transporter<SentMessageInfo>, server, user })
        )
      )

/**
 * The provider. Scoped: its pool of connections closes with the scope. Fails with a `ConfigError`
 * naming the option when one is unusable (an empty `host`, a `dkim.privateKey` that is no RSA key...).
 * Nothing connects before the first send; `verify` checks the server.
 */
export const make = (options: Options): Effect.Effect<EmailProvider.EmailProvider, Config.ConfigError, Scope.Scope> =>
  Effect.gen(function* () {
    const accepted = yield* limitsOf(options.limits, options.dkim !== undefined)
    const dkim = options.dkim === undefined ? undefined : yield* Check.dkimKey(options.dkim)
    const tagHeaders = options.tagHeaders ?? true
    const { transport, server, user } = yield* transporterOf(options)
    Delivery.instrument(transport)
    const clock = yield* Clock.Clock
    // Optional: with core's MailEvents (as `Mailroom.layer` provides), a recipient refused while the
    // others are taken is told as a `rejected` event, which records it `failed` and reaches its webhook.
    const events = yield* Effect.serviceOption(MailEvents.MailEvents)

    const send = (email: EmailProvider.OutboundEmail) =>
      Effect.gen(function* () {
        const context: Omit<SendContext, "dataSent"> = { server, user, sender: email.from.address }
        const composed = yield* Effect.tryPromise({
          try: () => compose(email, { dkim, tagHeaders, date: new Date(clock.currentTimeMillisUnsafe()) }),
          catch: (cause) =>
            new ProviderError.ProviderError({
              provider: "smtp",
              reason: new ProviderError.Unknown({ message: "the message could not be built; it was not sent" }),
              cause
            })
        })
        if (composed.raw.byteLength > accepted.maxMessageBytes) {
          return yield* fail(
            new ProviderError.MessageTooLarge({
              message: `the message is ${composed.raw.byteLength} bytes, over the limit of ${accepted.maxMessageBytes}; it was not sent`
            })
          )
        }
        let progress: Delivery.Progress = { dataSent: false }
        const info = yield* Effect.tryPromise({
          try: (signal) => {
            const sending = Delivery.send(transport, composed, signal)
            progress = sending.progress
            return sending.result
          },
          catch: (error) => toProviderError(error, { ...context, dataSent: progress.dataSent })
        })
        // The server took the message for the others: failing now would invite a second copy for them.
        // Each refused recipient is a `rejected` event instead, with the server's reply, where its
        // record would otherwise read `sent`.
        const messageId = messageIdOf(info, composed.messageId)
        if (info.rejected.length > 0) {
          yield* Effect.logWarning(
            `[mailroom] the SMTP server ${server} refused ${info.rejected.join(", ")} and accepted message ${composed.messageId} for the other recipients`
          )
          if (Option.isSome(events)) {
            const at = new Date(clock.currentTimeMillisUnsafe()).toISOString()
            const replies = new Map(
              (info.rejectedErrors ?? []).map((e) => [(e as { recipient?: string }).recipient, e.message] as const)
            )
            yield* Adapter.publishAccepted(
              events.value,
              info.rejected.map((recipient) =>
                MailEvent.make({
                  type: "rejected",
                  provider: "smtp",
                  messageId: email.metadata?.[MailEvent.messageKey] ?? messageId,
                  providerMessageId: messageId,
                  recipient,
                  occurredAt: at,
                  organizationId: email.metadata?.[MailEvent.organizationKey],
                  raw: { recipient, reply: replies.get(recipient) ?? null }
                })
              )
            )
          }
        }
        return { messageId }
      })

    // What readiness probes and the server's start-up ask: the options were checked above, so a
    // ConfigError cannot arise here; a transport of the caller's is asked through its own verify().
    const check: Effect.Effect<void, ProviderError.ProviderError> =
      "client" in options
        ? Effect.tryPromise({
            try: () => transport.verify(),
            catch: (error) => toProviderError(error, { server, user, sender: "", dataSent: false })
          }).pipe(Effect.asVoid)
        : verify(options).pipe(Effect.catchTag("ConfigError", (error) => Effect.die(error)))

    return EmailProvider.EmailProvider.of({ name: "smtp", limits: accepted, send, verify: check })
  })

/**
 * Connects, greets (EHLO, STARTTLS as configured), logs in when `auth` is given, and quits: what a
 * readiness probe asks of the server. Interrupting it closes the connection.
 */
export const verify = (
  options: ConnectionOptions
): Effect.Effect<void, ProviderError.ProviderError | Config.ConfigError> =>
  Effect.flatMap(Check.connection(options), ({ settings, server, user }) =>
    Effect.callback<void, ProviderError.ProviderError>((resume) => {
      const connection = new SMTPConnection(settings)
      let settled = false
      const settle = (error: unknown) => {
        if (settled) return
        settled = true
        if (error === undefined || error === null) {
          connection.quit()
          resume(Effect.void)
        } else {
          connection.close()
          resume(Effect.fail(toProviderError(error, { server, user, sender: "", dataSent: false })))
        }
      }
      connection.once("error", settle)
      connection.connect((error) => {
        if (error) return settle(error)
        if (settings.auth === undefined) return settle(undefined)
        connection.login({ credentials: settings.auth, ...settings.auth }, settle)
      })
      return Effect.sync(() => {
        settled = true
        connection.close()
      })
    })
  )

/** Provides core's `EmailProvider` (the server's `"provider": { "kind": "smtp", ... }`); the pool closes with the layer. */
export const layer = (options: Options): Layer.Layer<EmailProvider.EmailProvider, Config.ConfigError> =>
  Layer.effect(EmailProvider.EmailProvider, make(options))

/**
 * As `layer`, with the options read from `Config`, e.g.
 * `layerConfig({ host: Config.String("SMTP_HOST"), auth: { user: Config.String("SMTP_USER"), pass: Config.Redacted("SMTP_PASS") } })`.
 * A transporter cannot come from `Config`, so only `ConfigOptions` can.
 */
export const layerConfig = (
  config: Config.Wrap<ConfigOptions>
): Layer.Layer<EmailProvider.EmailProvider, Config.ConfigError> =>
  Layer.effect(EmailProvider.EmailProvider, Effect.flatMap(Config.unwrap(config), make))
