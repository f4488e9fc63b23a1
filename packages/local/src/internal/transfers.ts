// What keeps the store routes' transfers from holding the process's files: a bound on the files open
// for uploads and downloads at once, and an idle timeout that lets go of a transfer whose client
// stopped reading (or sending), closing its file.
import type { FileHandle } from "node:fs/promises"

/** The files the routes may hold open at once: `acquire` answers a release, or undefined when all are taken. */
export interface Slots {
  readonly acquire: () => (() => void) | undefined
  readonly inUse: () => number
}

export const slots = (max: number): Slots => {
  let used = 0
  return {
    acquire: () => {
      if (used >= max) return undefined
      used += 1
      let released = false
      return () => {
        if (released) return
        released = true
        used -= 1
      }
    },
    inUse: () => used
  }
}

/** Raised into a transfer whose other side did nothing for the idle timeout. */
export class TransferIdle extends Error {
  constructor(readonly idleMillis: number) {
    super(`the transfer was idle for ${idleMillis} ms and was cut off`)
  }
}

const chunkBytes = 64 * 1024

/**
 * `size` bytes of the open file from `start`, as a stream read on demand. The file closes (and
 * `onClose` runs, once) when the bytes are all read, the reader cancels, or the reader pulls nothing
 * for `idleMillis`: then the stream errors with TransferIdle, so whoever pipes it drops its client.
 */
export const fileStream = (
  handle: FileHandle,
  start: number,
  size: number,
  idleMillis: number,
  onClose: () => void
): ReadableStream<Uint8Array> => {
  let offset = 0
  let timer: ReturnType<typeof setTimeout> | undefined
  let closed = false
  const close = () => {
    clearTimeout(timer)
    if (closed) return
    closed = true
    onClose()
    handle.close().catch(() => undefined)
  }
  const idle = (controller: ReadableStreamDefaultController<Uint8Array>) => {
    clearTimeout(timer)
    timer = setTimeout(() => {
      close()
      controller.error(new TransferIdle(idleMillis))
    }, idleMillis)
  }
  return new ReadableStream<Uint8Array>(
    {
      // A reader that never asks for the first bytes holds the file just the same.
      start: (controller) => idle(controller),
      pull: async (controller) => {
        clearTimeout(timer)
        if (closed) return
        try {
          const buffer = new Uint8Array(Math.min(chunkBytes, size - offset))
          const { bytesRead } = await handle.read(buffer, 0, buffer.byteLength, start + offset)
          offset += bytesRead
          if (bytesRead > 0)
            controller.enqueue(bytesRead === buffer.byteLength ? buffer : buffer.subarray(0, bytesRead))
          if (bytesRead === 0 || offset >= size) {
            close()
            controller.close()
            return
          }
        } catch (error) {
          close()
          controller.error(error)
          return
        }
        // Waits for the reader: pull again within the timeout, or the file is let go.
        idle(controller)
      },
      cancel: () => close()
    },
    // One chunk ahead: a reader that stops holds at most 64 KiB here, beside what its socket buffers.
    { highWaterMark: 1 }
  )
}

/**
 * The next chunk a reader gives, or "idle" when it gives nothing for `idleMillis` (a client that
 * stopped sending mid-upload): the reader is then cancelled.
 */
export const readWithin = async <A>(
  reader: ReadableStreamDefaultReader<A>,
  idleMillis: number
): Promise<ReadableStreamReadResult<A> | "idle"> => {
  let timer: ReturnType<typeof setTimeout> | undefined
  const idle = new Promise<"idle">((resolve) => {
    timer = setTimeout(() => resolve("idle"), idleMillis)
  })
  const read = reader.read()
  // Once the race is lost, what the read settles with is nobody's: never an unhandled rejection.
  read.catch(() => undefined)
  try {
    const next = await Promise.race([read, idle])
    if (next === "idle") reader.cancel().catch(() => undefined)
    return next
  } finally {
    clearTimeout(timer)
  }
}
