// Temporary directories for tests, removed when the test (or its Effect scope) is done.
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"

export interface TempDir {
  readonly path: string
  /** Removes the directory and everything in it. */
  readonly remove: () => Promise<void>
}

/** A new empty directory under the system's temporary directory, named `mailroom-{prefix}-…`. */
export const tempDir = async (prefix: string): Promise<TempDir> => {
  const path = await mkdtemp(join(tmpdir(), `mailroom-${prefix}-`))
  return { path, remove: () => rm(path, { recursive: true, force: true }) }
}

/** A temporary directory for the length of a scope. */
export const scopedTempDir = (prefix: string): Effect.Effect<string, never, Scope.Scope> =>
  Effect.map(
    Effect.acquireRelease(
      Effect.promise(() => tempDir(prefix)),
      (dir) => Effect.promise(() => dir.remove())
    ),
    (dir) => dir.path
  )
