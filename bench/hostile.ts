// Peak memory of a server answering hostile bodies (issue 12): 20 requests of each kind, through
// @mailroom/http's Node handler and through a server that only JSON.parses them, each in a fresh
// process whose peak RSS (VmHWM) is read from /proc. Target: the handler within 2x of JSON.parse.
import { type ChildProcess, spawn } from "node:child_process"
import { readFile } from "node:fs/promises"
import { verdict } from "./compare.ts"
import { stopChild } from "./servers.ts"

const start = (kind: "router" | "parse") =>
  new Promise<{ readonly port: number; readonly child: ChildProcess }>((resolve, reject) => {
    const child = spawn(process.execPath, [new URL("./http-server.ts", import.meta.url).pathname, kind], {
      stdio: ["ignore", "pipe", "inherit"]
    })
    child.stdout?.once("data", (data: Buffer) => resolve({ port: Number(data.toString().trim()), child }))
    child.once("error", reject)
  })

const peakMiB = async (pid: number) => {
  const status = await readFile(`/proc/${pid}/status`, "utf8")
  const kib = Number(/^VmHWM:\s+(\d+) kB$/m.exec(status)?.[1])
  return Math.round(kib / 1024)
}

const MiB = 1024 * 1024
const bodies = {
  // The finding: a megabyte of nested arrays.
  "1 MiB of nested arrays": () => `${"[".repeat(MiB / 2)}${"]".repeat(MiB / 2)}`,
  // 60,000 fields no schema knows.
  "60,000 unknown fields": () => `{${Array.from({ length: 60_000 }, (_, i) => `"f${i}":1`).join(",")}}`,
  // A flat array of a third of a million values of the wrong type.
  "to: 330,000 empty arrays": () =>
    `{"from":"a@acme.example","subject":"x","body":{"text":"x"},"to":[${"[],".repeat(330_000)}[]]}`
} as const

const requests = 20

export const run = async () => {
  const rows: Array<object> = []
  for (const [name, make] of Object.entries(bodies)) {
    const body = make()
    if (body.length > MiB) throw new Error(`${name}: ${body.length} bytes is over the 1 MiB body limit`)
    const peak: Record<string, number> = {}
    for (const kind of ["parse", "router"] as const) {
      const server = await start(kind)
      try {
        for (let i = 0; i < requests; i++) {
          const response = await fetch(`http://127.0.0.1:${server.port}/emails`, {
            method: "POST",
            headers: { "content-type": "application/json", "x-api-key": "mr_bench" },
            body
          })
          await response.arrayBuffer()
          if (response.status !== 400) throw new Error(`${kind} ${name}: ${response.status}, not 400`)
        }
        peak[kind] = await peakMiB(server.child.pid ?? 0)
      } finally {
        await stopChild(server.child)
      }
    }
    const ratio = (peak.router ?? 0) / (peak.parse ?? 1)
    rows.push({
      body: `${name} x${requests}`,
      "JSON.parse only, peak RSS MiB": peak.parse,
      "@mailroom/http, peak RSS MiB": peak.router,
      "http / parse": `${ratio.toFixed(2)}x`,
      target: `≤ 2x: ${verdict(ratio <= 2)}`
    })
  }
  return rows
}
