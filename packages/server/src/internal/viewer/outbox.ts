// The outbox directory as the viewer reads it: the `.eml` files the outbox provider writes (with their
// `.json` sidecars), parsed once per file and watched so the list can change live.
import { type FSWatcher, watch } from "node:fs"
import { mkdir, readdir, readFile, rm, stat } from "node:fs/promises"
import * as path from "node:path"
import type { AddressObject, ParsedMail } from "mailparser"
import { bodyParts } from "./parts.js"

export interface Summary {
  readonly id: string
  readonly organization: string
  readonly from: string
  readonly to: string
  readonly subject: string
  /** The Date header as ISO 8601, else the file's time. */
  readonly date: string
  readonly attachments: number
  /** What search looks in, lower case: recipients (blind copies too), subject, organisation. */
  readonly haystack: string
  readonly mtimeMs: number
}

export interface Message {
  readonly summary: Summary
  readonly raw: Buffer
  readonly parsed: ParsedMail
  /** From the sidecar: the Bcc header is never written. */
  readonly bcc: ReadonlyArray<string>
  /** The body parts the message has, whatever mailparser derived. */
  readonly parts: { readonly text: boolean; readonly html: boolean }
}

/** Message ids are the outbox's UUIDs; anything else (a path, a dot file) is never a message. */
const validId = (id: string) => /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/.test(id) && !id.includes("..")

export const addresses = (value: AddressObject | ReadonlyArray<AddressObject> | undefined): string =>
  (value === undefined ? [] : Array.isArray(value) ? value : [value as AddressObject]).map((a) => a.text).join(", ")

const headerText = (parsed: ParsedMail, name: string) => {
  const value = parsed.headers.get(name)
  return typeof value === "string" ? value : ""
}

const readSidecar = async (file: string): Promise<ReadonlyArray<string>> => {
  try {
    const sidecar = JSON.parse(await readFile(file, "utf8")) as { bcc?: unknown }
    return Array.isArray(sidecar.bcc) ? sidecar.bcc.filter((b): b is string => typeof b === "string") : []
  } catch {
    return []
  }
}

export const make = (dir: string) => {
  const cache = new Map<string, { readonly key: string; readonly summary: Summary }>()
  const file = (id: string, ext: string) => path.join(dir, `${id}${ext}`)

  const summarize = (id: string, parsed: ParsedMail, bcc: ReadonlyArray<string>, mtimeMs: number): Summary => {
    const organization = headerText(parsed, "x-mailroom-organization")
    const to = addresses(parsed.to)
    const subject = parsed.subject ?? ""
    return {
      id,
      organization,
      from: addresses(parsed.from),
      to,
      subject,
      date: (parsed.date ?? new Date(mtimeMs)).toISOString(),
      attachments: parsed.attachments.filter((a) => a.related !== true).length,
      haystack: [to, addresses(parsed.cc), ...bcc, subject, organization].join("\n").toLowerCase(),
      mtimeMs
    }
  }

  const read = async (id: string): Promise<Message | undefined> => {
    if (!validId(id)) return undefined
    let raw: Buffer
    let mtimeMs: number
    try {
      raw = await readFile(file(id, ".eml"))
      mtimeMs = (await stat(file(id, ".eml"))).mtimeMs
    } catch {
      return undefined
    }
    let parsed: ParsedMail
    try {
      // Imported on first use: a server whose viewer is never opened does not load a MIME parser.
      const { simpleParser } = await import("mailparser")
      parsed = await simpleParser(raw)
    } catch {
      // Not a message mailparser can read: left out, as a file the outbox did not write.
      return undefined
    }
    const bcc = await readSidecar(file(id, ".json"))
    return { summary: summarize(id, parsed, bcc, mtimeMs), raw, parsed, bcc, parts: bodyParts(raw) }
  }

  const summary = async (id: string): Promise<Summary | undefined> => {
    let info: { mtimeMs: number; size: number }
    try {
      info = await stat(file(id, ".eml"))
    } catch {
      return undefined
    }
    const key = `${info.mtimeMs}:${info.size}`
    const cached = cache.get(id)
    if (cached?.key === key) return cached.summary
    const message = await read(id)
    if (message === undefined) return undefined
    cache.set(id, { key, summary: message.summary })
    return message.summary
  }

  const ids = async (): Promise<ReadonlyArray<string>> => {
    try {
      return (await readdir(dir))
        .filter((name) => name.endsWith(".eml"))
        .map((name) => name.slice(0, -4))
        .filter(validId)
    } catch {
      return []
    }
  }

  /** Newest first; `query` keeps the messages whose recipients, subject or organisation contain it. */
  const list = async (query = ""): Promise<ReadonlyArray<Summary>> => {
    const names = await ids()
    const present = new Set(names)
    for (const id of cache.keys()) if (!present.has(id)) cache.delete(id)
    const summaries: Array<Summary> = []
    // A few at a time: a large outbox must not open every file at once.
    for (let i = 0; i < names.length; i += 8) {
      const batch = await Promise.all(names.slice(i, i + 8).map(summary))
      for (const s of batch) if (s !== undefined) summaries.push(s)
    }
    const needle = query.trim().toLowerCase()
    return summaries
      .filter((s) => needle === "" || s.haystack.includes(needle))
      .sort((a, b) => b.mtimeMs - a.mtimeMs || (a.id < b.id ? 1 : -1))
  }

  const remove = async (id: string): Promise<boolean> => {
    if (!validId(id) || !(await ids()).includes(id)) return false
    await rm(file(id, ".eml"), { force: true })
    await rm(file(id, ".json"), { force: true })
    cache.delete(id)
    return true
  }

  const clear = async (): Promise<number> => {
    const names = await ids()
    for (const id of names) await remove(id)
    return names.length
  }

  /**
   * Calls `onChange` when messages appear or go. fs.watch is immediate where the platform supports it;
   * the poll covers where it does not (network and container file systems) and a directory made later.
   */
  const watchChanges = (onChange: () => void, pollMs = 1000): (() => void) => {
    let watcher: FSWatcher | undefined
    let last = ""
    let timer: NodeJS.Timeout | undefined
    const check = async () => {
      const now = [...(await ids())].sort().join("\n")
      if (now !== last) {
        last = now
        onChange()
      }
    }
    const startWatcher = async () => {
      try {
        await mkdir(dir, { recursive: true })
        watcher = watch(dir, () => {
          // Several events per written file (temporary file, rename): one check after they settle.
          clearTimeout(timer)
          timer = setTimeout(() => void check(), 25)
        })
        watcher.on("error", () => {
          watcher?.close()
          watcher = undefined
        })
      } catch {
        watcher = undefined
      }
    }
    void ids().then((names) => {
      last = [...names].sort().join("\n")
    })
    void startWatcher()
    const poll = setInterval(() => {
      if (watcher === undefined) void startWatcher()
      void check()
    }, pollMs)
    poll.unref()
    return () => {
      clearInterval(poll)
      clearTimeout(timer)
      watcher?.close()
    }
  }

  return { list, read, remove, clear, watch: watchChanges }
}

export type Outbox = ReturnType<typeof make>
