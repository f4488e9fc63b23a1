// The outbox's message bytes from nodemailer's compiled MIME tree, written out in one synchronous
// pass. nodemailer's own `build()` streams every part through `stream.pipeline`, whose teardown
// creates an AbortError (a DOMException with its stack) for each part of every message; the headers,
// boundaries and encoders here are still nodemailer's, so the bytes are the ones `build()` writes
// (test/mime.test.ts compares them).
import * as base64 from "nodemailer/lib/base64"
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

const contentOf = (node: Node): string | Buffer => {
  const content = node.content
  if (!isBytes(content) || content.length === 0) return ""
  switch (node.getTransferEncoding()) {
    case "base64":
      return base64.wrap(base64.encode(content), 76)
    case "quoted-printable":
      return quotedPrintable(content)
    default:
      return content
  }
}

const write = (node: Node, out: Array<string | Buffer>): void => {
  out.push(`${node.buildHeaders()}\r\n\r\n`, contentOf(node))
  if (!node.multipart) return
  node.childNodes.forEach((child, i) => {
    out.push(`${i > 0 ? "\r\n" : ""}--${node.boundary}\r\n`)
    write(child, out)
  })
  out.push(`\r\n--${node.boundary}--\r\n`)
}

/** The message's bytes, or `undefined` when it has a part only nodemailer's `build()` can write. */
export const serialize = (root: unknown): Buffer | undefined => {
  const node = root as Node
  if (!writable(node, true)) return undefined
  const out: Array<string | Buffer> = []
  write(node, out)
  const bytes = Buffer.concat(out.map((part) => (typeof part === "string" ? Buffer.from(part, "utf8") : part)))
  // As nodemailer's last stage does: the message ends with a line break.
  const last = bytes.at(-1)
  if (last === 0x0a) return bytes
  return Buffer.concat([bytes, Buffer.from(last === 0x0d ? "\n" : "\r\n")])
}
