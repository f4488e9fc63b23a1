// mailroom's EmailProvider on Resend's HTTP API: one `POST /emails` per message, with Resend's limits
// declared so core refuses what Resend would refuse, and every answer translated into core's reasons.
// `fetch`, not the `resend` package, which drops the transport error a retry decision needs (README).
import { EmailProvider, ProviderError } from "@mailroom/core"
import * as Adapter from "@mailroom/core/adapter"
import * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { type Call, type Connection, call } from "./internal/api.js"
import { type Answered, accessReason, type Failure, toProviderError } from "./internal/errors.js"
import { repeatedHeader, requestBody } from "./internal/message.js"

interface CommonOptions {
  /** The API's address. Default `"https://api.resend.com"`; set it for a proxy or a local stand-in. */
  readonly baseUrl?: string
  /**
   * How long to wait for Resend's answer. Default 30 seconds. A timeout counts as "possibly sent" and
   * is not retried.
   */
  readonly timeout?: Duration.Input
}

/** What `layerConfig` reads: the provider sends with the runtime's own `fetch`. */
export interface ConfigOptions extends CommonOptions {
  /** The API key (`re_...`), sent as `Authorization: Bearer`. A sending-only key is enough. Required. */
  readonly apiKey: Adapter.Secret
}

/**
 * Send with a `fetch` of your own (one with a proxy agent, an instrumented one); the provider still adds
 * the key, and gives a send's JSON body as a `Blob`. It should reject as the runtime's does, with the
 * transport error as `cause`, so a refused connection can be told from one dropped after the request
 * went out.
 */
export interface ClientOptions extends ConfigOptions {
  readonly client: typeof globalThis.fetch
}

/** What `make` and `layer` take: an API key, and a `fetch` of your own if you like. */
export type Options = ConfigOptions | ClientOptions

/**
 * What Resend accepts: 50 recipients (Resend's limit on `to`, applied here to to, cc and bcc
 * together, the stricter reading); a message of 40 MB after base64 (read as 40,000,000 bytes, so core
 * refuses before Resend does); no attachment of the file types Resend does not send. And what a send
 * holds per attachment byte, measured by `pnpm bench memory`.
 */
export const limits: EmailProvider.Limits = {
  maxRecipients: 50,
  maxMessageBytes: 40_000_000,
  // The file, the body's bytes in a Blob (its base64, 1.33), and the pieces fetch copies out of the
  // Blob on their way to the socket, until the collector frees them (up to as much again).
  heldPerAttachmentByte: 5,
  forbiddenExtensions: (
    "adp app asp bas bat cer chm cmd com cpl crt csh der exe fxp gadget hlp hta inf ins isp its js jse ksh " +
    "lib lnk mad maf mag mam maq mar mas mat mau mav maw mda mdb mde mdt mdw mdz msc msh msh1 msh2 mshxml " +
    "msh1xml msh2xml msi msp mst ops pcd pif plg prf prg reg scf scr sct shb shs sys ps1 ps1xml ps2 ps2xml " +
    "psc1 psc2 tmp url vb vbe vbs vps vsmacros vss vst vsw vxd ws wsc wsf wsh xnk"
  ).split(" ")
}

const defaultBaseUrl = "https://api.resend.com"

/** The options as a connection, or a `ConfigError` naming the first unusable one. */
const connect = (options: Options): Effect.Effect<Connection, Config.ConfigError> =>
  Effect.gen(function* () {
    const apiKey = Adapter.secretValue(options.apiKey)
    if (typeof apiKey !== "string" || apiKey.trim() === "") {
      return yield* Effect.fail(Adapter.invalidOption("apiKey", "must not be empty"))
    }
    // It travels in a header: a character a header cannot carry would fail every send, in words that
    // quote it (fetch names the character's code).
    if (!/^[\x21-\x7e]+$/.test(apiKey)) {
      return yield* Effect.fail(
        Adapter.invalidOption("apiKey", "must be printable ASCII, without spaces, as Resend's API keys are")
      )
    }
    const base = URL.parse(options.baseUrl ?? defaultBaseUrl)
    if (
      base === null ||
      !/^https?:$/.test(base.protocol) ||
      base.search !== "" ||
      base.hash !== "" ||
      base.username !== "" ||
      base.password !== ""
    ) {
      return yield* Effect.fail(
        Adapter.invalidOption("baseUrl", "must be an http(s) URL without credentials, query or fragment")
      )
    }
    if ("client" in options && typeof options.client !== "function") {
      return yield* Effect.fail(Adapter.invalidOption("client", "must be a fetch function"))
    }
    const timeout = yield* Adapter.duration("timeout", options.timeout ?? "30 seconds")
    return {
      baseUrl: base.href.replace(/\/+$/, ""),
      apiKey,
      // Looked up at each call, not captured: a test or an instrumentation may replace the global later.
      fetch: "client" in options ? options.client : (input, init) => globalThis.fetch(input, init),
      timeout
    }
  })

