// Cold start (issue 33): spawning the server's `bin.js` on the embedded defaults (local disk, the
// outbox, the SQLite message log) until its first 200 on /readyz, against a bare program that imports
// `effect` and answers its first 200 on node:http. 10 runs each, alternating (the order swapped every
// round), so the machine's load hits both alike; min and median compared, the verdict on the min.
import { spawn } from "node:child_process"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"

const bin = new URL("../packages/server/dist/bin.js", import.meta.url).pathname
const bare = `
import("effect").then(() => {
  const server = require("node:http").createServer((_req, res) => res.end("{}"))
  server.listen(0, "127.0.0.1", () => console.log("mailroom listening on http://127.0.0.1:" + server.address().port))
})`

/** Milliseconds from spawn to the first 200 of `GET {url}{path}`, the URL read from the child's first line. */
const timeToFirst200 = (args: ReadonlyArray<string>, path: string, env: NodeJS.ProcessEnv) =>
  new Promise<number>((resolve, reject) => {
    const started = performance.now()
    const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] })
    let output = ""
    child.stdout.on("data", async (chunk: Buffer) => {
      output += chunk.toString()
      const url = /listening on (http:\/\/\S+)/.exec(output)?.[1]
      if (url === undefined || output.includes("\u0000")) return
      output += "\u0000"
      // Asked again 2 ms after each answer that is not yet 200: a tight loop would take the CPU the
      // server needs to get ready (on two cores, the bench and the server share them).
      for (;;) {
        const answer = await fetch(`${url}${path}`).catch(() => undefined)
        if (answer?.status === 200) break
        await answer?.arrayBuffer()
        await new Promise((resolve) => setTimeout(resolve, 2))
      }
      const elapsed = performance.now() - started
      child.kill()
      child.once("exit", () => resolve(elapsed))
    })
    child.once("error", reject)
  })

const stats = (samples: Array<number>) => {
  const sorted = [...samples].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  const median = sorted.length % 2 === 1 ? sorted[mid] : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2
  return { min: sorted[0] ?? Number.NaN, median: median ?? Number.NaN }
}

export const run = async (): Promise<ReadonlyArray<object>> => {
  const dir = await mkdtemp(join(tmpdir(), "mailroom-coldstart-"))
  const config = join(dir, "mailroom.config.json")
  await writeFile(
    config,
    JSON.stringify({
      serviceDomain: "mailroom.test",
      organizations: [{ id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"], apiKeys: ["mr_bench"] }],
      storage: { kind: "local", dir: "storage", signingSecret: "bench-secret" },
      provider: { kind: "outbox", dir: "outbox" }
    })
  )
  const server: Array<number> = []
  const effect: Array<number> = []
  try {
    const runs = {
      effect: () => timeToFirst200(["-e", bare], "/", {}),
      server: () => timeToFirst200([bin], "/readyz", { MAILROOM_CONFIG: config, PORT: "0" })
    }
    // One untimed run each first: the files are then in the page cache for every timed run alike.
    await runs.effect()
    await runs.server()
    for (let round = 0; round < 10; round++) {
      for (const which of round % 2 === 0 ? (["effect", "server"] as const) : (["server", "effect"] as const)) {
        ;(which === "effect" ? effect : server).push(await runs[which]())
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
  const s = stats(server)
  const e = stats(effect)
  return [
    {
      name: 'node: import("effect"), then node:http (baseline)',
      "min ms": e.min.toFixed(0),
      "median ms": e.median.toFixed(0)
    },
    { name: "mailroom bin.js on the embedded defaults", "min ms": s.min.toFixed(0), "median ms": s.median.toFixed(0) },
    {
      name: "bin.js / import(effect): first 200 on /readyz",
      "ratio (min / median)": `${(s.min / e.min).toFixed(2)}x / ${(s.median / e.median).toFixed(2)}x`,
      target: `≤ 1.3x: ${s.min / e.min <= 1.3 ? "met" : "MISSED"}`
    }
  ]
}
