// What keeping message records costs a send (issue 26): `POST /emails` on the standalone server (bin.js,
// the outbox, local storage on this disk) with its default SQLite message log, against the same server
// with `"messages": {"kind": "memory"}`. At c=1, interleaved rounds of sequential sends (min / median
// time per send, target ≤ 1.15x); at c=16, autocannon against each in turn (throughput, target ≥ 0.85x).
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { Agent, request as httpRequest } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import autocannon from "autocannon"
import { compare, ratioRows } from "./compare.ts"

const bin = new URL("../packages/server/dist/bin.js", import.meta.url).pathname

const body = JSON.stringify({
  from: "billing@acme.example",
  to: ["alice@example.com", "bob@example.com"],
  subject: "Your receipt",
  body: { text: "Thanks.", html: "<p>Thanks.</p>" },
  tags: [{ name: "category", value: "receipt" }]
})

/** The server on its own folder, `messages` as given (absent: the SQLite default); resolves its URL. */
const start = async (dir: string, messages: object | undefined) => {
  const config = join(dir, "mailroom.config.json")
  await writeFile(
    config,
    JSON.stringify({
      serviceDomain: "mailroom.test",
      organizations: [{ id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"], apiKeys: ["mr_bench"] }],
      storage: { kind: "local", dir: ".mailroom/storage", signingSecret: "bench-secret" },
      provider: { kind: "outbox", dir: ".mailroom/outbox" },
      viewer: { enabled: false },
      ...(messages === undefined ? {} : { messages })
    })
  )
  const child = spawn(process.execPath, [bin], {
    env: { ...process.env, MAILROOM_CONFIG: config, PORT: "0" },
    // The log line per request goes nowhere: writing it is the same on both sides.
    stdio: ["ignore", "pipe", "inherit"]
  })
  const url = await new Promise<string>((resolve, reject) => {
    let output = ""
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      const found = /listening on (http:\/\/\S+)/.exec(output)?.[1]
      if (found === undefined) return
      child.stdout?.off("data", onData)
      child.stdout?.resume()
      resolve(found)
    }
    child.stdout?.on("data", onData)
    child.once("exit", () => reject(new Error(`the server exited: ${output}`)))
  })
  // Listening comes before the layers are built: wait until it is ready.
  while ((await fetch(`${url}/readyz`)).status !== 200) await new Promise((resolve) => setTimeout(resolve, 50))
  return { url, child }
}

const agent = new Agent({ keepAlive: true, maxSockets: 1 })
const post = (url: URL) =>
  new Promise<void>((resolve, reject) => {
    const request = httpRequest(
      url,
      {
        method: "POST",
        agent,
        headers: {
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body),
          "x-api-key": "mr_bench"
        }
      },
      (response) => {
        response.on("data", () => undefined)
        response.on("end", () =>
          response.statusCode === 201 ? resolve() : reject(new Error(`POST /emails answered ${response.statusCode}`))
        )
        response.on("error", reject)
      }
    )
    request.on("error", reject)
    request.end(body)
  })

const load = (url: string, seconds: number) =>
  new Promise<autocannon.Result>((resolve, reject) =>
    autocannon(
      {
        url: `${url}/emails`,
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": "mr_bench" },
        body,
        connections: 16,
        duration: seconds
      },
      (error, result) => (error ? reject(error) : resolve(result))
    )
  )

export const run = async (): Promise<ReadonlyArray<object>> => {
  const dirs = await Promise.all([1, 2].map(() => mkdtemp(join(tmpdir(), "mailroom-bench-records-"))))
  const servers: Array<{ readonly url: string; readonly child: ChildProcess }> = []
  try {
    const [memoryDir, sqliteDir] = dirs as [string, string]
    servers.push(await start(memoryDir, { kind: "memory" }), await start(sqliteDir, undefined))
    const [memory, sqlite] = servers as unknown as [{ url: string }, { url: string }]
    const contenders = [
      { name: 'POST /emails, c=1, "messages": {"kind": "memory"}', run: () => post(new URL(`${memory.url}/emails`)) },
      { name: "POST /emails, c=1, the SQLite message log (default)", run: () => post(new URL(`${sqlite.url}/emails`)) }
    ]
    const rows: Array<object> = [
      ...ratioRows(await compare(contenders, { rounds: 9, perRound: 100, warmup: 2 }), contenders, [undefined, 1.15])
    ]

    // Throughput at 16 connections: rounds alternate, so a change in the machine's load hits both alike.
    const rounds = 4
    const seconds = 3
    const total = { memory: 0, sqlite: 0 }
    // Warm-up: one second each, untimed.
    for (const server of [memory, sqlite]) await load(server.url, 1)
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? (["memory", "sqlite"] as const) : (["sqlite", "memory"] as const)
      for (const kind of order) {
        const result = await load((kind === "memory" ? memory : sqlite).url, seconds)
        if (result.non2xx > 0 || result.errors > 0) {
          throw new Error(`${kind}: ${result.non2xx} non-2xx answers, ${result.errors} errors`)
        }
        total[kind] += result.requests.total
      }
    }
    const ratio = total.sqlite / total.memory
    rows.push(
      {
        name: 'POST /emails, c=16, "messages": {"kind": "memory"}',
        "req/s": Math.round(total.memory / (rounds * seconds))
      },
      {
        name: "POST /emails, c=16, the SQLite message log (default)",
        "req/s": Math.round(total.sqlite / (rounds * seconds)),
        ratio: `${ratio.toFixed(2)}x`,
        target: `≥ 0.85x: ${ratio >= 0.85 ? "met" : "MISSED"}`
      }
    )
    return rows
  } finally {
    agent.destroy()
    // Each server writes its last files as it stops: its folder is removed once it has exited.
    await Promise.all(
      servers.map(({ child }) => {
        const exited = new Promise((resolve) => child.once("exit", resolve))
        child.kill()
        return exited
      })
    )
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })))
  }
}
