// The outbox's message bytes from nodemailer's compiled MIME tree, written out in one synchronous
// pass into one buffer of their exact length (base64 a chunk of lines at a time). nodemailer's own `build()` streams every part through `stream.pipeline`, whose teardown
// creates an AbortError (a DOMException with its stack) for each part of every message; the headers,
// boundaries and encoders here are still nodemailer's, so the bytes are the ones `build()` writes
// (test/mime.test.ts compares them).
import * as qp from "nodemailer/lib/qp"

/** What this pass reads of a nodemailer `MimeNode`. */
interface Node {
  readonly content?: unknown
  readonly multipart?: unknown
  readonly boundary?: string
  readonly childNodes: ReadonlyArray<Node>
  readonly _raw?: unknown
  readonly _transforms: ReadonlyArray<unknown>
  readonly _processFuncs: ReadonlyArray<unknown>
  readonly newline?: unknown
  buildHeaders(): string
  getTransferEncoding(): string | false
  getHeader(name: string): unknown
}

const isBytes = (content: unknown): content is string | Buffer =>
  typeof content === "string" || Buffer.isBuffer(content)

/**
 * Whether every part is one this pass writes as `build()` would: string or byte content (no
 * streams, files or URLs), no raw source, no transforms, and quoted-printable only for text.
 */
const writable = (node: Node, root: boolean): boolean => {
  if (node._raw) return false
  if (node._transforms.length > 0 || node._processFuncs.length > 0 || (root && node.newline)) return false
  if (node.content !== undefined && node.content !== null && node.content !== "") {
    if (!isBytes(node.content)) return false
    const encoding = node.getTransferEncoding()
    const type = String(node.getHeader("Content-Type") ?? "").toLowerCase()
    if (encoding === "quoted-printable" && !/^\s*text\//.test(type)) return false
  }
  return node.childNodes.every((child) => writable(child, false))
}

/**
 * Quoted-printable exactly as `build()` writes it: nodemailer's stream encoder, fed the content in
 * one chunk (as `build()` does) and flushed, by calling it directly rather than through a pipeline.
 */
const quotedPrintable = (content: string | Buffer): string => {
  const encoder = new qp.Encoder() as unknown as {
    push: (chunk: unknown) => boolean
    _transform: (chunk: Buffer, encoding: string, done: (error?: Error | null) => void) => void
    _flush: (done: (error?: Error | null) => void) => void
  }
  const out: Array<string> = []
  encoder.push = (chunk) => {
    if (chunk !== null && chunk !== undefined) out.push(String(chunk))
    return true
  }
  const done = (error?: Error | null) => {
    if (error) throw error
  }
  encoder._transform(typeof content === "string" ? Buffer.from(content, "utf8") : content, "buffer", done)
  encoder._flush(done)
  return out.join("")
}

/** A part's content to write: bytes as they are, or bytes to write as base64 lines. */
type Piece = Buffer | { readonly base64: Buffer }

const lineLength = 76
// 57 bytes are exactly one 76-character line: a chunk of whole lines needs no padding but the last.
const chunkBytes = (lineLength / 4) * 3 * 1024

/** The length of `bytes` as nodemailer's `wrap(encode(bytes), 76)` writes them: lines joined by CRLF. */
const base64Length = (bytes: number) => {
  const chars = 4 * Math.ceil(bytes / 3)
  return chars + 2 * Math.max(0, Math.ceil(chars / lineLength) - 1)
}

/**
 * Writes `content` as `wrap(encode(content), 76)` at `at` in `target`, a chunk of lines at a time:
 * the message is built without the whole base64 text, nor its wrapped copy, beside it.
 */
const writeBase64 = (content: Buffer, target: Buffer, at: number): number => {
  let position = at
  for (let start = 0; start < content.length; start += chunkBytes) {
    const chunk = Buffer.from(content.toString("base64", start, Math.min(start + chunkBytes, content.length)), "latin1")
    for (let i = 0; i < chunk.length; i += lineLength) {
      if (position > at) position += target.write("\r\n", position, "latin1")
      position += chunk.copy(target, position, i, Math.min(i + lineLength, chunk.length))
    }
  }
  return position
}

const contentOf = (node: Node): Piece => {
  const content = node.content
  if (!isBytes(content) || content.length === 0) return Buffer.alloc(0)
  switch (node.getTransferEncoding()) {
    case "base64":
      return { base64: typeof content === "string" ? Buffer.from(content, "utf8") : content }
    case "quoted-printable":
      return Buffer.from(quotedPrintable(content), "utf8")
    default:
      return typeof content === "string" ? Buffer.from(content, "utf8") : content
  }
}

const text = (value: string) => Buffer.from(value, "utf8")

const write = (node: Node, out: Array<Piece>): void => {
  out.push(text(`${node.buildHeaders()}\r\n\r\n`), contentOf(node))
  if (!node.multipart) return
  node.childNodes.forEach((child, i) => {
    out.push(text(`${i > 0 ? "\r\n" : ""}--${node.boundary}\r\n`))
    write(child, out)
  })
  out.push(text(`\r\n--${node.boundary}--\r\n`))
}

const lengthOf = (piece: Piece) => (Buffer.isBuffer(piece) ? piece.length : base64Length(piece.base64.length))

/** The last byte a piece writes: base64 never ends in a line break. */
const lastByteOf = (piece: Piece) => (Buffer.isBuffer(piece) ? piece.at(-1) : 0x3d)

/**
 * The message's bytes in one buffer of their exact length, or `undefined` when it has a part only
 * nodemailer's `build()` can write.
 */
export const serialize = (root: unknown): Buffer | undefined => {
  const node = root as Node
  if (!writable(node, true)) return undefined
  const pieces: Array<Piece> = []
  write(node, pieces)
  const written = pieces.filter((piece) => lengthOf(piece) > 0)
  const last = written.length === 0 ? undefined : lastByteOf(written[written.length - 1] as Piece)
  // As nodemailer's last stage does: the message ends with a line break.
  const ending = last === 0x0a ? "" : last === 0x0d ? "\n" : "\r\n"
  const bytes = Buffer.allocUnsafe(written.reduce((sum, piece) => sum + lengthOf(piece), ending.length))
  let position = 0
  for (const piece of written) {
    position = Buffer.isBuffer(piece)
      ? position + piece.copy(bytes, position)
      : writeBase64(piece.base64, bytes, position)
  }
  bytes.write(ending, position, "latin1")
  return bytes
}
