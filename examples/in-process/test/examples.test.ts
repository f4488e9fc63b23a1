import { readFileSync } from "node:fs"
import { Effect } from "effect"
import { assert, describe, it } from "vitest"
import { program } from "../effect.js"
import * as events from "../events.js"
import { mailroom, main } from "../promise.js"

/** The part of an example the README shows: from its imports to the line that runs it. */
const shown = (file: string) => {
  const text = readFileSync(new URL(`../${file}`, import.meta.url), "utf8")
  return text.slice(text.indexOf("import "), text.indexOf("if (import.meta.main)")).trim()
}

describe("in-process examples", () => {
  it("the Effect example presigns, uploads and sends", async () => {
    const response = await Effect.runPromise(program)
    assert.match(response.message_id, /^[0-9a-f-]{36}$/)
    assert.strictEqual(response.from, "billing@acme.example")
    assert.lengthOf(response.attachments, 1)
    assert.match(response.attachments[0] ?? "", /^attachments\/org_acme\/[0-9]+_[0-9a-f]{20}-invoice\.pdf$/)
  })

  it("the Promise example sends, and rejects a bad request with the typed error", async () => {
    const { response, errors } = await main()
    assert.strictEqual(response.to[0], "alice@example.com")
    assert.deepStrictEqual(errors, [
      "from: must be a valid email address",
      "to: must contain at least 1 recipient",
      "subject: must not be empty",
      "body: must contain html or text"
    ])
    await mailroom.dispose()
  })

  it("the events example hands each recipient's delivered event, with the send's message id, to the callback", async () => {
    const { messageId, events: seen } = await events.main()
    assert.deepStrictEqual(seen, [
      ["delivered", "alice@example.com", messageId],
      ["delivered", "bob@example.com", messageId]
    ])
    await events.mailroom.dispose()
  })

  it("packages/core/README.md shows the examples exactly as they run here", () => {
    const readme = readFileSync(new URL("../../../packages/core/README.md", import.meta.url), "utf8")
    for (const file of ["effect.ts", "promise.ts", "events.ts"])
      assert.include(readme, shown(file), `README is out of date for ${file}`)
  })
})
