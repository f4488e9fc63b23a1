// `"provider": {"kind": "failover", "providers": [...], "circuit"?}`: each entry decoded as the kind it
// names (never failover itself), the layer core's EmailProvider.layerFailover builds.
import { EmailProvider } from "@mailroom/core"
import * as Arr from "effect/Array"
import type * as Duration from "effect/Duration"
import type * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type { Config } from "../ServerConfig.js"
import { type Decoded, decodeWith, positive, Time } from "./decode.js"

const Failover = Schema.Struct({
  kind: Schema.Literal("failover"),
  // Each entry is decoded below by its own kind, so a mistake names that kind's field.
  providers: Schema.Array(Schema.Unknown),
  circuit: Schema.optionalKey(
    Schema.Struct({
      failures: Schema.optionalKey(positive("a whole number above 0", true)),
      openDuration: Schema.optionalKey(Time)
    })
  )
})

/** Any provider kind but failover. */
export type SingleProvider = Exclude<Config["provider"], { readonly kind: "failover" }>

/** The section decoded: each provider with the label the message log, metrics and `/readyz` name it by. */
export interface FailoverConfig {
  readonly kind: "failover"
  readonly providers: Arr.NonEmptyReadonlyArray<{ readonly label: string; readonly provider: SingleProvider }>
  readonly circuit?: { readonly failures?: number; readonly openDuration?: string }
}

const Label = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/

/** One entry: its `label` taken out, the rest decoded by `single` as the kind it names at `path`. */
const entry = (
  value: unknown,
  path: string,
  single: (value: unknown, path: string) => Decoded<SingleProvider>
): Decoded<{ readonly label: string; readonly provider: SingleProvider }> => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { problems: [`${path}: must be a provider, such as {"kind": "smtp", ...}`] }
  }
  const { label, ...rest } = value as Record<string, unknown>
  if (rest.kind === "failover") return { problems: [`${path}.kind: a failover cannot contain another failover`] }
  const problems: Array<string> = []
  if (label !== undefined && (typeof label !== "string" || !Label.test(label))) {
    problems.push(`${path}.label: must be 1 to 64 letters, digits, "-", "_" or ".", starting with a letter or digit`)
  }
  const decoded = single(rest, path)
  problems.push(...decoded.problems)
  if (problems.length > 0 || decoded.value === undefined) return { problems }
  return { value: { label: typeof label === "string" ? label : decoded.value.kind, provider: decoded.value }, problems }
}

/** Decodes the section; `single` decodes one provider of any other kind, its secrets read. */
export const decode = (
  value: unknown,
  single: (value: unknown, path: string) => Decoded<SingleProvider>
): Decoded<FailoverConfig> => {
  const shell = decodeWith(Failover, value, "provider")
  // Every problem at once: the entries are checked even when the section's own fields are not right.
  const given = (value as { readonly providers?: unknown }).providers
  const providers = shell.value?.providers ?? (Array.isArray(given) ? given : [])
  const circuit = shell.value?.circuit
  if (shell.value !== undefined && providers.length < 2) {
    return {
      problems: [
        "provider.providers: a failover needs at least 2 providers (with one, use that provider: it keeps core's retries)"
      ]
    }
  }
  const entries = providers.map((p, i) => entry(p, `provider.providers[${i}]`, single))
  const problems = [...shell.problems, ...entries.flatMap((e) => e.problems)]
  const labels = entries.map((e) => e.value?.label)
  labels.forEach((label, i) => {
    if (label !== undefined && labels.indexOf(label) < i) {
      problems.push(
        `provider.providers[${i}].label: "${label}" already names provider.providers[${labels.indexOf(label)}]; give each provider a label of its own, which records and metrics show`
      )
    }
  })
  const decoded = entries.flatMap((e) => (e.value === undefined ? [] : [e.value]))
  if (problems.length > 0 || !Arr.isReadonlyArrayNonEmpty(decoded)) return { problems }
  return { value: { kind: "failover", providers: decoded, ...(circuit === undefined ? {} : { circuit }) }, problems }
}

/** Each provider's entry rewritten by `f` (its directories resolved, say). */
export const mapProviders = (
  config: FailoverConfig,
  f: (provider: SingleProvider) => SingleProvider
): FailoverConfig => ({
  ...config,
  providers: Arr.map(config.providers, (p) => ({ ...p, provider: f(p.provider) }))
})

/** Core's failover of the providers `single` builds, each under its label. */
export const layer = <E, R>(
  config: FailoverConfig,
  single: (provider: SingleProvider) => Layer.Layer<EmailProvider.EmailProvider, E, R>
) => {
  const circuit = config.circuit
  return EmailProvider.layerFailover(
    Arr.map(config.providers, (p) => ({ name: p.label, layer: single(p.provider) })),
    {
      ...(circuit === undefined
        ? {}
        : {
            circuit: {
              ...(circuit.failures === undefined ? {} : { failures: circuit.failures }),
              // The config checked it is a duration Effect reads.
              ...(circuit.openDuration === undefined ? {} : { openDuration: circuit.openDuration as Duration.Input })
            }
          })
    }
  )
}
