// The outbox's index: a SQLite file beside the messages (`{dir}/.mailroom-index.sqlite`), so a list,
// a filter, a search or a wait costs the same whatever the outbox holds. It follows the directory only
// while someone looks (an open page or wait, or a request in the last few seconds), message by
// message; a new look starts by comparing the directory's names with it, and re-reads nothing else.
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
/** How long after the last request, with no page or wait open, the index stops following the directory. */
const idleMillis = 5000

export class OutboxIndex {
  private db: DatabaseSync | undefined
  private opening: Promise<DatabaseSync> | undefined
  private watcher: FSWatcher | undefined
  private readonly pending = new Set<string>()
  private working: Promise<void> | undefined
  private readonly listeners = new Set<(row: Database.Row) => void>()
  private readonly changeListeners = new Set<() => void>()
  // Following the directory: since when someone looked, how many hold it open, and the catch-up.
  private following: Promise<void> | undefined
  private holders = 0
  private lastUse = 0
  private idleTimer: NodeJS.Timeout | undefined
  private closed = false

  constructor(private readonly dir: string) {}

  /** The database, opened on first use, and caught up with the directory when nobody looked since. */
  async open(): Promise<DatabaseSync> {
    if (this.closed) throw new Error("the outbox index is closed: the server is shutting down")
    this.opening ??= Database.open(this.dir).then((database) => {
      this.db = database
      return database
    })
    const database = await this.opening
    this.lastUse = Date.now()
    this.scheduleIdle()
    this.following ??= this.follow(database)
    await this.following
    return database
  }

  /** Keeps the index following the directory (an open page, a wait) until the answered function is called. */
  hold(): () => void {
    this.holders++
    let held = true
    return () => {
      if (!held) return
      held = false
      this.holders--
      this.lastUse = Date.now()
      this.scheduleIdle()
    }
  }

  /** A message the outbox just wrote: indexed soon, and before any request that comes after this call. */
  readonly noteWritten = (id: string): void => {
    if (this.closed || this.following === undefined || this.db === undefined || !isMessageId(id)) return
    this.pending.add(id)
    void this.drain(this.db)
  }

  /** Calls `listener` when a message is added, changed or removed, until the answered function is called. */
  onChange(listener: () => void): () => void {
    this.changeListeners.add(listener)
    return () => this.changeListeners.delete(listener)
  }

  async list(query: Database.Query): Promise<ReadonlyArray<Database.Row>> {
    return Database.list(await this.ready(), query)
  }

  async find(id: string): Promise<Database.Row | undefined> {
    return Database.find(await this.ready(), id)
  }

  async markRead(id: string, value: boolean): Promise<boolean> {
    const database = await this.ready()
    const changed = Number(database.prepare("UPDATE messages SET read = ? WHERE id = ?").run(value ? 1 : 0, id).changes)
    if (changed > 0) this.changed()
    return changed > 0
  }

  /** Deletes the message's files and its row; false when the index has no such message. */
  async remove(id: string): Promise<boolean> {
    const database = await this.ready()
    if (!isMessageId(id) || !Database.remove(database, id)) return false
    await this.removeFiles(id)
    this.changed()
    return true
  }

  /** Deletes every message; answers how many. */
  async clear(): Promise<number> {
    const database = await this.ready()
    const ids = (database.prepare("SELECT id FROM messages").all() as Array<{ id: string }>).map((r) => r.id)
    database.exec("DELETE FROM search; DELETE FROM recipients; DELETE FROM messages;")
    for (const id of ids) await this.removeFiles(id)
    this.changed()
    return ids.length
  }

  /** Calls `listener` with each message indexed from now on, until the returned function is called. */
  onAdded(listener: (row: Database.Row) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  async close(): Promise<void> {
    this.closed = true
    clearTimeout(this.idleTimer)
    this.watcher?.close()
    this.watcher = undefined
    if (this.opening === undefined) return
    const database = await this.opening.catch(() => undefined)
    await this.following?.catch(() => undefined)
    while (this.working !== undefined) await this.working
    database?.close()
  }

  /** Everything noted so far is in the index. */
  private async ready(): Promise<DatabaseSync> {
    const database = await this.open()
    while (!this.closed && (this.working !== undefined || this.pending.size > 0)) await this.drain(database)
    return database
  }

  private changed() {
    for (const listener of this.changeListeners) listener()
  }

  /** Starts following the directory: its changes as they come, after one comparison of its names. */
  private async follow(database: DatabaseSync) {
    this.startWatching(database)
    await this.reconcile(database)
  }

  /** Stops following once nobody holds the index and no request came for a while. */
  private scheduleIdle() {
    clearTimeout(this.idleTimer)
    if (this.holders > 0 || this.closed) return
    this.idleTimer = setTimeout(
      () => {
        const busy = this.working !== undefined || this.pending.size > 0
        if (this.holders > 0 || busy || Date.now() - this.lastUse < idleMillis) return this.scheduleIdle()
        // Until the next look: a send is not indexed, and that look compares the directory's names again.
        this.watcher?.close()
        this.watcher = undefined
        this.following = undefined
      },
      Math.max(10, idleMillis - (Date.now() - this.lastUse))
    )
    this.idleTimer.unref()
  }

  private async removeFiles(id: string) {
    await rm(path.join(this.dir, `${id}.eml`), { force: true })
    await rm(path.join(this.dir, `${id}.json`), { force: true })
  }

  /** Brings one message's row in line with its file: added, replaced, or removed. */
  private async ingest(database: DatabaseSync, id: string) {
    const info = await stat(path.join(this.dir, `${id}.eml`)).catch(() => undefined)
    if (info === undefined) {
      if (Database.remove(database, id)) this.changed()
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
    this.changed()
  }

  private drain(database: DatabaseSync): Promise<void> {
    this.working ??= (async () => {
      while (this.pending.size > 0 && !this.closed) {
        const batch = [...this.pending].slice(0, batchSize)
        for (const id of batch) this.pending.delete(id)
        // A file that cannot be read now (being replaced, or the database busy) is read at the next change.
        await Promise.all(batch.map((id) => this.ingest(database, id).catch(() => undefined)))
      }
    })().finally(() => {
      this.working = undefined
      if (this.pending.size > 0 && !this.closed) void this.drain(database)
    })
    return this.working
  }

  /** Every `.eml` of the directory against the index: once, when the index is opened. */
  private async reconcile(database: DatabaseSync) {
    const names = await readdir(this.dir).catch(() => [] as Array<string>)
    if (this.closed) return
    const present = new Set(
      names
        .filter((n) => n.endsWith(".eml"))
        .map((n) => n.slice(0, -4))
        .filter(isMessageId)
    )
    const indexed = database.prepare("SELECT id FROM messages").all() as Array<{ id: string }>
    let removed = false
    for (const { id } of indexed) if (!present.has(id)) removed = Database.remove(database, id) || removed
    if (removed) this.changed()
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
