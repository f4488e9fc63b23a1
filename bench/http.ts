// Requests per second through @mailroom/http's Node handler, beside a bare node:http server making the
// same core call without the router (issue 3's baseline). Each server runs in its own process.
import { type ChildProcess, spawn } from "node:child_process"
import autocannon from "autocannon"
import { compareThroughput, throughputRows } from "./compare.ts"
import { stopChild } from "./servers.ts"

const start = (kind: "router" | "bare") =>
  new Promise<{ readonly port: number; readonly child: ChildProcess }>((resolve, reject) => {
    const child = spawn(process.execPath, [new URL("./http-server.ts", import.meta.url).pathname, kind], {
      stdio: ["ignore", "pipe", "inherit"]
    })
    child.stdout?.once("data", (data: Buffer) => resolve({ port: Number(data.toString().trim()), child }))
    child.once("error", reject)
  })

const load = (port: number, path: string, body: string, seconds: number) =>
  new Promise<autocannon.Result>((resolve, reject) =>
    autocannon(
      {
        url: `http://127.0.0.1:${port}${path}`,
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": "mr_bench" },
        body,
        connections: 16,
        duration: seconds
      },
      (error, result) => (error ? reject(error) : resolve(result))
    )
  )

const endpoints = [
  [
    "POST /attachments/presign",
    "/attachments/presign",
    JSON.stringify({ filename: "report.pdf", content_type: "application/pdf" })
  ],
  [
    "POST /emails",
    "/emails",
    JSON.stringify({
      from: "a@acme.example",
      to: ["b@example.com"],
      subject: "Hi",
      body: { text: "Hello", html: "<p>Hello</p>" }
    })
  ]
] as const

export const run = async () => {
  const rows: Array<object> = []
  const servers = { bare: await start("bare"), router: await start("router") }
  try {
    for (const [name, path, body] of endpoints) {
      const contenders = (["bare", "router"] as const).map((kind) => ({
        name: `${name}, ${kind === "bare" ? "bare node:http, the same core calls" : "@mailroom/http"}`,
        load: async (seconds: number) => {
          const result = await load(servers[kind].port, path, body, seconds)
          if (result.non2xx > 0 || result.errors > 0) {
            throw new Error(`${kind} ${name}: ${result.non2xx} non-2xx answers, ${result.errors} errors`)
          }
          return result.requests.total / result.duration
        }
      }))
      rows.push(
        ...throughputRows(await compareThroughput(contenders, { rounds: 4, seconds: 2 }), contenders, [undefined, 0.8])
      )
    }
  } finally {
    await Promise.all([stopChild(servers.bare.child), stopChild(servers.router.child)])
  }
  return rows
}
