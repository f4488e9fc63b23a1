// The outbox's index: a SQLite file beside the messages (`{dir}/.mailroom-index.sqlite`), so a list,
// a filter, a search or a wait costs the same whatever the outbox holds. It is made when the inbox or
// the viewer is first used, kept up to date message by message, and re-reads nothing after a restart.
import { type FSWatcher, watch } from "node:fs"
import { readdir, rm, stat } from "node:fs/promises"
import * as path from "node:path"
import type { DatabaseSync } from "node:sqlite"
import * as Database from "./database.js"
import { isMessageId, read } from "./message.js"

export type { Position, Query, Row } from "./database.js"
export { listStatement } from "./database.js"

/** Ingests run this many files at a time. */
const batchSize = 8

export class OutboxIndex {
  private db: DatabaseSync | undefined
  private opening: Promise<DatabaseSync> | undefined
  private watcher: FSWatcher | undefined
  private readonly pending = new Set<string>()
  private working: Promise<void> | undefined
  private readonly listeners = new Set<(row: Database.Row) => void>()

  constructor(private readonly dir: string) {}

  /** The database, opened and caught up with the directory on first use. */
  open(): Promise<DatabaseSync> {
    this.opening ??= (async () => {
      const database = await Database.open(this.dir)
      this.startWatching(database)
      await this.reconcile(database)
      this.db = database
      return database
    })()
    return this.opening
  }

  /** A message the outbox just wrote: indexed soon, and before any request that comes after this call. */
  readonly noteWritten = (id: string): void => {
    if (this.opening === undefined || !isMessageId(id)) return
    this.pending.add(id)
    if (this.db !== undefined) void this.drain(this.db)
  }

  async list(query: Database.Query): Promise<ReadonlyArray<Database.Row>> {
    return Database.list(await this.ready(), query)
  }

  async find(id: string): Promise<Database.Row | undefined> {
    return Database.find(await this.ready(), id)
  }

  async markRead(id: string, value: boolean): Promise<boolean> {
    const database = await this.ready()
    return Number(database.prepare("UPDATE messages SET read = ? WHERE id = ?").run(value ? 1 : 0, id).changes) > 0
  }

  /** Deletes the message's files and its row; false when the index has no such message. */
  async remove(id: string): Promise<boolean> {
    const database = await this.ready()
    if (!isMessageId(id) || !Database.remove(database, id)) return false
    await this.removeFiles(id)
    return true
  }

  /** Deletes every message; answers how many. */
  async clear(): Promise<number> {
    const database = await this.ready()
    const ids = (database.prepare("SELECT id FROM messages").all() as Array<{ id: string }>).map((r) => r.id)
    database.exec("DELETE FROM search; DELETE FROM recipients; DELETE FROM messages;")
    for (const id of ids) await this.removeFiles(id)
    return ids.length
  }

  /** Calls `listener` with each message indexed from now on, until the returned function is called. */
  onAdded(listener: (row: Database.Row) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  async close(): Promise<void> {
    this.watcher?.close()
    this.watcher = undefined
    if (this.opening === undefined) return
    const database = await this.opening.catch(() => undefined)
    while (this.working !== undefined) await this.working
    database?.close()
  }

  /** Everything noted so far is in the index. */
  private async ready(): Promise<DatabaseSync> {
    const database = await this.open()
    while (this.working !== undefined || this.pending.size > 0) await this.drain(database)
    return database
  }

  private async removeFiles(id: string) {
    await rm(path.join(this.dir, `${id}.eml`), { force: true })
    await rm(path.join(this.dir, `${id}.json`), { force: true })
  }

  /** Brings one message's row in line with its file: added, replaced, or removed. */
  private async ingest(database: DatabaseSync, id: string) {
    const info = await stat(path.join(this.dir, `${id}.eml`)).catch(() => undefined)
    if (info === undefined) {
      Database.remove(database, id)
      return
    }
    const known = database.prepare("SELECT mtime_ms, size FROM messages WHERE id = ?").get(id) as
      | { mtime_ms: number; size: number }
      | undefined
    if (known !== undefined && known.mtime_ms === info.mtimeMs && known.size === info.size) return
    const message = await read(this.dir, id)
    if (message === undefined) return
    const row = Database.insert(database, message.indexed)
    if (known === undefined) for (const listener of this.listeners) listener(row)
  }

  private drain(database: DatabaseSync): Promise<void> {
    this.working ??= (async () => {
      while (this.pending.size > 0) {
        const batch = [...this.pending].slice(0, batchSize)
        for (const id of batch) this.pending.delete(id)
        await Promise.all(batch.map((id) => this.ingest(database, id)))
      }
    })().finally(() => {
      this.working = undefined
      if (this.pending.size > 0) void this.drain(database)
    })
    return this.working
  }

  /** Every `.eml` of the directory against the index: once, when the index is opened. */
  private async reconcile(database: DatabaseSync) {
    const names = await readdir(this.dir).catch(() => [] as Array<string>)
    const present = new Set(
      names
        .filter((n) => n.endsWith(".eml"))
        .map((n) => n.slice(0, -4))
        .filter(isMessageId)
    )
    const indexed = database.prepare("SELECT id FROM messages").all() as Array<{ id: string }>
    for (const { id } of indexed) if (!present.has(id)) Database.remove(database, id)
    const known = new Set(indexed.map((r) => r.id))
    for (const id of present) if (!known.has(id)) this.pending.add(id)
    await this.drain(database)
  }

  /** Changes made by anything else (a hand-deleted file, another process): one file at a time, as they come. */
  private startWatching(database: DatabaseSync) {
    try {
      this.watcher = watch(this.dir, (_event, name) => {
        const file = typeof name === "string" ? name : undefined
        if (file === undefined || !file.endsWith(".eml")) return
        const id = file.slice(0, -4)
        if (!isMessageId(id)) return
        this.pending.add(id)
        void this.drain(database)
      })
      this.watcher.on("error", () => {
        this.watcher?.close()
        this.watcher = undefined
      })
    } catch {
      this.watcher = undefined
    }
  }
}

/** The index of the outbox at `dir`; nothing is opened until it is first used. */
export const make = (dir: string): OutboxIndex => new OutboxIndex(dir)

export type Index = OutboxIndex
