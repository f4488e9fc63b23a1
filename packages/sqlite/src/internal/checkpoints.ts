// Checkpoints of a WAL file in a worker thread: copying the log into the database file and its two
// fsyncs, which SQLite's automatic checkpoint runs on the committing thread (here the event loop).
import { Worker } from "node:worker_threads"

/** What a checkpoint did: frames in the log, and how many of them the database file now holds. */
export interface CheckpointResult {
  readonly log: number
  readonly checkpointed: number
}

export interface Checkpoints {
  /** Counts a commit; every `every` commits, asks for a checkpoint unless one is running. */
  readonly committed: () => void
  /** A checkpoint, answered once it is done. */
  readonly now: () => Promise<CheckpointResult>
  /** Stops the worker, its connection closed first. */
  readonly close: () => Promise<void>
}

// The worker's own connection: PASSIVE never waits for the writer, nor makes it wait.
const source = `
const { parentPort, workerData } = require("node:worker_threads")
const { DatabaseSync } = require("node:sqlite")
const db = new DatabaseSync(workerData.filename)
const checkpoint = db.prepare("PRAGMA wal_checkpoint(PASSIVE)")
parentPort.on("message", (message) => {
  if (message === "close") {
    db.close()
    parentPort.close()
    return
  }
  try {
    const row = checkpoint.get()
    parentPort.postMessage({ log: row.log, checkpointed: row.checkpointed })
  } catch (error) {
    parentPort.postMessage({ error: String(error && error.message) })
  }
})
`

type Answer = CheckpointResult | { readonly error: string }

/**
 * Checkpoints of `filename` in a worker started with the first one. A worker that fails to start or
 * dies is not replaced: SQLite's own checkpoint (at `wal_autocheckpoint` pages) still bounds the log.
 */
export const make = (filename: string, every: number): Checkpoints => {
  let worker: Worker | undefined
  let failed = false
  let commits = 0
  let running: Promise<CheckpointResult> | undefined
  const waiting: Array<(answer: Answer) => void> = []

  const start = () => {
    const started = new Worker(source, { eval: true, workerData: { filename } })
    started.unref()
    started.on("message", (answer: Answer) => waiting.shift()?.(answer))
    const stop = (why: string) => {
      failed = true
      worker = undefined
      for (const resume of waiting.splice(0)) resume({ error: why })
    }
    started.on("error", (error) => stop(String(error.message)))
    started.on("exit", () => stop("the checkpoint worker stopped"))
    return started
  }

  const now = (): Promise<CheckpointResult> => {
    if (running !== undefined) return running.then(now)
    if (failed) return Promise.reject(new Error("the checkpoint worker stopped"))
    worker ??= start()
    const current = worker
    running = new Promise<CheckpointResult>((resolve, reject) => {
      waiting.push((answer) => {
        running = undefined
        if ("error" in answer) reject(new Error(answer.error))
        else resolve(answer)
      })
      current.postMessage("check")
    })
    return running
  }

  return {
    committed: () => {
      if (++commits < every || running !== undefined || failed) return
      commits = 0
      now().catch(() => undefined)
    },
    now,
    close: async () => {
      const current = worker
      if (current === undefined) return
      failed = true
      worker = undefined
      const exited = new Promise<void>((resolve) => current.once("exit", () => resolve()))
      // Held open until the worker has closed its connection: the process may be about to exit.
      current.ref()
      current.postMessage("close")
      await exited
    }
  }
}
