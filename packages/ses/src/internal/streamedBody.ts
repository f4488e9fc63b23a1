// Fast path: replaces the SDK's in-memory SendEmail body; held equal by SesEmailProvider.test.ts ("the body is the SDK's own, byte for byte"); justified by `pnpm bench memory` (through SES, peak RSS 1.35-2.18x the attachment bytes without it, about 1.0x with it).
// The SDK base64s each attachment into one buffer grown to the next power of two (16 MiB for 7 MB),
// held for the whole call: here the body is streamed from the attachment's own bytes, a piece at a time.
import { createHash } from "node:crypto"
import { Readable } from "node:stream"
import { SendEmailCommand, type SendEmailCommandInput, type SendEmailCommandOutput } from "@aws-sdk/client-sesv2"
import type { FinalizeRequestMiddleware } from "@smithy/types"

// What the SDK writes for an empty blob: the attachment's base64 goes between the two quotes. A `"`
// inside a JSON string is always escaped, so this can only be the member itself.
const placeholder = Buffer.from('"RawContent":""', "latin1")
// A multiple of 3: each piece's base64 has no padding, so the pieces join into the whole's base64.
const pieceBytes = 3 * 16 * 1024
const alphabet = Buffer.from("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", "latin1")
// Two base64 characters for each 12 bits, as one 16-bit store in the platform's byte order.
const littleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1
const pairs = Uint16Array.from({ length: 4096 }, (_, i) => {
  const first = alphabet[i >>> 6] as number
  const second = alphabet[i & 63] as number
  return littleEndian ? first | (second << 8) : (first << 8) | second
})

/** A buffer a piece's base64 is written into, with its 16-bit view. */
interface Scratch {
  readonly bytes: Buffer
  readonly pairs: Uint16Array
}

const scratchOf = (length: number): Scratch => {
  const bytes = Buffer.allocUnsafeSlow(length)
  return { bytes, pairs: new Uint16Array(bytes.buffer, bytes.byteOffset, length >>> 1) }
}

/**
 * Writes the base64 of `bytes` into `into` and answers its length. Written out rather than
 * `toString("base64")`: a string per piece is garbage enough (twice the body per send) to make V8
 * grow its young generation by tens of MiB under a few large sends.
 */
const encode = (bytes: Uint8Array, into: Scratch): number => {
  const whole = bytes.length - (bytes.length % 3)
  const out = into.pairs
  let o = 0
  for (let i = 0; i < whole; i += 3) {
    const n = ((bytes[i] as number) << 16) | ((bytes[i + 1] as number) << 8) | (bytes[i + 2] as number)
    out[o++] = pairs[n >>> 12] as number
    out[o++] = pairs[n & 4095] as number
  }
  let length = 2 * o
  if (whole < bytes.length) {
    const rest = bytes.length - whole
    const n = ((bytes[whole] as number) << 16) | (rest === 2 ? (bytes[whole + 1] as number) << 8 : 0)
    const tail = into.bytes
    tail[length++] = alphabet[n >>> 18] as number
    tail[length++] = alphabet[(n >>> 12) & 63] as number
    tail[length++] = rest === 2 ? (alphabet[(n >>> 6) & 63] as number) : 0x3d
    tail[length++] = 0x3d
  }
  return length
}

interface Request {
  body?: unknown
  headers: Record<string, string>
}

const isRequest = (request: unknown): request is Request =>
  typeof request === "object" && request !== null && "headers" in request && "body" in request

/**
 * The body the SDK would have written: its own JSON with each attachment's base64 put back, piece by
 * piece. Each base64 piece is written into the next of `scratch` in turn when given (the caller is
 * done with a buffer before it comes round again), else into a buffer of its own.
 */
function* pieces(
  skeleton: Buffer,
  at: ReadonlyArray<number>,
  contents: ReadonlyArray<Uint8Array>,
  scratch?: ReadonlyArray<Scratch>
): Generator<Buffer> {
  let from = 0
  let turn = 0
  for (const [i, content] of contents.entries()) {
    const hole = at[i] ?? 0
    yield skeleton.subarray(from, hole)
    for (let start = 0; start < content.byteLength; start += pieceBytes) {
      const piece = content.subarray(start, start + pieceBytes)
      const into = scratch?.[turn++ % scratch.length] ?? scratchOf(4 * Math.ceil(piece.byteLength / 3))
      yield into.bytes.subarray(0, encode(piece, into))
    }
    from = hole
  }
  yield skeleton.subarray(from)
}

const scratchBytes = 4 * (pieceBytes / 3)

