// Requests per second through @mailroom/http's Node handler, beside a bare node:http server making the
// same core call without the router (issue 3's baseline). Each server runs in its own process.
import { type ChildProcess, spawn } from "node:child_process"
import autocannon from "autocannon"

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

/** Rounds alternate between the two servers, so a change in the machine's load hits both alike. */
const rounds = 4
const secondsPerRound = 2

export const run = async () => {
  const rows: Array<object> = []
  const servers = { bare: await start("bare"), router: await start("router") }
  try {
    for (const [name, path, body] of endpoints) {
      const total = { bare: 0, router: 0 }
      for (const kind of ["bare", "router"] as const) await load(servers[kind].port, path, body, 1) // warm-up
      for (let round = 0; round < rounds; round++) {
        for (const kind of ["bare", "router"] as const) {
          const result = await load(servers[kind].port, path, body, secondsPerRound)
          if (result.non2xx > 0 || result.errors > 0) {
            throw new Error(`${kind} ${name}: ${result.non2xx} non-2xx answers, ${result.errors} errors`)
          }
          total[kind] += result.requests.total
        }
      }
      const seconds = rounds * secondsPerRound
      rows.push({
        endpoint: name,
        "bare node:http req/s": Math.round(total.bare / seconds),
        "@mailroom/http req/s": Math.round(total.router / seconds),
        "router / bare": `${((total.router / total.bare) * 100).toFixed(1)}% (target ≥ 80%)`
      })
    }
  } finally {
    servers.bare.child.kill()
    servers.router.child.kill()
  }
  return rows
}
