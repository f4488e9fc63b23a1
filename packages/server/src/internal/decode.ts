// Decoding the config file's sections with Schema, each problem named by its path in the file: shared
// by ServerConfig and the sections decoded in their own modules.
import { Wire } from "@mailroom/core"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

export const nonEmpty = (what: string) =>
  Schema.String.pipe(
    Schema.check(Schema.makeFilter((s: string) => (s.trim() === "" ? `${what} must not be empty` : undefined)))
  )

export const Dir = nonEmpty("a directory")

export const Url = Schema.String.pipe(
  Schema.check(
    Schema.makeFilter((s: string) =>
      URL.canParse(s) && /^https?:$/.test(new URL(s).protocol) ? undefined : "must be an http(s) URL"
    )
  )
)

/** A duration as Effect writes it: `"500 millis"`, `"5 seconds"`, `"24 hours"`. */
export const Time = Schema.String.pipe(
  Schema.check(
    Schema.makeFilter((s: string) =>
      /^\d+(\.\d+)? [a-z]+$/.test(s) && Option.isSome(Duration.fromInput(s as Duration.Input))
        ? undefined
        : 'must be a duration such as "500 millis", "5 seconds" or "24 hours"'
    )
  )
)

/**
 * A duration that becomes a Node.js timer (`setTimeout`, `http.Server`'s `requestTimeout`), which takes
 * at most 2^31 - 1 ms (about 24.8 days): a longer one would fire after 1 ms, or throw.
 */
export const TimerTime = Time.pipe(
  Schema.check(
    Schema.makeFilter((s: string) =>
      Duration.toMillis(Duration.fromInputUnsafe(s as Duration.Input)) <= 2 ** 31 - 1
        ? undefined
        : 'must be at most "24 days"'
    )
  )
)

/** A secret written in the file, or `{"env": "NAME"}` to read it from that environment variable at start-up. */
export const SecretOrEnv = Schema.Union([
  nonEmpty("a secret"),
  Schema.Struct({ env: nonEmpty("an environment variable name") })
])

export const positive = (what: string, integer: boolean) =>
  Schema.Number.pipe(
    Schema.check(
      Schema.makeFilter((n: number) =>
        Number.isFinite(n) && n > 0 && (!integer || Number.isInteger(n)) ? undefined : `must be ${what}`
      )
    )
  )

export interface Decoded<A> {
  readonly value?: A | undefined
  readonly problems: ReadonlyArray<string>
}

/** Decodes one section; problems are prefixed with the section's path in the file. */
export const decodeWith = <S extends Schema.Decoder<unknown>>(
  schema: S,
  input: unknown,
  prefix: string
): Decoded<S["Type"]> => {
  const result = Effect.runSync(Effect.result(Wire.decode(schema)(input)))
  if (result._tag === "Success") return { value: result.success as S["Type"], problems: [] }
  const problems = result.failure.errors.map((m) =>
    m.startsWith("request: ")
      ? `${prefix || "config"}: ${m.slice(9)}`
      : prefix === "" || m.startsWith("[")
        ? `${prefix}${m}`
        : `${prefix}.${m}`
  )
  return { value: undefined, problems }
}

/** A section with a `kind`, decoded with that kind's schema, so a mistake names the kind's own fields. */
export const decodeKind = <K extends string>(
  path: string,
  value: unknown,
  schemas: Record<K, Schema.Decoder<unknown>>
): Decoded<unknown> => {
  if (value === undefined) return { value: undefined, problems: [] }
  const kind = typeof value === "object" && value !== null ? (value as { kind?: unknown }).kind : undefined
  const schema = typeof kind === "string" && Object.hasOwn(schemas, kind) ? schemas[kind as K] : undefined
  if (schema === undefined) {
    return { value: undefined, problems: [`${path}.kind: must be one of ${Object.keys(schemas).join(", ")}`] }
  }
  return decodeWith(schema, value, path)
}

export const PostgresUrl = Schema.String.pipe(
  Schema.check(
    // The URL holds a password: the message never repeats it.
    Schema.makeFilter((s: string) =>
      URL.canParse(s) && /^postgres(ql)?:$/.test(new URL(s).protocol)
        ? undefined
        : "must be a postgres:// or postgresql:// URL"
    )
  )
)

/** A PostgreSQL URL from the file (checked by `PostgresUrl`), else from DATABASE_URL; `path` names the field. */
export const databaseUrl = (
  url: string | undefined,
  path: string,
  env: Readonly<Record<string, string | undefined>>
): Decoded<string> => {
  if (url !== undefined) return { value: url, problems: [] }
  const fromEnv = env.DATABASE_URL
  if (fromEnv === undefined || fromEnv === "") {
    return { problems: [`${path}: is required, or set the DATABASE_URL environment variable`] }
  }
  return decodeWith(PostgresUrl, fromEnv, "").problems.length > 0
    ? { problems: ["DATABASE_URL: must be a postgres:// or postgresql:// URL"] }
    : { value: fromEnv, problems: [] }
}
