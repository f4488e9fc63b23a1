// The config's checkable secrets (API keys, tokens, webhook credentials: plain, or `sha256:<hex>` of
// the value): their form checked at start-up, and one comparison that never throws.
import * as Adapter from "@mailroom/core/adapter"

/** "<path>: <problem>" when `value` is a malformed `sha256:` secret, so start-up names the field. */
export const hashedSecretProblems = (value: string | undefined, path: string): ReadonlyArray<string> => {
  const problem = value === undefined ? undefined : Adapter.hashedSecretProblem(value)
  return problem === undefined ? [] : [`${path}: ${problem}`]
}

/**
 * A check of presented values against `expected`, in constant time, that answers no and never throws:
 * a malformed hash, which the config refuses at start-up, matches nothing.
 */
export const tokenMatcher = (expected: string, what: string): ((presented: string | undefined) => boolean) => {
  try {
    return Adapter.secretMatcher(expected, what)
  } catch {
    return () => false
  }
}
