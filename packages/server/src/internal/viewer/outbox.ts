// The outbox directory as the viewer reads it: the `.eml` files the outbox provider writes, parsed once
// per file, and watched while a viewer is open so the list changes live from what each event names,
// without reading the directory again.
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
  /** From the outbox's X-Mailroom-Bcc header (a `.json` sidecar for files of earlier versions): never a Bcc header. */
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

/** The blind copies: the outbox's header, else the `.json` sidecar earlier versions wrote beside the file. */
const blindCopies = async (parsed: ParsedMail, sidecarFile: string): Promise<ReadonlyArray<string>> => {
  const listed = headerText(parsed, "x-mailroom-bcc")
  if (listed !== "") return listed.split(",").flatMap((address) => (address.trim() === "" ? [] : [address.trim()]))
  try {
    const sidecar = JSON.parse(await readFile(sidecarFile, "utf8")) as { bcc?: unknown }
    return Array.isArray(sidecar.bcc) ? sidecar.bcc.filter((b): b is string => typeof b === "string") : []
  } catch {
    return []
  }
}

const newestFirst = (a: Summary, b: Summary) => b.mtimeMs - a.mtimeMs || (a.id < b.id ? 1 : -1)

export const make = (dir: string) => {
  // Each message's summary, parsed once per version of its file (its time and size).
  const cache = new Map<string, { readonly key: string; readonly summary: Summary }>()
  // While a viewer watches: true once the cache holds every message, kept so by the watcher's events,
  // so the list is read from memory instead of the directory.
  let complete = false
  let watching = false
  // Set by an event during a scan, whose result may then miss it: the next list scans again.
  let changedDuringScan = false
  // The cache's summaries newest first, until a change.
  let sorted: ReadonlyArray<Summary> | undefined
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
    const bcc = await blindCopies(parsed, file(id, ".json"))
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

  /** Every message's summary, from the directory: the cache is brought up to date with it. */
  const scan = async (): Promise<void> => {
    const names = await ids()
    const present = new Set(names)
    for (const id of cache.keys()) if (!present.has(id)) cache.delete(id)
    // A few at a time: a large outbox must not open every file at once.
    for (let i = 0; i < names.length; i += 8) await Promise.all(names.slice(i, i + 8).map(summary))
    sorted = undefined
  }

  /** Newest first; `query` keeps the messages whose recipients, subject or organisation contain it. */
  const list = async (query = ""): Promise<ReadonlyArray<Summary>> => {
    if (!complete) {
      changedDuringScan = false
      await scan()
      complete = watching && !changedDuringScan
    }
    sorted ??= [...cache.values()].map((entry) => entry.summary).sort(newestFirst)
    const needle = query.trim().toLowerCase()
    return needle === "" ? sorted : sorted.filter((s) => s.haystack.includes(needle))
  }

  /** One message's file changed (written, replaced or removed): its summary follows. */
  const refresh = async (id: string): Promise<void> => {
    const had = cache.get(id)?.summary
    const now = await summary(id)
    if (now === undefined) cache.delete(id)
    if (now === had) return
    // A new message is nearly always the newest: it goes first without sorting again.
    const first = sorted?.[0]
    sorted =
      sorted !== undefined &&
      had === undefined &&
      now !== undefined &&
      (first === undefined || newestFirst(now, first) <= 0)
        ? [now, ...sorted]
        : undefined
  }

  const remove = async (id: string): Promise<boolean> => {
    if (!validId(id)) return false
    try {
      await stat(file(id, ".eml"))
    } catch {
      return false
    }
    await rm(file(id, ".eml"), { force: true })
    // The sidecar of a file an earlier version wrote.
    await rm(file(id, ".json"), { force: true })
    cache.delete(id)
    sorted = undefined
    return true
  }

  const clear = async (): Promise<number> => {
    const names = await ids()
    for (const id of names) await remove(id)
    return names.length
  }

  /**
   * Calls `onChange` when messages appear, change or go, until the answered function is called: the
   * viewer watches only while one of its pages is open. Each event updates the one message it names.
   * fs.watch is immediate where the platform supports it; where it is not (some network and
   * container file systems), or before the directory exists, a poll of the directory stands in.
   */
  const watchChanges = (onChange: () => void, pollMs = 1000): (() => void) => {
    let watcher: FSWatcher | undefined
    let poll: NodeJS.Timeout | undefined
    let stopped = false
    const pending = new Map<string, NodeJS.Timeout>()
    watching = true
    complete = false
    const changed = (id: string | undefined) => {
      changedDuringScan = true
      // Several events per written file (a temporary file, a rename): one look after they settle.
      const key = id ?? ""
      clearTimeout(pending.get(key))
      pending.set(
        key,
        setTimeout(() => {
          pending.delete(key)
          if (stopped) return
          // An event without a name (or a poll) says only that something changed: read it all again.
          if (id === undefined) complete = false
          void (id === undefined ? Promise.resolve() : refresh(id)).then(onChange, onChange)
        }, 25)
      )
    }
    let last = ""
    const check = async () => {
      const now = [...(await ids())].sort().join("\n")
      if (now !== last) {
        last = now
        changed(undefined)
      }
    }
    const startWatcher = async () => {
      try {
        await mkdir(dir, { recursive: true })
        if (stopped) return
        watcher = watch(dir, (_event, filename) => {
          const name = filename === null ? undefined : String(filename)
          if (name === undefined) return changed(undefined)
          if (!name.endsWith(".eml")) return
          const id = name.slice(0, -4)
          if (validId(id)) changed(id)
        })
        watcher.on("error", () => {
          watcher?.close()
          watcher = undefined
          startPoll()
        })
        // What was written before the watcher started: the page reads the list again.
        changed(undefined)
      } catch {
        watcher = undefined
        startPoll()
      }
    }
    const startPoll = () => {
      if (stopped || poll !== undefined) return
      poll = setInterval(() => {
        if (watcher === undefined) void check()
      }, pollMs)
      poll.unref()
    }
    void startWatcher()
    return () => {
      stopped = true
      watching = false
      complete = false
      clearInterval(poll)
      for (const timer of pending.values()) clearTimeout(timer)
      watcher?.close()
    }
  }

  return { list, read, remove, clear, watch: watchChanges }
}

export type Outbox = ReturnType<typeof make>
