// Adapter.jsonFiles: the Blob it builds is byte for byte what JSON.stringify writes with each file's
// base64 in place, whatever the files' sizes, and a body that lost or repeated a placeholder is refused.
import { assert, describe, it } from "@effect/vitest"
import * as Adapter from "../src/adapter.js"

const file = (size: number) => Uint8Array.from({ length: size }, (_, i) => (i * 2654435761) >>> 24)

describe("Adapter.jsonFiles", () => {
  it("writes JSON.stringify's bytes, each file's base64 where its placeholder was", async () => {
    // Empty, padded twice and once, unpadded, one piece, one piece and a byte, several pieces.
    const files = [0, 1, 2, 3, 49_152, 49_153, 150_001].map(file)
    const fields = (content: (i: number) => string) => ({
      subject: 'a "quoted" subject, \\ and ünïcode',
      attachments: files.map((_, i) => ({ filename: `f${i}.pdf`, content: content(i) })),
      after: "the end"
    })
    const json = Adapter.jsonFiles(files)
    const body = json.body(JSON.stringify(fields(json.placeholder)))
    const expected = Buffer.from(JSON.stringify(fields((i) => Buffer.from(files[i] ?? []).toString("base64"))))
    assert.deepStrictEqual(Buffer.from(await body.arrayBuffer()), expected)
    assert.strictEqual(body.size, expected.byteLength)
  })

  it("a placeholder in a string value is escaped, and left as it is", async () => {
    const json = Adapter.jsonFiles([file(4)])
    const text = `"${json.placeholder(0)}"`
    const body = json.body(JSON.stringify({ text, content: json.placeholder(0) }))
    const parsed = JSON.parse(await body.text()) as { text: string; content: string }
    assert.strictEqual(parsed.text, text)
    assert.strictEqual(parsed.content, Buffer.from(file(4)).toString("base64"))
  })

  it("refuses JSON that lost a file's placeholder or holds one twice", () => {
    const json = Adapter.jsonFiles([file(4), file(5)])
    assert.throws(() => json.body(JSON.stringify({ a: json.placeholder(0) })), /placeholder/)
    assert.throws(
      () => json.body(JSON.stringify({ a: json.placeholder(0), b: json.placeholder(1), c: json.placeholder(1) })),
      /placeholder/
    )
    // Another send's placeholders are not this one's.
    const other = Adapter.jsonFiles([file(4)])
    assert.throws(() => json.body(JSON.stringify({ a: other.placeholder(0), b: other.placeholder(1) })), /placeholder/)
  })
})
