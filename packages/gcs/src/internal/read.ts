// One GET per object for core's `ObjectStore.read`: the size and type come from the media download's
// response headers, and the body is read only once core has admitted them.
import type { Readable } from "node:stream"
import type { File } from "@google-cloud/storage"
import type { ObjectStore } from "@mailroom/core"
import * as Adapter from "@mailroom/core/adapter"
import * as Effect from "effect/Effect"
import { toLookupError } from "./errors.js"

interface Opened {
  readonly stream: Readable
  readonly info: ObjectStore.ObjectInfo
}

const header = (headers: Record<string, unknown>, name: string) => {
  const value = headers[name]
  return typeof value === "string" ? value : undefined
}

/** Starts the download and waits for its headers; the stream is left paused, its body unread. */
const open = (file: File) =>
  new Promise<Opened>((resolve, reject) => {
    const stream = file.createReadStream()
    stream.once("error", reject)
    stream.once("response", (response: { statusCode?: number; status?: number; headers?: Record<string, unknown> }) => {
      const status = response.statusCode ?? response.status ?? 0
      // An error status is followed by the stream's own error, which carries GCS's answer.
      if (status < 200 || status > 299) return
      const headers = response.headers ?? {}
      // The stored length: Content-Length is the compressed one when GCS serves a gzip-stored object.
      const size = Number(header(headers, "x-goog-stored-content-length") ?? header(headers, "content-length") ?? 0)
      const contentType = header(headers, "content-type") ?? "application/octet-stream"
      resolve({ stream, info: { size, contentType } })
    })
    // The SDK sends the request when the stream is first read; read(0) asks without taking data.
    stream.read(0)
  })

const collect = (stream: Readable) =>
  new Promise<Uint8Array>((resolve, reject) => {
    const chunks: Array<Buffer> = []
    stream.on("data", (chunk: Buffer) => chunks.push(chunk))
    stream.once("end", () => {
      const content = Buffer.concat(chunks)
      resolve(new Uint8Array(content.buffer, content.byteOffset, content.byteLength))
    })
    stream.once("error", reject)
  })

const closed = (stream: Readable) =>
  new Promise<void>((resolve) => {
    stream.once("close", () => setImmediate(resolve))
    stream.once("error", () => undefined)
    stream.destroy()
  })

export const read = <E>(
  file: File,
  key: string,
  options: ObjectStore.ReadOptions<E> | undefined
): Effect.Effect<
  ObjectStore.StoredObject,
  ObjectStore.ObjectNotFound | ObjectStore.ObjectTooLarge | ObjectStore.ObjectStoreError | E
> =>
  Effect.acquireUseRelease(
    Effect.tryPromise({ try: () => open(file), catch: (error) => toLookupError("get", key, error) }),
    ({ stream, info }) =>
      Effect.andThen(
        Adapter.admit(key, info, options),
        Effect.tryPromise({
          try: async () => ({ info, content: await collect(stream) }),
          catch: (error) => toLookupError("get", key, error)
        })
      ),
    // A refused or interrupted read closes the download instead of reading a body nobody wants. The
    // SDK answers a stream closed early by destroying its HTTP agent's sockets: waiting for that to
    // be done keeps the next request from being handed one of them.
    ({ stream }, exit) => (exit._tag === "Success" ? Effect.void : Effect.promise(() => closed(stream)))
  )