/** Resend's `id` from a 2xx answer, or undefined. */
const idOf = (answer: Answered): string | undefined => {
  const { id } = (typeof answer.body === "object" && answer.body !== null ? answer.body : {}) as { id?: unknown }
  return typeof id === "string" && id !== "" ? id : undefined
}

const refused = (message: string) =>
  Effect.fail(
    new ProviderError.ProviderError({ provider: "resend", reason: new ProviderError.InvalidRequest({ message }) })
  )

/** The provider. Fails with a `ConfigError` naming the option when one is unusable (an empty `apiKey`...). */
export const make = (options: Options): Effect.Effect<EmailProvider.EmailProvider, Config.ConfigError> =>
  Effect.map(connect(options), (connection) =>
    EmailProvider.EmailProvider.of({
      name: "resend",
      // Resend takes two sends with one Idempotency-Key within 24 hours as one.
      deduplicatesByKey: true,
      limits,
      // The options were checked by `connect`: a ConfigError cannot arise here.
      verify: Effect.suspend(() => checkAccess(options)).pipe(Effect.catchTag("ConfigError", (e) => Effect.die(e))),
      send: (email) => {
        const repeated = repeatedHeader(email)
        if (repeated !== undefined) return refused(`Resend takes one value per header: ${repeated} is given twice`)
        const request: Call = {
          method: "POST",
          path: "/emails",
          body: requestBody(email),
          idempotencyKey: email.idempotencyKey
        }
        return call(connection, request).pipe(
          Effect.flatMap((answer) => {
            const id = idOf(answer)
            return answer.status >= 200 && answer.status < 300 && id !== undefined
              ? Effect.succeed({ messageId: id })
              : Effect.fail<Failure>(answer)
          }),
          Effect.catch((failure) =>
            Effect.flatMap(Clock.currentTimeMillis, (now) =>
              Effect.fail(toProviderError(failure, { email, forbiddenExtensions: limits.forbiddenExtensions, now }))
            )
          )
        )
      }
    })
  )

/**
 * An authenticated call that sends nothing (`GET /domains`), for readiness probes: succeeds when
 * Resend answers and takes the key, a sending-only key included (Resend answers it
 * `restricted_api_key`) and when it is rate limited (it answered); fails with a `ProviderError` when
 * the key is refused or Resend cannot be reached. A bad option is a `ConfigError`, as for `make`.
 */
export const checkAccess = (options: Options): Effect.Effect<void, ProviderError.ProviderError | Config.ConfigError> =>
  Effect.flatMap(connect(options), (connection) =>
    call(connection, { method: "GET", path: "/domains?limit=1" }).pipe(
      Effect.flatMap((answer) => (answer.status >= 200 && answer.status < 300 ? Effect.void : Effect.fail(answer))),
      Effect.catch((failure) => {
        const reason = accessReason(failure)
        return reason === undefined
          ? Effect.void
          : Effect.fail(new ProviderError.ProviderError({ provider: "resend", reason, cause: failure }))
      })
    )
  )

/** Provides core's `EmailProvider` (the server's `"provider": { "kind": "resend", ... }`). */
export const layer = (options: Options): Layer.Layer<EmailProvider.EmailProvider, Config.ConfigError> =>
  Layer.effect(EmailProvider.EmailProvider, make(options))

/**
 * As `layer`, with the options read from `Config`, e.g. `layerConfig({ apiKey:
 * Config.Redacted("RESEND_API_KEY") })`. A `fetch` cannot come from `Config`, so only `ConfigOptions` can.
 */
export const layerConfig = (
  config: Config.Wrap<ConfigOptions>
): Layer.Layer<EmailProvider.EmailProvider, Config.ConfigError> =>
  Layer.effect(EmailProvider.EmailProvider, Effect.flatMap(Config.unwrap(config), make))
