// The README's quick start, exactly as written there, run against a real server: the install line
// and the four lines after it, which upload a file and send it.
import { readFile } from "node:fs/promises"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { MailroomClient } from "../src/index.js"
import { acme, type Mailroom, startMailroom } from "./support/mailroom.js"

const readme = await readFile(new URL("../README.md", import.meta.url), "utf8")
const quickStart = readme.slice(
  readme.indexOf("## Quick start"),
  readme.indexOf("\n## ", readme.indexOf("## Quick start") + 1)
)
const blocks = [...quickStart.matchAll(/```(\w+)\n([\s\S]*?)```/g)].map(([, lang, code]) => ({
  lang,
  lines: (code ?? "").trimEnd().split("\n")
}))

type Run = (client: typeof MailroomClient, process: { env: Record<string, string> }) => Promise<void>
const AsyncFunction = Object.getPrototypeOf(async () => {}).constructor as new (...args: Array<string>) => Run

describe("the README's quick start", () => {
  let mailroom: Mailroom
  beforeAll(async () => {
    mailroom = await startMailroom()
  })
  afterAll(async () => {
    await mailroom?.close()
  })

  it("is five lines: install, import, make, upload, send", () => {
    assert.deepStrictEqual(
      blocks.map((b) => b.lang),
      ["sh", "ts"]
    )
    assert.deepStrictEqual(blocks[0]?.lines, ["npm install @mailroom/client"])
    assert.strictEqual(blocks[1]?.lines.length, 4)
    assert.strictEqual(blocks[1]?.lines[0], 'import { MailroomClient } from "@mailroom/client"')
  })

  it("is the same five lines as the root README's remote quick start", async () => {
    const root = await readFile(new URL("../../../README.md", import.meta.url), "utf8")
    const section = root.slice(
      root.indexOf("## From another backend"),
      root.indexOf("\n## ", root.indexOf("## From another backend") + 1)
    )
    const rootBlocks = [...section.matchAll(/```(\w+)\n([\s\S]*?)```/g)].map(([, lang, code]) => ({
      lang,
      lines: (code ?? "").trimEnd().split("\n")
    }))
    assert.deepStrictEqual(rootBlocks, blocks)
  })

  it("uploads the file and sends it: one message, with the attachment", async () => {
    // The import line is the module this test imported; the other lines run as written.
    const run = new AsyncFunction("MailroomClient", "process", (blocks[1]?.lines ?? []).slice(1).join("\n"))
    await run(MailroomClient, { env: { MAILROOM_URL: mailroom.url, MAILROOM_API_KEY: acme.apiKey } })
    const sent = await mailroom.sent()
    assert.strictEqual(sent.length, 1)
    const eml = await mailroom.readSent(sent[0] ?? "")
    assert.match(eml, /^Subject: Your invoice$/m)
    assert.match(eml, /^To: alice@example\.com$/m)
    assert.match(eml, /filename="?invoice\.txt"?/)
    assert.include(eml, Buffer.from("Invoice #42: 10 EUR").toString("base64"))
  })
})
