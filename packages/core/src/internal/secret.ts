// Configured secrets kept only as SHA-256 digests (a plain value, or `sha256:<hex>` of it, so a config
// file need not hold the secret), and the one comparison of secrets: constant-time and total.
import { hash, timingSafeEqual } from "node:crypto"

/** One-shot: a credential is hashed on every request, and `hash` skips building a Hash stream. */
export const sha256 = (value: string): Buffer => hash("sha256", value, "buffer")

const prefix = "sha256:"
const hashed = /^sha256:([0-9a-fA-F]{64})$/

/** True for a usable `sha256:<64 hex>` entry. */
export const isHashed = (entry: string): boolean => hashed.test(entry)

/**
 * Why an entry written as a hash cannot be used, or undefined: a plain value always can. Checked when
 * configuration is read, so a typo stops start-up instead of reaching a comparison.
 */
export const hashedProblem = (entry: string): string | undefined =>
  entry.startsWith(prefix) && !hashed.test(entry)
    ? 'a hashed secret must be "sha256:" followed by exactly 64 hex digits (the SHA-256 of the secret)'
    : undefined

/**
 * Whether two byte strings are equal, in time independent of where they differ. Total: unequal
 * lengths answer false (after a comparison of the same cost), where `timingSafeEqual` would throw.
 */
export const constantTimeEqual = (a: Uint8Array, b: Uint8Array): boolean => {
  if (a.byteLength !== b.byteLength) {
    timingSafeEqual(a, a)
    return false
  }
  return timingSafeEqual(a, b)
}

/** The digest a configured entry stands for. Throws for a malformed `sha256:` entry (see `hashedProblem`). */
export const digestOf = (entry: string): Buffer => {
  const problem = hashedProblem(entry)
  if (problem !== undefined) throw new Error(problem)
  const match = hashed.exec(entry)
  return match?.[1] !== undefined ? Buffer.from(match[1], "hex") : sha256(entry)
}

/** Whether `presented` is the secret behind `digest`; false, never a throw, whatever either holds. */
export const matches = (digest: Uint8Array, presented: string): boolean => constantTimeEqual(digest, sha256(presented))

/**
 * A check of presented values against a configured entry (plain or `sha256:<hex>`), keeping only its
 * digest. Throws, when built, for an empty entry (which would let an empty header in) or a malformed hash.
 */
export const matcher = (entry: string, what: string): ((presented: string | undefined) => boolean) => {
  if (entry.trim() === "") throw new Error(`${what} must not be empty`)
  const problem = hashedProblem(entry)
  if (problem !== undefined) throw new Error(`${what}: ${problem}`)
  const digest = digestOf(entry)
  return (presented) => presented !== undefined && presented !== "" && matches(digest, presented)
}
