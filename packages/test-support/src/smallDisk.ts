// A real file system of a few megabytes (a tmpfs, mounted as root) that a test can fill to the last
// byte and free again: what a full disk does to a process, ENOSPC from the kernel itself.
// No import of this package's other modules: `pnpm bench` loads this file with Node alone.
import { execFileSync } from "node:child_process"
import { mkdir, mkdtemp, open, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"

export interface SmallDisk {
  /** Where it is mounted. */
  readonly path: string
  /** Writes a file until the disk answers ENOSPC. */
  readonly fill: () => Promise<void>
  /** Removes what `fill` wrote. */
  readonly free: () => Promise<void>
  /** Unmounts it and removes the mount point. */
  readonly remove: () => Promise<void>
}

/**
 * A tmpfs of `bytes` on a fresh directory, or why there cannot be one here (not root, or the
 * sandbox refuses mounts): a test skips with that reason.
 */
export const smallDisk = async (bytes: number): Promise<SmallDisk | { readonly unavailable: string }> => {
  if (process.getuid?.() !== 0) return { unavailable: "mounting a tmpfs needs root (CI runs as root)" }
  const dir = { path: await mkdtemp(join(tmpdir(), "mailroom-disk-")) }
  const removeDir = () => rm(dir.path, { recursive: true, force: true })
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${bytes}`, "tmpfs", dir.path], { stdio: "pipe" })
  } catch (error) {
    await removeDir()
    const said = String((error as { stderr?: unknown }).stderr ?? error).trim()
    return { unavailable: `this machine refuses to mount a tmpfs: ${said}` }
  }
  const filler = join(dir.path, "filler")
  return {
    path: dir.path,
    fill: async () => {
      await mkdir(dir.path, { recursive: true })
      const handle = await open(filler, "a")
      const chunk = new Uint8Array(64 * 1024)
      try {
        // Smaller and smaller writes take the last pages too.
        for (let size = chunk.byteLength; size >= 1; ) {
          try {
            await handle.write(chunk, 0, size)
          } catch (error) {
            if ((error as NodeJS.ErrnoException).code !== "ENOSPC") throw error
            size = Math.floor(size / 2)
          }
        }
      } finally {
        await handle.close()
      }
    },
    free: () => rm(filler, { force: true }),
    remove: async () => {
      execFileSync("umount", ["--lazy", dir.path], { stdio: "pipe" })
      await removeDir()
    }
  }
}
