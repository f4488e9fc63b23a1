// The outbox index's SQL: its schema (messages, their recipients, a trigram search index), the rows it
// answers, and the one statement each list is, chosen so that every filter starts from an index.
import { mkdir } from "node:fs/promises"
import * as path from "node:path"
import type { DatabaseSync } from "node:sqlite"
import type { Address, Indexed, Link } from "./message.js"

/** A message as the index holds it: what `Indexed` keeps but the search text and file time, with its order and read mark. */
export interface Row extends Omit<Indexed, "body" | "mtimeMs"> {
  readonly seq: number
  readonly read: boolean
}

export interface Position {
  readonly receivedAt: string
  readonly id: string
}

export interface Query {
  /** 1 to 100. */
  readonly limit: number
  readonly after?: Position
  /** An address of to, cc or bcc, compared without case. */
  readonly to?: string
  /** The sender's address, compared without case. */
  readonly from?: string
  /** Contained in the subject, without case. */
  readonly subject?: string
  /** Contained in the sender, a recipient, the subject or the body, without case (the viewer's search). */
  readonly text?: string
  /** Received at or after, ISO 8601. */
  readonly since?: string
}

const schemaVersion = 3
const schema = `
CREATE TABLE messages (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  organization TEXT,
  from_address TEXT,
  from_json TEXT NOT NULL,
  to_json TEXT NOT NULL,
  cc_json TEXT NOT NULL,
  bcc_json TEXT NOT NULL,
  subject TEXT NOT NULL,
  received_at TEXT NOT NULL,
  date TEXT,
  size INTEGER NOT NULL,
  attachments INTEGER NOT NULL,
  links_json TEXT NOT NULL,
  mtime_ms REAL NOT NULL,
  read INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX messages_newest ON messages (received_at, id);
CREATE INDEX messages_from ON messages (from_address);
CREATE TABLE recipients (address TEXT NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY (address, seq)) WITHOUT ROWID;
CREATE INDEX recipients_seq ON recipients (seq);
CREATE VIRTUAL TABLE search USING fts5 (subject, addresses, body, tokenize = 'trigram');
`

const columns =
  "m.seq, m.id, m.organization, m.from_json, m.to_json, m.cc_json, m.bcc_json, m.subject, m.received_at, m.date, m.size, m.attachments, m.links_json, m.read"

const rowOf = (r: Record<string, unknown>): Row => ({
  seq: Number(r.seq),
  id: String(r.id),
  organization: r.organization === null ? null : String(r.organization),
  from: JSON.parse(String(r.from_json)) as Address | null,
  to: JSON.parse(String(r.to_json)) as ReadonlyArray<Address>,
  cc: JSON.parse(String(r.cc_json)) as ReadonlyArray<Address>,
  bcc: JSON.parse(String(r.bcc_json)) as ReadonlyArray<string>,
  subject: String(r.subject),
  receivedAt: String(r.received_at),
  date: r.date === null ? null : String(r.date),
  size: Number(r.size),
  attachments: Number(r.attachments),
  links: JSON.parse(String(r.links_json)) as ReadonlyArray<Link>,
  read: Number(r.read) === 1
})

/** An FTS5 phrase: a substring match of 3 characters or more with the trigram tokenizer. */
const phrase = (text: string) => `"${text.replaceAll('"', '""')}"`
const searchable = (text: string) => [...text].length >= 3

/** Where the list starts: the table that narrows it most drives the query, so a filter never scans the rest. */
const plan = (
  query: Query
): { readonly from: string; readonly where: Array<string>; readonly params: Array<string | number> } => {
  const where: Array<string> = []
  const params: Array<string | number> = []
  let from = "messages m"
  if (query.to !== undefined) {
    from = "recipients r CROSS JOIN messages m ON m.seq = r.seq"
    where.push("r.address = ?")
    params.push(query.to.toLowerCase())
  }
  const matches: Array<string> = []
  if (query.subject !== undefined && searchable(query.subject)) matches.push(`subject : ${phrase(query.subject)}`)
  if (query.text !== undefined && searchable(query.text)) matches.push(phrase(query.text))
  if (matches.length > 0) {
    if (query.to === undefined) {
      from = "search s CROSS JOIN messages m ON m.seq = s.rowid"
      where.push("search MATCH ?")
    } else where.push("m.seq IN (SELECT rowid FROM search WHERE search MATCH ?)")
    params.push(matches.join(" AND "))
  }
  // Fewer than three characters: no trigram to look up, so a plain comparison of the small columns.
  if (query.subject !== undefined && !searchable(query.subject)) {
    where.push("instr(lower(m.subject), ?) > 0")
    params.push(query.subject.toLowerCase())
  }
  if (query.text !== undefined && !searchable(query.text)) {
    where.push("instr(lower(m.subject || ' ' || m.from_json || ' ' || m.to_json || ' ' || m.cc_json), ?) > 0")
    params.push(query.text.toLowerCase())
  }
  if (query.from !== undefined) {
    where.push("m.from_address = ?")
    params.push(query.from.toLowerCase())
  }
  if (query.since !== undefined) {
    where.push("m.received_at >= ?")
    params.push(query.since)
  }
  if (query.after !== undefined) {
    // A row value, which SQLite looks up in the newest-first index (an OR of the two would scan it).
    where.push("(m.received_at, m.id) < (?, ?)")
    params.push(query.after.receivedAt, query.after.id)
  }
  return { from, where, params }
}

