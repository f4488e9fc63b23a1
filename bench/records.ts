// What keeping message records costs a send (issue 26): `POST /emails` on the standalone server (bin.js,
// the outbox, local storage on this disk) with its default SQLite message log, against the same server
// with `"messages": {"kind": "memory"}`. At c=1, interleaved rounds of sequential sends (min / median
// time per send, target ≤ 1.15x); at c=16, autocannon against each in alternating rounds (best and
// median requests per second, target ≥ 0.85x).
import { Agent, request as httpRequest } from "node:http"
import { compare, compareThroughput, ratioRows, throughputRows } from "./compare.ts"
import { embedded, load, type Running, startServer } from "./servers.ts"

const body = JSON.stringify({
  from: "billing@acme.example",
  to: ["alice@example.com", "bob@example.com"],
  subject: "Your receipt",
  body: { text: "Thanks.", html: "<p>Thanks.</p>" },
  tags: [{ name: "category", value: "receipt" }]
})

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

export const run = async (): Promise<ReadonlyArray<object>> => {
  const servers: Array<Running> = []
  try {
    const memory = await startServer({ ...embedded, viewer: { enabled: false }, messages: { kind: "memory" } })
    servers.push(memory)
    const sqlite = await startServer({ ...embedded, viewer: { enabled: false } })
    servers.push(sqlite)
    const contenders = [
      { name: 'POST /emails, c=1, "messages": {"kind": "memory"}', run: () => post(new URL(`${memory.url}/emails`)) },
      { name: "POST /emails, c=1, the SQLite message log (default)", run: () => post(new URL(`${sqlite.url}/emails`)) }
    ]
    const rows: Array<object> = [
      ...ratioRows(await compare(contenders, { rounds: 9, perRound: 100, warmup: 2 }), contenders, [undefined, 1.15])
    ]
    // Throughput at 16 connections: rounds alternate, so a change in the machine's load hits both alike.
    const loaded = [
      {
        name: 'POST /emails, c=16, "messages": {"kind": "memory"}',
        load: (seconds: number) => load(`${memory.url}/emails`, body, 16, seconds)
      },
      {
        name: "POST /emails, c=16, the SQLite message log (default)",
        load: (seconds: number) => load(`${sqlite.url}/emails`, body, 16, seconds)
      }
    ]
    rows.push(...throughputRows(await compareThroughput(loaded, { rounds: 5, seconds: 3 }), loaded, [undefined, 0.85]))
    return rows
  } finally {
    agent.destroy()
    await Promise.all(servers.map((server) => server.stop()))
  }
}
