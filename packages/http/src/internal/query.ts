// The query string and path parameters of a request as an operation's input: each name given at
// most once, unknown names refused, a path segment percent-decoded, every problem naming its field.
import { MailroomError } from "@mailroom/core"
import * as Effect from "effect/Effect"

/**
 * The query as `{name: value}`, or a ValidationError naming each unknown or repeated parameter, and
 * then what `decode` (the operation's own decoding, when given) finds wrong with the others: every
 * problem at once, as a send's are.
 */
export const singleQuery = (
  query: URLSearchParams,
  names: ReadonlyArray<string>,
  decode?: (input: Record<string, string>) => Effect.Effect<unknown, MailroomError.ValidationError>
) =>
  Effect.gen(function* () {
    const out: Record<string, string> = {}
    const problems: Array<string> = []
    for (const [name] of query) {
      if (!names.includes(name)) problems.push(`${name}: is not a known query parameter`)
    }
    for (const name of names) {
      const values = query.getAll(name)
      if (values.length > 1) problems.push(`${name}: must be given once`)
      else if (values[0] !== undefined) out[name] = values[0]
    }
    if (problems.length === 0) return out
    const others =
      decode === undefined
        ? []
        : yield* Effect.match(decode(out), {
            onFailure: (error) => error.errors,
            onSuccess: () => []
          })
    return yield* new MailroomError.ValidationError({ errors: [...problems, ...others] })
  })

/** A path segment, percent-decoded (`bob%2Btag%40example.com`), or a ValidationError naming it. */
export const pathSegment = (raw: string, name: string): Effect.Effect<string, MailroomError.ValidationError> => {
  try {
    return Effect.succeed(decodeURIComponent(raw))
  } catch {
    return Effect.fail(new MailroomError.ValidationError({ errors: [`${name}: is not valid percent-encoding`] }))
  }
}
