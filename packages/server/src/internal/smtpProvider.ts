// `"provider": {"kind": "smtp", ...}`: its schema (nodemailer's option names), its secrets read from the
// file or the environment, and the options @mailroom/smtp takes.
import type { SmtpEmailProvider } from "@mailroom/smtp"
import type * as Duration from "effect/Duration"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { nonEmpty, positive, SecretOrEnv, Time } from "./decode.js"

const Port = Schema.Number.pipe(
  Schema.check(
    Schema.makeFilter((n: number) =>
      Number.isInteger(n) && n >= 1 && n <= 65535 ? undefined : "must be a port number (1-65535)"
    )
  )
)

export const SmtpProvider = Schema.Struct({
  kind: Schema.Literal("smtp"),
  host: nonEmpty("a host"),
  port: Schema.optionalKey(Port),
  secure: Schema.optionalKey(Schema.Boolean),
  requireTLS: Schema.optionalKey(Schema.Boolean),
  auth: Schema.optionalKey(Schema.Struct({ user: nonEmpty("a user name"), pass: SecretOrEnv })),
  dkim: Schema.optionalKey(
    Schema.Struct({
      domainName: nonEmpty("a domain name"),
      keySelector: nonEmpty("a selector"),
      privateKey: SecretOrEnv
    })
  ),
  name: Schema.optionalKey(nonEmpty("a host name")),
  connectionTimeout: Schema.optionalKey(Time),
  greetingTimeout: Schema.optionalKey(Time),
  socketTimeout: Schema.optionalKey(Time),
  maxConnections: Schema.optionalKey(positive("a whole number above 0", true))
})

type Decoded = typeof SmtpProvider.Type

/** The section with its secrets read: what the server builds the provider from. */
export type SmtpConfig = Omit<Decoded, "auth" | "dkim"> & {
  readonly auth?: { readonly user: string; readonly pass: string }
  readonly dkim?: { readonly domainName: string; readonly keySelector: string; readonly privateKey: string }
}

/** Reads `{"env": NAME}` secrets; a variable that is not set is a problem naming the field. */
export const resolve = (
  provider: Decoded,
  env: Readonly<Record<string, string | undefined>>
): { readonly value: SmtpConfig } | { readonly problems: ReadonlyArray<string> } => {
  const problems: Array<string> = []
  const secret = (value: typeof SecretOrEnv.Type, path: string): string => {
    if (typeof value === "string") return value
    const found = env[value.env]
    if (found === undefined || found.trim() === "")
      problems.push(`${path}: the environment variable ${value.env} is not set`)
    return found ?? ""
  }
  const { auth, dkim, ...rest } = provider
  const value: SmtpConfig = {
    ...rest,
    ...(auth === undefined ? {} : { auth: { user: auth.user, pass: secret(auth.pass, "provider.auth.pass") } }),
    ...(dkim === undefined
      ? {}
      : { dkim: { ...dkim, privateKey: secret(dkim.privateKey, "provider.dkim.privateKey") } })
  }
  return problems.length > 0 ? { problems } : { value }
}

/** The durations the config checked, as Effect reads them. */
const durations = (given: Readonly<Record<string, string | undefined>>) =>
  Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined)) as Record<string, Duration.Input>

/** @mailroom/smtp's ConfigOptions; secrets `Redacted`, so no log of the options shows them. */
export const options = (provider: SmtpConfig): SmtpEmailProvider.ConfigOptions => {
  const { kind: _kind, auth, dkim, connectionTimeout, greetingTimeout, socketTimeout, ...rest } = provider
  return {
    ...rest,
    ...durations({ connectionTimeout, greetingTimeout, socketTimeout }),
    ...(auth === undefined ? {} : { auth: { user: auth.user, pass: Redacted.make(auth.pass) } }),
    ...(dkim === undefined ? {} : { dkim: { ...dkim, privateKey: Redacted.make(dkim.privateKey) } })
  }
}
