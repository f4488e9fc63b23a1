// Sending later and sending many (issue 27), on the standalone server (bin.js, the outbox, local
// storage on this disk): how fast due scheduled messages drain into the outbox, against direct
// POST /emails on the same setup (one instance on SQLite; three on one PostgreSQL), rounds interleaved,
// target >= 0.7x; and one POST /emails/batch of 100 against 100 single POST /emails over 16 connections.
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtemp, readdir, rm, unlink, writeFile } from "node:fs/promises"
import { Agent, request as httpRequest } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { startPostgresCluster } from "@mailroom/test-support"
import { compare, ratioRows, verdict } from "./compare.ts"
import { stopChild } from "./servers.ts"

const bin = new URL("../packages/server/dist/bin.js", import.meta.url).pathname
const perRound = 300
const rounds = 5
const connections = 16

const message = (n: number, scheduledAt?: string) => ({
  from: "billing@acme.example",
  to: [`user${n}@example.com`],
  subject: `Receipt ${n}`,
  body: { text: "Thanks.", html: "<p>Thanks.</p>" },
  ...(scheduledAt === undefined ? {} : { scheduled_at: scheduledAt })
})

interface Instance {
  readonly url: string
  readonly child: ChildProcess
}

/** One server process on the config at `path`; resolves once it is ready. */
const start = async (path: string, env: Record<string, string> = {}): Promise<Instance> => {
  const child = spawn(process.execPath, [bin], {
    env: { ...process.env, MAILROOM_CONFIG: path, PORT: "0", ...env },
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
  while ((await fetch(`${url}/readyz`)).status !== 200) await new Promise((resolve) => setTimeout(resolve, 50))
  return { url, child }
}

const agent = new Agent({ keepAlive: true, maxSockets: connections })

/** One POST with the API key, over the shared keep-alive agent; resolves to its status. */
const post = (url: string, body: unknown) =>
  new Promise<number>((resolve, reject) => {
    const text = JSON.stringify(body)
    const request = httpRequest(
      url,
      {
        method: "POST",
        agent,
        headers: {
          "content-type": "application/json",
          "content-length": Buffer.byteLength(text),
          "x-api-key": "mr_bench"
        }
      },
      (response) => {
        response.on("data", () => undefined)
        response.on("end", () => resolve(response.statusCode ?? 0))
        response.on("error", reject)
      }
    )
    request.on("error", reject)
    request.end(text)
  })

/** The `.eml` files in the outbox. */
const sentCount = async (outbox: string) => {
  try {
    return (await readdir(outbox)).filter((name) => name.endsWith(".eml")).length
  } catch {
    return 0
  }
}

const emptyOutbox = async (outbox: string) => {
  for (const name of await readdir(outbox).catch(() => [])) await unlink(join(outbox, name)).catch(() => undefined)
}

/** Messages per second of `n` direct sends, spread over the instances, `connections` at a time. */
const direct = async (instances: ReadonlyArray<Instance>, n: number) => {
  const started = performance.now()
  const statuses = await Promise.all(
    Array.from({ length: n }, (_, i) => post(`${(instances[i % instances.length] as Instance).url}/emails`, message(i)))
  )
  const elapsed = (performance.now() - started) / 1000
  if (statuses.some((status) => status !== 201)) throw new Error(`a send answered ${statuses.find((s) => s !== 201)}`)
  return n / elapsed
}

/**
 * Messages per second of the drain: `n` scheduled for one second (untimed), then timed from the
 * first of them in the outbox to the last, the outbox read every 5 ms.
 */
const drain = async (instances: ReadonlyArray<Instance>, n: number, outbox: string) => {
  const when = new Date(Math.ceil((Date.now() + 2000 + n * 5) / 1000) * 1000).toISOString()
  for (let start = 0; start < n; start += 100) {
    const batch = Array.from({ length: Math.min(100, n - start) }, (_, i) => message(start + i, when))
    const status = await post(`${(instances[(start / 100) % instances.length] as Instance).url}/emails/batch`, batch)
    if (status !== 200) throw new Error(`a batch answered ${status}`)
  }
  let first = 0
  for (;;) {
    const count = await sentCount(outbox)
    if (count > 0 && first === 0) first = performance.now()
    if (count >= n) return (n - 1) / ((performance.now() - first) / 1000)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

/** Interleaved rounds of direct and drain on one setup: the best and median rates, and their ratio. */
const rates = async (name: string, instances: ReadonlyArray<Instance>, outbox: string) => {
  const directRates: Array<number> = []
  const drainRates: Array<number> = []
  for (let round = -1; round < rounds; round++) {
    const order = round % 2 === 0 ? ["direct", "drain"] : ["drain", "direct"]
    for (const which of order) {
      await emptyOutbox(outbox)
      const rate = which === "direct" ? await direct(instances, perRound) : await drain(instances, perRound, outbox)
      if (round >= 0) (which === "direct" ? directRates : drainRates).push(rate)
    }
  }
  const best = (values: ReadonlyArray<number>) => Math.max(...values)
  const median = (values: ReadonlyArray<number>) =>
    [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0
  const ratio = best(drainRates) / best(directRates)
  return [
    {
      name: `${name}: direct POST /emails, msg/s (best / median)`,
      rate: `${best(directRates).toFixed(0)} / ${median(directRates).toFixed(0)}`
    },
    {
      name: `${name}: drain of due scheduled messages, msg/s`,
      rate: `${best(drainRates).toFixed(0)} / ${median(drainRates).toFixed(0)}`
    },
    {
      name: `${name}: drain / direct`,
      "ratio (best / median)": `${ratio.toFixed(2)}x / ${(median(drainRates) / median(directRates)).toFixed(2)}x`,
      target: `≥ 0.7x: ${verdict(ratio >= 0.7)}`
    }
  ]
}

/** A folder with a config on `messages`, its outbox path beside it. */
const setUp = async (messages: object) => {
  const dir = await mkdtemp(join(tmpdir(), "mailroom-bench-scheduled-"))
  const path = join(dir, "mailroom.config.json")
  await writeFile(
    path,
    JSON.stringify({
      serviceDomain: "mailroom.test",
      organizations: [{ id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"], apiKeys: ["mr_bench"] }],
      storage: { kind: "local", dir: "storage", signingSecret: "bench-secret" },
      provider: { kind: "outbox", dir: "outbox" },
      idempotency: { kind: "memory" },
      viewer: { enabled: false },
      messages
    })
  )
  return { dir, path, outbox: join(dir, "outbox") }
}

/** 100 single sends over `connections` connections against one batch of the same 100. */
const batchVsSingles = async (instance: Instance, outbox: string) => {
  const items = Array.from({ length: 100 }, (_, i) => message(i))
  const contenders = [
    {
      name: `100 single POST /emails over ${connections} connections`,
      run: () => Promise.all(items.map((item) => post(`${instance.url}/emails`, item)))
    },
    { name: "one POST /emails/batch of 100", run: () => post(`${instance.url}/emails/batch`, items) }
  ]
  const comparison = await compare(contenders, { rounds: 7, perRound: 2, between: () => emptyOutbox(outbox) })
  return ratioRows(comparison, contenders, [undefined, 1])
}

export const run = async (): Promise<ReadonlyArray<object>> => {
  const rows: Array<object> = []
  const sqlite = await setUp({ kind: "sqlite" })
  const one = await start(sqlite.path)
  try {
    rows.push(...(await rates("SQLite, one instance", [one], sqlite.outbox)))
    rows.push(...(await batchVsSingles(one, sqlite.outbox)))
  } finally {
    await stopChild(one.child)
    await rm(sqlite.dir, { recursive: true, force: true })
  }
  const cluster = await startPostgresCluster()
  const postgres = await setUp({ kind: "postgres" })
  const three = await Promise.all([1, 2, 3].map(() => start(postgres.path, { DATABASE_URL: cluster.url })))
  try {
    rows.push(...(await rates("PostgreSQL, three instances", three, postgres.outbox)))
  } finally {
    await Promise.all(three.map((instance) => stopChild(instance.child)))
    await cluster.destroy()
    await rm(postgres.dir, { recursive: true, force: true })
  }
  agent.destroy()
  return rows
}
