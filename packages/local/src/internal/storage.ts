// The disk format of the local store: one file per object, a one-line JSON header then the raw
// bytes, written to a temporary file and renamed into place so a replacement is atomic.
import { randomUUID } from "node:crypto"
import { closeSync, constants, open as fsOpen, write as fsWrite, readdirSync, rmSync, statSync } from "node:fs"
import { type FileHandle, mkdir, open, rename, rm, rmdir } from "node:fs/promises"
import * as path from "node:path"

/** What the first line of an object's file holds. */
interface Header {
  readonly contentType: string
}

// A content type is short; a header that runs longer than this is a damaged file, not an object.
const maxHeaderBytes = 16 * 1024

export const encodeHeader = (contentType: string): Uint8Array =>
  Buffer.from(`${JSON.stringify({ contentType } satisfies Header)}\n`, "utf8")

/** Thrown for a file that is not one this store wrote. */
export class DamagedObject extends Error {}

/** A file system error with a code, as `node:fs` throws them. */
const fsError = (code: string, message: string) => Object.assign(new Error(message), { code })

export interface OpenObject {
  /** Open on the file as it was when opened: a later rename over it does not change what is read. */
  readonly handle: FileHandle
  readonly contentType: string
  /** Where the bytes start in the file. */
  readonly start: number
  readonly size: number
}

export const openObject = async (file: string): Promise<OpenObject> => {
  const handle = await open(file, "r")
  try {
    const stat = await handle.stat()
    // A key that names a directory of other keys is not an object.
    if (!stat.isFile()) throw fsError("EISDIR", `not a file: ${file}`)
    const chunk = Buffer.alloc(Math.min(maxHeaderBytes, stat.size))
    const { bytesRead } = await handle.read(chunk, 0, chunk.byteLength, 0)
    const end = chunk.subarray(0, bytesRead).indexOf(0x0a)
    if (end === -1) throw new DamagedObject(`the object file ${file} has no header line`)
    let header: unknown
    try {
      header = JSON.parse(chunk.toString("utf8", 0, end))
    } catch (cause) {
      throw new DamagedObject(`the object file ${file} has a damaged header`, { cause })
    }
    const contentType = (header as Partial<Header> | null)?.contentType
    if (typeof contentType !== "string") throw new DamagedObject(`the object file ${file} has no content type`)
    return { handle, contentType, start: end + 1, size: stat.size - end - 1 }
  } catch (error) {
    await handle.close()
    throw error
  }
}

/** The bytes of an open object; the handle stays open. */
export const readContent = async (object: OpenObject): Promise<Uint8Array> => {
  const content = new Uint8Array(object.size)
  let offset = 0
  while (offset < object.size) {
    const { bytesRead } = await object.handle.read(content, offset, object.size - offset, object.start + offset)
    if (bytesRead === 0) break
    offset += bytesRead
  }
  return offset === object.size ? content : content.subarray(0, offset)
}

export const readObject = async (
  file: string
): Promise<{ readonly contentType: string; readonly content: Uint8Array }> => {
  const object = await openObject(file)
  try {
    return { contentType: object.contentType, content: await readContent(object) }
  } finally {
    await object.handle.close()
  }
}

/** A file being written under the temporary directory; nothing is visible until `commit`. */
export interface PendingObject {
  readonly write: (chunk: Uint8Array) => Promise<void>
  /** Moves the finished file over `target`: readers see the old object or the new one, never a mix. */
  readonly commit: (target: string) => Promise<void>
  /** Removes the temporary file; safe to call after a failed commit, a no-op after a successful one. */
  readonly abort: () => Promise<void>
}

export const beginObject = async (tmpDir: string, contentType: string): Promise<PendingObject> => {
  await mkdir(tmpDir, { recursive: true })
  // The writer's pid in the name tells a later start whether its writer is gone (see removeOrphans).
  const file = path.join(tmpDir, `${process.pid}.${randomUUID()}.part`)
  const handle = await open(file, "wx")
  let isOpen = true
  let committed = false
  const close = async () => {
    if (isOpen) {
      isOpen = false
      await handle.close()
    }
  }
  const write = async (chunk: Uint8Array) => {
    let offset = 0
    while (offset < chunk.byteLength) {
      const { bytesWritten } = await handle.write(chunk, offset, chunk.byteLength - offset)
      offset += bytesWritten
    }
  }
  try {
    await write(encodeHeader(contentType))
  } catch (error) {
    await close().catch(() => undefined)
    await rm(file, { force: true })
    throw error
  }
  return {
    write,
    commit: async (target) => {
      // Flushed before the rename, so a crash cannot leave a renamed but empty file.
      await handle.sync()
      await close()
      // A delete may prune the parent directory between mkdir and rename; then try again.
      for (let attempt = 0; ; attempt++) {
        await mkdir(path.dirname(target), { recursive: true })
        try {
          await rename(file, target)
          committed = true
          return
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== "ENOENT" || attempt === 3) throw error
        }
      }
    },
    abort: async () => {
      if (committed) return
      await close().catch(() => undefined)
      await rm(file, { force: true })
    }
  }
}

/** Older than this, an unfinished upload is abandoned whoever wrote it: no request lives that long. */
const abandonedAfterMs = 24 * 60 * 60 * 1000

const isRunning = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

