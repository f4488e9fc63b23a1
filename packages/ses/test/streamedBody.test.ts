// The streamed SendEmail body on its own: the SDK's JSON with each attachment's base64 put back, the
// same whether piped (as the SDK's Node handler takes it) or read, and the digest it is signed with.
import { createHash } from "node:crypto"
import { Writable } from "node:stream"
import { assert, describe, it } from "vitest"
import { StreamedBody } from "../src/internal/streamedBody.js"

const bytes = new Uint8Array(200_003)
for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 2654435761) >>> 24
// Lengths of each remainder by 3, one spanning several pieces, one a view into a larger buffer.
const contents = [bytes.subarray(1, 150_001), bytes.subarray(7, 8), bytes.subarray(0, 2), new Uint8Array(0)]
const member = (content: string) => `{"RawContent":"${content}","FileName":"f"}`
const skeleton = Buffer.from(`{"Content":{"Simple":{"Attachments":[${contents.map(() => member("")).join(",")}]}}}`)
const expected = Buffer.from(
  `{"Content":{"Simple":{"Attachments":[${contents.map((c) => member(Buffer.from(c).toString("base64"))).join(",")}]}}}`
)

const piped = (body: StreamedBody) =>
  new Promise<Buffer>((resolve, reject) => {
    const chunks: Array<Buffer> = []
    // Read late, as a socket does: a piece's buffer written over before its flush would show here.
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        setImmediate(() => {
          chunks.push(Buffer.from(chunk))
          done()
        })
      }
    })
    sink.on("finish", () => resolve(Buffer.concat(chunks))).on("error", reject)
    body.pipe(sink)
  })

describe("StreamedBody", () => {
  it("piped, is the SDK's JSON with each attachment's base64 in its place", async () => {
    assert.isTrue((await piped(new StreamedBody(skeleton, contents))).equals(expected))
  })

  it("read as a stream, is the same body", async () => {
    const chunks: Array<Buffer> = []
    for await (const chunk of new StreamedBody(skeleton, contents)) chunks.push(chunk as Buffer)
    assert.isTrue(Buffer.concat(chunks).equals(expected))
  })

  it("is signed over its own bytes: length and SHA-256", () => {
    assert.deepStrictEqual(new StreamedBody(skeleton, contents).digest(), {
      length: expected.byteLength,
      sha256: createHash("sha256").update(expected).digest("hex")
    })
  })

  it("refuses a body whose empty RawContent members do not match the attachments", () => {
    assert.throws(
      () => new StreamedBody(skeleton, contents.slice(1)),
      "has 4 empty RawContent members for 3 attachments"
    )
  })
})
