import { randomBytes } from "node:crypto"
import { Hash } from "@smithy/hash-node"
import { assert, describe, it } from "vitest"
import { Sha256 } from "../src/internal/sha256.js"

const digest = async (
  make: (secret?: string | Uint8Array) => { update(d: Uint8Array | string): void; digest(): Promise<Uint8Array> },
  secret: string | Uint8Array | undefined,
  parts: ReadonlyArray<string | Uint8Array>
) => {
  const hash = make(secret)
  for (const part of parts) hash.update(part)
  return Buffer.from(await hash.digest()).toString("hex")
}

describe("Sha256 (the signer's hash on cached KeyObjects)", () => {
  it("answers what @smithy/hash-node's Hash answers, for hashes and HMACs keyed by strings or bytes", async () => {
    const key = new Uint8Array(randomBytes(32))
    const cases: ReadonlyArray<readonly [string | Uint8Array | undefined, ReadonlyArray<string | Uint8Array>]> = [
      [undefined, ["PUT\n/bucket/key\n", "é"]],
      ["AWS4secret", ["20261122"]],
      [key, ["AWS4-HMAC-SHA256\n20261122T000000Z\n"]],
      [key, [new Uint8Array(randomBytes(100)), "more"]]
    ]
    for (const [secret, parts] of cases) {
      // Twice: the second time the KeyObject comes from the cache.
      for (let round = 0; round < 2; round++) {
        assert.strictEqual(
          await digest((s) => new Sha256(s), secret, parts),
          await digest((s) => new Hash("sha256", s), secret, parts)
        )
      }
    }
  })

  it("starts over after reset", async () => {
    const hash = new Sha256("k")
    hash.update("discarded")
    hash.reset()
    hash.update("kept")
    const expected = new Hash("sha256", "k")
    expected.update("kept")
    assert.deepStrictEqual(await hash.digest(), await expected.digest())
  })
})
