// The memory log and suppressions against core's suites, and the message ids the log's records use.
import { MessageLog, Suppressions } from "@mailroom/core"
import { MessageLogSuite, SuppressionsSuite } from "@mailroom/core/testing"
import { assert, describe, it } from "vitest"

MessageLogSuite("memory", { layer: MessageLog.layerMemory() })
SuppressionsSuite("memory", { layer: Suppressions.layerMemory() })

describe("MessageLog.makeId", () => {
  it("UUIDv7s, unique and increasing, however many are made in one millisecond", () => {
    const ids = Array.from({ length: 20_000 }, MessageLog.makeId)
    for (const id of ids) assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    assert.strictEqual(new Set(ids).size, ids.length)
    assert.isTrue(
      ids.every((id, i) => i === 0 || (ids[i - 1] as string) < id),
      "each id sorts after the one before"
    )
    // The random bits differ from id to id (the pool is not handed out twice).
    assert.strictEqual(new Set(ids.map((id) => id.slice(19))).size, ids.length)
  })
})