/** The SDK's body split around its placeholders, one per attachment, in order. */
const holes = (skeleton: Buffer, count: number): ReadonlyArray<number> => {
  const at: Array<number> = []
  for (let i = skeleton.indexOf(placeholder); i >= 0; i = skeleton.indexOf(placeholder, i + placeholder.length)) {
    at.push(i + placeholder.length - 1)
  }
  if (at.length !== count) {
    throw new Error(
      `mailroom: the SDK's SendEmail body has ${at.length} empty RawContent members for ${count} attachments`
    )
  }
  return at
}

/**
 * The request's body. The SDK's Node handler pipes it into the request: then every piece is encoded
 * into one buffer, written once the one before it has been flushed, so a send holds one piece and
 * leaves no garbage behind (a buffer per piece is tens of MiB waiting for V8 to collect it under a
 * few large sends). Read any other way, it answers a buffer per piece.
 */
export class StreamedBody extends Readable {
  private readonly at: ReadonlyArray<number>
  private unpiped?: Generator<Buffer>
  /** `skeleton`: the SDK's JSON with an empty RawContent for each of `contents`, in order. */
  constructor(
    private readonly skeleton: Buffer,
    private readonly contents: ReadonlyArray<Uint8Array>
  ) {
    super()
    this.at = holes(skeleton, contents.length)
  }

  /** The body's length and SHA-256, computed over the same pieces in one reused buffer. */
  digest(): { readonly length: number; readonly sha256: string } {
    const hash = createHash("sha256")
    let length = 0
    for (const piece of pieces(this.skeleton, this.at, this.contents, [scratchOf(scratchBytes)])) {
      hash.update(piece)
      length += piece.byteLength
    }
    return { length, sha256: hash.digest("hex") }
  }

  override _read(): void {
    this.unpiped ??= pieces(this.skeleton, this.at, this.contents)
    const { done, value } = this.unpiped.next()
    this.push(done ? null : value)
  }

  override pipe<T extends NodeJS.WritableStream>(destination: T, options?: { end?: boolean }): T {
    const all = pieces(this.skeleton, this.at, this.contents, [scratchOf(scratchBytes), scratchOf(scratchBytes)])
    // At most two writes unflushed: a stream flushes in order, so when the next piece is encoded, only
    // the last write may still hold its buffer, and the next piece takes the other one.
    let unflushed = 0
    let over = false
    const pump = () => {
      while (!over && unflushed < 2) {
        const { done, value } = all.next()
        if (done) {
          over = true
          if (options?.end !== false) destination.end()
          return
        }
        unflushed++
        destination.write(value, flushed)
      }
    }
    // A failed write fails the request, which the SDK reports: here the body only stops.
    const flushed = (error?: Error | null) => {
      unflushed--
      if (error) over = true
      else pump()
    }
    pump()
    return destination
  }
}

const setHeader = (headers: Record<string, string>, name: string, value: string) => {
  for (const key of Object.keys(headers)) if (key.toLowerCase() === name) delete headers[key]
  headers[name] = value
}

/**
 * The SendEmail command for `input`, its attachments' bytes streamed into the request as base64
 * instead of held in the SDK's body. Signed as the SDK signs: the body's SHA-256 in
 * `x-amz-content-sha256`, computed over the same pieces before they are sent. Every attempt of the
 * SDK streams them afresh (the step sits between its retries and its signer).
 */
export const sendEmailCommand = (input: SendEmailCommandInput): SendEmailCommand => {
  const simple = input.Content?.Simple
  const attachments = simple?.Attachments ?? []
  const contents = attachments.map((a) => a.RawContent ?? new Uint8Array(0))
  if (simple === undefined || contents.every((content) => content.byteLength === 0)) {
    return new SendEmailCommand(input)
  }
  const empty = new Uint8Array(0)
  const command = new SendEmailCommand({
    ...input,
    Content: {
      ...input.Content,
      Simple: { ...simple, Attachments: attachments.map((a) => ({ ...a, RawContent: empty })) }
    }
  })
  let signed: { readonly length: number; readonly sha256: string } | undefined
  const stream: FinalizeRequestMiddleware<SendEmailCommandInput, SendEmailCommandOutput> = (next) => (args) => {
    const { request } = args
    if (!isRequest(request) || !(request.body instanceof Uint8Array || typeof request.body === "string")) {
      throw new Error("mailroom: the SDK's SendEmail request has no JSON body to stream attachments into")
    }
    const body = request.body
    const skeleton =
      typeof body === "string" ? Buffer.from(body, "utf8") : Buffer.from(body.buffer, body.byteOffset, body.byteLength)
    const streamed = new StreamedBody(skeleton, contents)
    signed ??= streamed.digest()
    request.body = streamed
    setHeader(request.headers, "content-length", String(signed.length))
    setHeader(request.headers, "x-amz-content-sha256", signed.sha256)
    return next(args)
  }
  command.middlewareStack.addRelativeTo(stream, {
    name: "mailroomStreamedAttachments",
    relation: "before",
    toMiddleware: "httpSigningMiddleware"
  })
  return command
}
