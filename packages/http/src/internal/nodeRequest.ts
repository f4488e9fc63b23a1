// A Node request as the router sees it, whether or not a framework's body parser ran first: the
// body comes from what the parser left in `req.body` when it read the stream, else from the stream.
// A store upload takes exact bytes only: a parser's value is never stored in place of the file.
import type { IncomingMessage } from "node:http"

export const headerOf = (value: string | ReadonlyArray<string> | undefined) =>
  value === undefined ? undefined : typeof value === "string" ? value : value.join(", ")

export const gone = () => new Error("the client went away before the body ended")

/**
 * The path Express (or a router like it) took off `req.url` before the handler: `req.baseUrl`, "" at
 * the root or where no framework says. Only path segments: it goes into the links handed out.
 */
export const mountOf = (req: IncomingMessage): string => {
  const base = (req as { baseUrl?: unknown }).baseUrl
  if (typeof base !== "string") return ""
  const trimmed = base.replace(/\/+$/, "")
  return /^(\/[^/?#\\\s]+)*$/.test(trimmed) ? trimmed : ""
}

/** `mount` when `pathname` is under it (the Fastify plugin's prefix, which Fastify leaves in the URL), else "". */
export const mountIn = (pathname: string, mount: string): string =>
  pathname.startsWith(mount) && (pathname.length === mount.length || pathname[mount.length] === "/") ? mount : ""

/** Raised when middleware read the body and left nothing mailroom can use in `req.body`. */
export class BodyAlreadyRead extends Error {
  constructor() {
    super(
      "the request body was read before mailroom's handler (by a body parser or other middleware) and req.body holds nothing usable; mount mailroom before that middleware, or use express.json(), express.raw() or express.text()"
    )
  }
}

/**
 * What a parser left, once it has read the stream: `undefined` when nothing read it (no parser, or
 * one that skipped this content type, leaving `req.body` `{}` or unset), so the stream is read.
 * express.json() and body-parser leave the value, express.raw() a Buffer, express.text() a string.
 */
export const parsedBody = (req: IncomingMessage): Uint8Array | BodyAlreadyRead | undefined => {
  const read = req.readableEnded || (req as { _body?: unknown })._body === true
  if (!read) return undefined
  const body = (req as { body?: unknown }).body
  if (body instanceof Uint8Array) return body
  if (typeof body === "string") return Buffer.from(body, "utf8")
  // Parsed JSON: the router parses it again, so the same rules (and error shapes) apply to it.
  if (typeof body === "object" && body !== null) return Buffer.from(JSON.stringify(body), "utf8")
  if (typeof body === "number" || typeof body === "boolean") return Buffer.from(JSON.stringify(body), "utf8")
  return new BodyAlreadyRead()
}

/** The body up to `limit` bytes, or "too-large" as soon as more arrive. */
export const readBody = (req: IncomingMessage, limit: number): Promise<Uint8Array | "too-large"> => {
  const parsed = parsedBody(req)
  if (parsed instanceof BodyAlreadyRead) return Promise.reject(parsed)
  if (parsed !== undefined) return Promise.resolve(parsed.byteLength > limit ? "too-large" : parsed)
  return new Promise((resolve, reject) => {
    if (req.destroyed && !req.readableEnded) return reject(gone())
    const chunks: Array<Buffer> = []
    let size = 0
    // Every request closes once answered: the listeners go as soon as the body is settled, so that
    // close does not build the Error of a body cut short for a request that was read in full.
    const detach = () => {
      req.off("data", onData)
      req.off("end", onEnd)
      req.off("error", onError)
      req.off("close", onClose)
    }
    const onData = (chunk: Buffer) => {
      size += chunk.byteLength
      if (size > limit) {
        detach()
        req.pause()
        resolve("too-large")
      } else chunks.push(chunk)
    }
    const onEnd = () => {
      detach()
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks))
    }
    const onError = (error: unknown) => {
      detach()
      reject(error)
    }
    // Without this a body cut short would leave the request waiting for an end that never comes.
    const onClose = () => {
      detach()
      reject(gone())
    }
    req.on("data", onData)
    req.on("end", onEnd)
    req.on("error", onError)
    req.on("close", onClose)
  })
}

/**
 * Raised for a store upload whose bytes middleware read without keeping them: a parser's value
 * serialised again is another file (`1e400` becomes `null`, duplicate keys merge, whitespace goes),
 * so the upload is refused rather than stored changed.
 */
export class BytesNotKept extends Error {}

/**
 * The exact bytes of a body middleware already read, when it kept them: a Buffer in `req.body`
 * (express.raw()) or in `req.rawBody` (a parser's `verify` hook, Google Cloud Functions). `undefined`
 * when nothing read the stream.
 */
export const exactBody = (req: IncomingMessage): Uint8Array | BytesNotKept | undefined => {
  const read = req.readableEnded || (req as { _body?: unknown })._body === true
  if (!read) return undefined
  const { body, rawBody } = req as { body?: unknown; rawBody?: unknown }
  if (rawBody instanceof Uint8Array) return rawBody
  if (body instanceof Uint8Array) return body
  return new BytesNotKept(
    "middleware mounted before mailroom's handler (a body parser such as express.json()) read this upload without keeping its exact bytes, so it was not stored: mount mailroom's handler before body parsers, or keep the bytes in req.rawBody"
  )
}

/**
 * A store upload's body as a Web stream of its exact bytes, or why they are gone. The stream errors
 * when the client goes away before the end: a body cut short must never read as a complete
 * (chunked) upload.
 */
export const bodyOf = (req: IncomingMessage): ReadableStream<Uint8Array> | BytesNotKept => {
  const kept = exactBody(req)
  if (kept instanceof BytesNotKept) return kept
  if (kept !== undefined) {
    return new ReadableStream<Uint8Array>({
      start: (controller) => {
        controller.enqueue(kept)
        controller.close()
      }
    })
  }
  // Set once the stream is closed, errored or cancelled: whatever `req` does afterwards is ignored, as
  // a closed controller throws, and a throw from an event listener would take the process down.
  let detach: (() => void) | undefined
  return new ReadableStream<Uint8Array>({
    start: (controller) => {
      // The client may have gone before a store route asked for the body.
      if (req.destroyed && !req.readableEnded) return controller.error(gone())
      const onData = (chunk: Buffer) => {
        controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength))
        if ((controller.desiredSize ?? 0) <= 0) req.pause()
      }
      const settle = (error?: unknown) => {
        detach?.()
        if (error === undefined) controller.close()
        else controller.error(error)
      }
      const onEnd = () => settle()
      const onError = (error: unknown) => settle(error)
      const onClose = () => settle(gone())
      detach = () => {
        detach = undefined
        req.off("data", onData)
        req.off("end", onEnd)
        req.off("error", onError)
        req.off("close", onClose)
      }
      req.on("data", onData)
      req.once("end", onEnd)
      req.once("error", onError)
      req.once("close", onClose)
    },
    pull: () => {
      req.resume()
    },
    // A reader that stops early (a body over its limit): the rest is not read, and the connection
    // closes after the answer.
    cancel: () => {
      detach?.()
      req.pause()
    }
  })
}