/**
 * Removes the unfinished uploads that processes killed mid-upload left in `tmpDir`: those whose
 * writer (the pid in the name) is no longer running, those named before names carried it, and any
 * older than a day. Another live server on the same directory keeps its uploads in progress.
 * Synchronous: it runs once, as a store is built, before it serves anything.
 */
export const removeOrphans = (tmpDir: string, now = Date.now()): void => {
  let names: ReadonlyArray<string>
  try {
    names = readdirSync(tmpDir)
  } catch {
    return
  }
  for (const name of names) {
    if (!name.endsWith(".part")) continue
    const file = path.join(tmpDir, name)
    try {
      const pid = /^([0-9]+)\./.exec(name)?.[1]
      const orphan = pid === undefined || !isRunning(Number(pid)) || now - statSync(file).mtimeMs > abandonedAfterMs
      if (orphan) rmSync(file, { force: true })
    } catch {
      // A leftover that cannot be removed now costs disk space, not correctness: the next start retries.
    }
  }
}

/** Removes the directories a deleted key leaves empty, up to (not including) `root`. */
export const pruneEmptyParents = async (root: string, file: string): Promise<void> => {
  for (let dir = path.dirname(file); dir.startsWith(root + path.sep); dir = path.dirname(dir)) {
    try {
      await rmdir(dir)
    } catch {
      return
    }
  }
}

const { O_CREAT, O_DSYNC, O_EXCL, O_WRONLY } = constants
const openForDurableWrite = (file: string) =>
  new Promise<number>((resolve, reject) =>
    fsOpen(file, O_WRONLY | O_CREAT | O_EXCL | O_DSYNC, 0o666, (error, fd) => (error ? reject(error) : resolve(fd)))
  )
const writeAll = async (fd: number, content: Uint8Array) => {
  for (let offset = 0; offset < content.byteLength; ) {
    offset += await new Promise<number>((resolve, reject) =>
      fsWrite(fd, content, offset, content.byteLength - offset, offset, (error, written) =>
        error ? reject(error) : resolve(written)
      )
    )
  }
}

/**
 * Writes `content` to a temporary file in `tmpDir` (same file system) opened with `O_DSYNC`, so the
 * write returns once the bytes and the size that reads them back are on disk (what a write then an
 * fdatasync give, in one call), then renames it to `target`: a reader never sees it partial. `tmpDir`
 * must exist. Three calls on the thread pool (open, write, rename); the close, which never waits
 * for the disk, is made in place.
 */
export const writeFileDurably = async (tmpDir: string, target: string, content: Uint8Array): Promise<void> => {
  const temporary = path.join(tmpDir, `.${path.basename(target)}.${randomUUID()}.tmp`)
  const fd = await openForDurableWrite(temporary)
  try {
    try {
      await writeAll(fd, content)
    } finally {
      closeSync(fd)
    }
    await rename(temporary, target)
  } catch (error) {
    await rm(temporary, { force: true })
    throw error
  }
}

// Up to this much of a streamed file is gathered before it is written: a small file (most messages)
// takes the one durable write above, a large one is written as it comes and never held whole.
const gatheredBytes = 256 * 1024

/**
 * As `writeFileDurably`, for content that arrives in chunks: held only until it passes
 * `gatheredBytes`, then written as it comes to a temporary file made durable with one fdatasync at
 * the end and renamed to `target`. A failure of `source` or the disk removes the temporary file and
 * leaves `target` as it was.
 */
export const writeStreamDurably = async (
  tmpDir: string,
  target: string,
  source: AsyncIterable<Uint8Array>
): Promise<void> => {
  const gathered: Array<Uint8Array> = []
  let size = 0
  let temporary: { readonly file: string; readonly handle: FileHandle } | undefined
  let position = 0
  const flush = async (handle: FileHandle) => {
    for (const chunk of gathered.splice(0)) {
      for (let offset = 0; offset < chunk.byteLength; ) {
        const { bytesWritten } = await handle.write(chunk, offset, chunk.byteLength - offset, position)
        offset += bytesWritten
        position += bytesWritten
      }
    }
    size = 0
  }
  try {
    for await (const chunk of source) {
      gathered.push(chunk)
      size += chunk.byteLength
      if (size < gatheredBytes) continue
      if (temporary === undefined) {
        const file = path.join(tmpDir, `.${path.basename(target)}.${randomUUID()}.tmp`)
        temporary = { file, handle: await open(file, "wx") }
      }
      await flush(temporary.handle)
    }
    if (temporary === undefined) return await writeFileDurably(tmpDir, target, Buffer.concat(gathered))
    await flush(temporary.handle)
    await temporary.handle.datasync()
    await temporary.handle.close()
    await rename(temporary.file, target)
  } catch (error) {
    if (temporary !== undefined) {
      await temporary.handle.close().catch(() => undefined)
      await rm(temporary.file, { force: true })
    }
    throw error
  }
}

/** Writes `content` to `target` through a temporary file in `tmpDir` (same file system) and a rename. */
export const writeFileAtomic = async (tmpDir: string, target: string, content: Uint8Array): Promise<void> => {
  await mkdir(tmpDir, { recursive: true })
  const file = path.join(tmpDir, `.${path.basename(target)}.${randomUUID()}.tmp`)
  try {
    const handle = await open(file, "wx")
    try {
      await handle.writeFile(content)
      await handle.sync()
    } finally {
      await handle.close()
    }
    await rename(file, target)
  } catch (error) {
    await rm(file, { force: true })
    throw error
  }
}
