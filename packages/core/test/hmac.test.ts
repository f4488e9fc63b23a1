// The attachment-id tag's HMAC (internal/hmac.ts) against node:crypto's createHmac, for keys and
// messages on both sides of SHA-256's 64-byte block: ids issued before depend on every byte.
import { createHmac, randomBytes } from "node:crypto"
import { assert, describe, it } from "vitest"
import { keyedSha256, messageStart } from "../src/internal/hmac.js"

describe("keyedSha256", () => {
  it("answers what createHmac answers, for keys and messages of every length around a block", () => {
    for (const keyBytes of [0, 1, 28, 63, 64, 65, 200]) {
      const key = new Uint8Array(randomBytes(keyBytes))
      const mac = keyedSha256(key)
      for (const messageBytes of [0, 1, 17, 55, 56, 63, 64, 65, 119, 120, 300]) {
        const message = randomBytes(messageBytes)
        // Twice: the pads and the outer buffer are reused between calls.
        for (let round = 0; round < 2; round++) {
          const buffer = mac.message(messageBytes)
          message.copy(buffer, messageStart)
          assert.strictEqual(mac.digest(buffer), createHmac("sha256", key).update(message).digest("hex"))
        }
      }
    }
  })
})
