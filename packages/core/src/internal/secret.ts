// Configured secrets kept only as SHA-256 digests: a plain value, or `sha256:<hex>` of it, so a config
// file need not hold the secret itself. Compared in constant time.
import { hash, timingSafeEqual } from "node:crypto"

/** One-shot: a credential is hashed on every request, and `hash` skips building a Hash stream. */
export const sha256 = (value: string): Buffer => hash("sha256", value, "buffer")

const hashed = /^sha256:([0-9a-fA-F]{64})$/

/** True for a `sha256:<64 hex>` entry. */
export const isHashed = (entry: string): boolean => hashed.test(entry)

/** The digest a configured entry stands for. */
export const digestOf = (entry: string): Buffer => {
  const match = hashed.exec(entry)
  return match?.[1] !== undefined ? Buffer.from(match[1], "hex") : sha256(entry)
}

/** Whether `presented` is the secret behind `digest`, in time independent of where they differ. */
export const matches = (digest: Buffer, presented: string): boolean => timingSafeEqual(digest, sha256(presented))
