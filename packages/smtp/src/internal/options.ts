// The provider's options checked once, at `make`: each bad one a ConfigError naming it (never its value),
// the good ones turned into nodemailer's SMTP connection and pool settings.
import { createPrivateKey } from "node:crypto"
import type * as tls from "node:tls"
import * as Adapter from "@mailroom/core/adapter"
import type * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type { SMTPPoolOptions } from "nodemailer/lib/smtp-pool"
import type { DkimKey } from "./message.js"

/** The node:tls settings the provider passes on. */
export interface TlsInput {
  readonly servername?: string
  /** PEM certificates of the CAs to trust instead of Node's (a company CA). */
  readonly ca?: string | ReadonlyArray<string>
  readonly rejectUnauthorized?: boolean
  readonly minVersion?: tls.SecureVersion
}

/** What `make` reads of the connection options (`SmtpEmailProvider.ConnectionOptions`). */
export interface ConnectionInput {
  readonly host: string
  readonly port?: number
  readonly secure?: boolean
  readonly requireTLS?: boolean
  readonly auth?: { readonly user: string; readonly pass: Adapter.Secret; readonly method?: "PLAIN" | "LOGIN" }
  readonly name?: string
  readonly tls?: TlsInput
  readonly connectionTimeout?: Duration.Input
  readonly greetingTimeout?: Duration.Input
  readonly socketTimeout?: Duration.Input
  readonly maxConnections?: number
  readonly maxMessages?: number
}

export interface DkimInput {
  readonly domainName: string
  readonly keySelector: string
  readonly privateKey: Adapter.Secret
}

/** The checked connection: nodemailer's settings, and what error messages name. */
export interface Connection {
  readonly settings: SMTPPoolOptions
  /** `host:port`. */
  readonly server: string
  readonly user: string | undefined
}

const fail = (option: string | ReadonlyArray<string>, message: string) =>
  Effect.fail(Adapter.invalidOption(option, message))

// A host name (letters, digits, `-`, `.`), an IPv4 address, or an IPv6 address without brackets.
const isHost = (host: string) => /^[A-Za-z0-9.-]+$/.test(host) || /^[0-9A-Fa-f:.]+$/.test(host)

const millis = (option: string, input: Duration.Input) =>
  Effect.map(Adapter.duration(option, input), (duration) => Math.ceil(Duration.toMillis(duration)))

const pass = (secret: Adapter.Secret) => Adapter.secretValue(secret)

const tlsSettings = ({ ca, ...rest }: TlsInput): tls.ConnectionOptions => ({
  ...rest,
  ...(ca === undefined ? {} : { ca: [ca].flat() })
})

/** nodemailer's SMTP settings from the options, with the defaults this provider documents. */
export const connection = (input: ConnectionInput): Effect.Effect<Connection, Config.ConfigError> =>
  Effect.gen(function* () {
    if (typeof input.host !== "string" || input.host.trim() === "" || !isHost(input.host)) {
      return yield* fail("host", "must be a host name or an IP address, without scheme or port")
    }
    const secure = input.secure ?? false
    const port = input.port ?? (secure ? 465 : 587)
    if (!Number.isInteger(port) || port < 1 || port > 65535)
      return yield* fail("port", "must be a port number (1-65535)")
    if (input.auth !== undefined) {
      if (input.auth.user.trim() === "") return yield* fail(["auth", "user"], "must not be empty")
      if (pass(input.auth.pass) === "") return yield* fail(["auth", "pass"], "must not be empty")
      if (input.auth?.method !== undefined && !["PLAIN", "LOGIN"].includes(input.auth.method)) {
        return yield* fail(["auth", "method"], 'must be "PLAIN" or "LOGIN"')
      }
    }
    // A password never crosses in clear text unless asked to: with auth, the connection must be encrypted.
    const requireTLS = input.requireTLS ?? (input.auth !== undefined && !secure)
    if (input.name !== undefined && !/^[A-Za-z0-9.-]+$|^\[[0-9A-Fa-f:.]+\]$/.test(input.name)) {
      return yield* fail("name", "must be a host name (or an address literal in brackets), as EHLO takes it")
    }
    const maxConnections = yield* Adapter.positiveInteger("maxConnections", input.maxConnections ?? 5)
    const maxMessages = yield* Adapter.positiveInteger("maxMessages", input.maxMessages ?? 100)
    const settings: SMTPPoolOptions = {
      pool: true,
      host: input.host,
      port,
      secure,
      requireTLS,
      ...(input.name === undefined ? {} : { name: input.name }),
      ...(input.tls === undefined ? {} : { tls: tlsSettings(input.tls) }),
      ...(input.auth === undefined
        ? {}
        : {
            auth: {
              user: input.auth.user,
              pass: pass(input.auth.pass),
              ...(input.auth.method === undefined ? {} : { method: input.auth.method })
            }
          }),
      connectionTimeout: yield* millis("connectionTimeout", input.connectionTimeout ?? "10 seconds"),
      greetingTimeout: yield* millis("greetingTimeout", input.greetingTimeout ?? "30 seconds"),
      socketTimeout: yield* millis("socketTimeout", input.socketTimeout ?? "60 seconds"),
      maxConnections,
      maxMessages,
      // A pooled connection the server closed (or answered 421 on) before a byte of the message went
      // out is replaced once by a fresh one, as a pool must; beyond that the message fails as not sent
      // and core retries it on its own schedule. nodemailer never requeues a message it began to send.
      maxRequeues: 1,
      // Nothing is logged: a transaction log would carry addresses and message content.
      logger: false
    }
    return { settings, server: `${input.host}:${port}`, user: input.auth?.user }
  })

const isLabel = (label: string) => /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/.test(label)
const isDomain = (name: string) => name.length <= 253 && name.split(".").every(isLabel)

/** The DKIM key, checked now so that a bad one stops start-up rather than every send. */
export const dkimKey = (input: DkimInput): Effect.Effect<DkimKey, Config.ConfigError> =>
  Effect.gen(function* () {
    if (!isDomain(input.domainName)) return yield* fail(["dkim", "domainName"], "must be a domain name")
    // A selector may have several labels (`s1._domainkey` is prepended to the domain).
    if (!isDomain(input.keySelector)) return yield* fail(["dkim", "keySelector"], "must be a DNS label, such as s1")
    const privateKey = Adapter.secretValue(input.privateKey)
    let bits: number | undefined
    try {
      const key = createPrivateKey(privateKey)
      bits = key.asymmetricKeyType === "rsa" ? key.asymmetricKeyDetails?.modulusLength : undefined
    } catch {
      // The parser's message may quote the key: only what is wrong is said.
      return yield* fail(["dkim", "privateKey"], "must be an RSA private key in PEM")
    }
    // RFC 8301: verifiers refuse RSA keys under 1024 bits; nodemailer signs with RSA only.
    if (bits === undefined || bits < 1024) {
      return yield* fail(["dkim", "privateKey"], "must be an RSA private key of at least 1024 bits")
    }
    return { domainName: input.domainName, keySelector: input.keySelector, privateKey }
  })
