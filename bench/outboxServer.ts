// Outbox throughput behind HTTP (issue 33): POST /emails to the built server on its embedded defaults
// (the outbox, local storage, the SQLite message log), against the floor of a durable outbox behind
// node:http (outbox-floor.ts: JSON.parse, nodemailer's MailComposer, one `.eml` fdatasync'd and renamed),
// at 1, 16 and 64 connections, rounds alternating; target ≥ 0.8x the floor's requests per second.
import { compareThroughput, throughputRows } from "./compare.ts"
import { embedded, load, type Running, startScript, startServer } from "./servers.ts"

const body = JSON.stringify({
  from: "billing@acme.example",
  from_name: "Acme Billing",
  to: ["alice@example.com", "bob@example.com"],
  bcc: ["audit@acme.example"],
  subject: "Your receipt",
  body: { text: "Thanks.", html: "<p>Thanks.</p>" }
})

export const run = async (): Promise<ReadonlyArray<object>> => {
  const running: Array<Running> = []
  try {
    const floor = await startScript("./outbox-floor.ts")
    running.push(floor)
    const server = await startServer({ ...embedded, viewer: { enabled: false } })
    running.push(server)
    const rows: Array<object> = []
    for (const connections of [1, 16, 64]) {
      const contenders = [
        {
          name: `floor: node:http, MailComposer, one .eml fdatasync'd, c=${connections}`,
          load: (seconds: number) => load(floor.url, body, connections, seconds)
        },
        {
          name: `POST /emails, the server on its embedded defaults, c=${connections}`,
          load: (seconds: number) => load(`${server.url}/emails`, body, connections, seconds)
        }
      ]
      rows.push(
        ...throughputRows(await compareThroughput(contenders, { rounds: 5, seconds: 2 }), contenders, [undefined, 0.8])
      )
    }
    return rows
  } finally {
    await Promise.all(running.map((r) => r.stop()))
  }
}
