// Decoding the config file's sections with Schema, each problem named by its path in the file: shared
// by ServerConfig and the sections decoded in their own modules.
import { Wire } from "@mailroom/core"
import { Effect, Schema } from "effect"

export const nonEmpty = (what: string) =>
  Schema.String.pipe(
    Schema.check(Schema.makeFilter((s: string) => (s.trim() === "" ? `${what} must not be empty` : undefined)))
  )

export const Dir = nonEmpty("a directory")

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
