// The send rate against the size of the outbox (issue 29): POST /emails to two built servers on the
// embedded defaults (outbox provider, viewer on, nobody looking), one whose outbox already holds
// 100,000 messages and one whose outbox starts empty, 16 sends at a time, rounds interleaved; beside
// them, the file system alone doing the outbox's writes in two such directories; then each server's
// CPU use while idle. The outboxes live on a tmpfs when the bench may mount one (as root): some disks
// make every create in a directory of 100,000 files slower by themselves, which the file-system row
// shows wherever the bench runs.
import { type ChildProcess, spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { mkdir, open, rename, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { smallDisk } from "../packages/test-support/src/smallDisk.ts"
import { compare, ratioOf, ratioRows } from "./compare.ts"

const bin = new URL("../packages/server/dist/bin.js", import.meta.url).pathname
const messages = 100_000

/** A message as the outbox writes it, small: the viewer reads these; the sends never do. */
const eml = (id: string, n: number) =>
  [
    "From: Acme Billing <billing@acme.example>",
    "To: alice@example.com",
    `Subject: Receipt ${n}`,
    `Message-ID: <${id}@outbox.mailroom>`,
    "Date: Thu, 01 Jan 2026 00:00:00 +0000",
    "MIME-Version: 1.0",
    "Content-Type: text/plain; charset=utf-8",
    "X-Mailroom-Organization: org_acme",
    "",
    "Thank you.",
    ""
  ].join("\r\n")

/** Writes the files directly, many at once: 100,000 messages in seconds, not one send each. */
const fill = async (dir: string, count: number) => {
  await mkdir(dir, { recursive: true })
  const batch = 512
  for (let i = 0; i < count; i += batch) {
    await Promise.all(
      Array.from({ length: Math.min(batch, count - i) }, (_, j) => {
        const id = randomUUID()
        return writeFile(path.join(dir, `${id}.eml`), eml(id, i + j))
      })
    )
  }
}

const start = async (root: string, name: string) => {
  const dir = path.join(root, name)
  await mkdir(dir, { recursive: true })
  const config = path.join(dir, "mailroom.config.json")
  await writeFile(
    config,
    JSON.stringify({
      serviceDomain: "mailroom.test",
      organizations: [{ id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"], apiKeys: ["mr_bench"] }],
      storage: { kind: "local", dir: "storage", signingSecret: "bench-secret" },
      provider: { kind: "outbox", dir: "outbox" }
    })
  )
  const child = spawn(process.execPath, [bin], {
    env: { ...process.env, MAILROOM_CONFIG: config, PORT: "0" },
    stdio: ["ignore", "pipe", "inherit"]
  })
  const url = await new Promise<string>((resolve, reject) => {
    let out = ""
    child.stdout?.on("data", (data: Buffer) => {
      out += data.toString()
      const match = /listening on (http:\/\/\S+)/.exec(out)
      if (match?.[1] !== undefined) resolve(match[1])
    })
    child.once("exit", () => reject(new Error(`the ${name} server exited: ${out}`)))
  })
  // The server's own lines would flood the table: read and dropped.
  child.stdout?.resume()
  return { url, child }
}

/** What the outbox does per message, without mailroom: two files written, fsync'd and renamed into place. */
const writeTwo = (dir: string) =>
  Promise.all(
    ["json", "eml"].map(async (ext) => {
      const id = randomUUID()
      const temporary = path.join(dir, `.${id}.${ext}.tmp`)
      const handle = await open(temporary, "wx")
      try {
        await handle.writeFile(eml(id, 0))
        await handle.datasync()
      } finally {
        await handle.close()
      }
      await rename(temporary, path.join(dir, `${id}.${ext}`))
    })
  )

const body = JSON.stringify({
  from: "billing@acme.example",
  to: ["alice@example.com"],
  subject: "Your receipt",
  body: { text: "Thank you.", html: "<p>Thank you.</p>" }
})

const send = async (url: string) => {
  const response = await fetch(`${url}/emails`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": "mr_bench" },
    body
  })
  await response.arrayBuffer()
  if (response.status !== 201) throw new Error(`POST /emails answered ${response.status}`)
}

/** CPU seconds the process has used (Linux's /proc), or undefined elsewhere. */
const cpuSeconds = (pid: number | undefined): number | undefined => {
  if (pid === undefined || !existsSync(`/proc/${pid}/stat`)) return undefined
  // After the command's ") ", utime and stime are the 12th and 13th fields, in clock ticks (100 a second).
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? []
  return (Number(fields[11]) + Number(fields[12])) / 100
}

/** Each server's share of one CPU over `seconds` of no requests: what a large outbox costs at rest. */
const idleCpu = async (servers: ReadonlyArray<readonly [string, ChildProcess]>, seconds: number) => {
  const before = servers.map(([, child]) => cpuSeconds(child.pid))
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000))
  return servers.map(([name, child], i) => {
    const used = (cpuSeconds(child.pid) ?? Number.NaN) - (before[i] ?? Number.NaN)
    return { name: `idle CPU over ${seconds} s, ${name}`, "idle CPU": `${((used / seconds) * 100).toFixed(1)}%` }
  })
}

export const run = async (): Promise<ReadonlyArray<object>> => {
  const disk = await smallDisk(3 * 1024 * 1024 * 1024)
  const where = "unavailable" in disk ? `the temporary directory (no tmpfs: ${disk.unavailable})` : "a tmpfs"
  const root = mkdtempSync(path.join("unavailable" in disk ? tmpdir() : disk.path, "mailroom-bench-outbox-size-"))
  const children: Array<ChildProcess> = []
  try {
    await fill(path.join(root, "full", "outbox"), messages)
    await fill(path.join(root, "files-full"), messages)
    await mkdir(path.join(root, "files-empty"))
    const empty = await start(root, "empty")
    const full = await start(root, "full")
    children.push(empty.child, full.child)
    // 16 at once, as a busy client sends: one operation is 16 sends.
    const burst = (url: string) => Promise.all(Array.from({ length: 16 }, () => send(url)))
    const files = (dir: string) => Promise.all(Array.from({ length: 16 }, () => writeTwo(path.join(root, dir))))
    const contenders = [
      { name: "POST /emails, empty outbox", run: () => burst(empty.url) },
      { name: `POST /emails, ${messages.toLocaleString("en")} messages in the outbox`, run: () => burst(full.url) },
      { name: "file system alone: the outbox's writes, empty directory", run: () => files("files-empty") },
      { name: "file system alone: the outbox's writes, 100,000 files", run: () => files("files-full") }
    ]
    // Each round lasts over a second: long enough to include whatever the server does every second.
    const comparison = await compare(contenders, { rounds: 5, perRound: 150, warmup: 1 })
    const idle = await idleCpu(
      [
        ["empty outbox", empty.child],
        [`${messages.toLocaleString("en")} messages`, full.child]
      ],
      5
    )
    return [
      ...ratioRows(comparison, contenders.slice(0, 2), [undefined, 1.1]),
      // Timed beside the sends; their ratio to each other is the next row.
      ...ratioRows(comparison, contenders)
        .slice(2)
        .map((row) => ({ ...row, "ratio (min / median)": "" })),
      ratioOf(comparison, 3, 2, `the file system's own cost of 100,000 files (on ${where})`),
      ...idle
    ]
  } finally {
    for (const child of children) child.kill("SIGKILL")
    rmSync(root, { recursive: true, force: true })
    if (!("unavailable" in disk)) await disk.remove()
  }
}