/** The SQL and parameters of a list: `EXPLAIN QUERY PLAN` of it is what the tests pin. */
export const listStatement = (query: Query): { readonly sql: string; readonly params: Array<string | number> } => {
  const { from, where, params } = plan(query)
  const sql = `SELECT ${columns} FROM ${from}${where.length === 0 ? "" : ` WHERE ${where.join(" AND ")}`} ORDER BY m.received_at DESC, m.id DESC LIMIT ?`
  return { sql, params: [...params, query.limit] }
}

const indexFile = ".mailroom-index.sqlite"

/** The index of `dir`, made or brought to this layout; in memory when the directory cannot hold it. */
export const open = async (dir: string): Promise<DatabaseSync> => {
  const { DatabaseSync } = await import("node:sqlite")
  await mkdir(dir, { recursive: true })
  let database: DatabaseSync
  try {
    database = new DatabaseSync(path.join(dir, indexFile))
    database.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = OFF; PRAGMA busy_timeout = 5000;")
  } catch {
    // A directory that cannot hold the file (read-only): the index lives in memory, rebuilt at each start.
    database = new DatabaseSync(":memory:")
  }
  const version = Number((database.prepare("PRAGMA user_version").get() as { user_version: number }).user_version)
  if (version !== schemaVersion) {
    // The index is a cache of the files: another layout is dropped and made again.
    database.exec("DROP TABLE IF EXISTS messages; DROP TABLE IF EXISTS recipients; DROP TABLE IF EXISTS search;")
    database.exec(`${schema} PRAGMA user_version = ${schemaVersion};`)
  }
  return database
}

/** Deletes a message's row, its recipients and its search entry; false when there is none. */
export const remove = (database: DatabaseSync, id: string): boolean => {
  const row = database.prepare("SELECT seq FROM messages WHERE id = ?").get(id) as { seq: number } | undefined
  if (row === undefined) return false
  database.prepare("DELETE FROM search WHERE rowid = ?").run(row.seq)
  database.prepare("DELETE FROM recipients WHERE seq = ?").run(row.seq)
  database.prepare("DELETE FROM messages WHERE seq = ?").run(row.seq)
  return true
}

/** Writes a message's row (replacing one of the same id), its recipients and its search entry. */
export const insert = (database: DatabaseSync, message: Indexed): Row => {
  remove(database, message.id)
  const result = database
    .prepare(
      "INSERT INTO messages (id, organization, from_address, from_json, to_json, cc_json, bcc_json, subject, received_at, date, size, attachments, links_json, mtime_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    )
    .run(
      message.id,
      message.organization,
      message.from?.address.toLowerCase() ?? null,
      JSON.stringify(message.from),
      JSON.stringify(message.to),
      JSON.stringify(message.cc),
      JSON.stringify(message.bcc),
      message.subject,
      message.receivedAt,
      message.date,
      message.size,
      message.attachments,
      JSON.stringify(message.links),
      message.mtimeMs
    )
  const seq = Number(result.lastInsertRowid)
  const recipients = new Set([...message.to, ...message.cc].map((a) => a.address).concat(message.bcc))
  const addRecipient = database.prepare("INSERT OR IGNORE INTO recipients (address, seq) VALUES (?, ?)")
  for (const address of recipients) addRecipient.run(address.toLowerCase(), seq)
  // What the viewer's search finds a message by, beside its subject and body: its people and organisation.
  const addresses = [message.from, ...message.to, ...message.cc]
    .flatMap((a) => (a === null ? [] : [a.name ?? "", a.address]))
    .concat(message.bcc, message.organization ?? "")
    .join(" ")
  database
    .prepare("INSERT INTO search (rowid, subject, addresses, body) VALUES (?, ?, ?, ?)")
    .run(seq, message.subject, addresses, message.body)
  return { ...message, seq, read: false }
}

/** A message's row by its id. */
export const find = (database: DatabaseSync, id: string): Row | undefined => {
  const row = database.prepare(`SELECT ${columns} FROM messages m WHERE m.id = ?`).get(id) as
    | Record<string, unknown>
    | undefined
  return row === undefined ? undefined : rowOf(row)
}

/** One page of a list, newest first. */
export const list = (database: DatabaseSync, query: Query): ReadonlyArray<Row> => {
  const { sql, params } = listStatement(query)
  return (database.prepare(sql).all(...params) as Array<Record<string, unknown>>).map(rowOf)
}
