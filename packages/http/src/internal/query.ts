// The query string and path parameters of a request as an operation's input: each name given at
// most once, unknown names refused, a path segment percent-decoded, every problem naming its field.
import { MailroomError } from "@mailroom/core"
import * as Effect from "effect/Effect"

/** The query as `{name: value}`, or a ValidationError naming each unknown or repeated parameter. */
export const singleQuery = (query: URLSearchParams, names: ReadonlyArray<string>) =>
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
    if (problems.length > 0) return yield* new MailroomError.ValidationError({ errors: problems })
    return out
  })

/** A path segment, percent-decoded (`bob%2Btag%40example.com`), or a ValidationError naming it. */
export const pathSegment = (raw: string, name: string): Effect.Effect<string, MailroomError.ValidationError> => {
  try {
    return Effect.succeed(decodeURIComponent(raw))
  } catch {
    return Effect.fail(new MailroomError.ValidationError({ errors: [`${name}: is not valid percent-encoding`] }))
  }
}
