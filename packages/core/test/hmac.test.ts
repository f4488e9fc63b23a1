// The attachment-id tag's HMAC (internal/hmac.ts) against node:crypto's createHmac, for keys and
// messages on both sides of SHA-256's 64-byte block: ids issued before depend on every byte.
import { createHmac, randomBytes } from "node:crypto"
import { assert, describe, it } from "vitest"
import { keyedSha256 } from "../src/internal/hmac.js"

const reference = (key: Uint8Array, text: string, hex: string) =>
  createHmac("sha256", key)
    .update(text, "utf8")
    .update(Buffer.from([0]))
    .update(hex, "hex")
    .digest("hex")

describe("keyedSha256", () => {
  it("answers what createHmac answers, for keys and messages of every length around a block", () => {
    for (const keyBytes of [0, 1, 28, 63, 64, 65, 200]) {
      const key = new Uint8Array(randomBytes(keyBytes))
      const mac = keyedSha256(key)
      for (const text of ["", "org_acme", "organisation é 📎", "o".repeat(70)]) {
        for (const payloadBytes of [0, 1, 17, 40, 64, 217]) {
          const hex = randomBytes(payloadBytes).toString("hex")
          // Twice: the pads and the outer buffer are reused between calls.
          for (let round = 0; round < 2; round++) assert.strictEqual(mac(text, hex), reference(key, text, hex))
        }
      }
    }
  })

  it("is total on malformed hex: what it cannot read counts as zero bytes, not as leftover memory", () => {
    const mac = keyedSha256(new Uint8Array(randomBytes(32)))
    const expected = mac("org_acme", "ab00")
    // Many times, between other allocations: its buffer comes from Node's shared pool, which holds
    // whatever earlier buffers left there.
    for (let n = 0; n < 200; n++) {
      Buffer.allocUnsafe(n).fill(0xff)
      assert.strictEqual(mac("org_acme", "abzz"), expected)
    }
  })
})
