// Outbox throughput (issue 18): OutboxEmailProvider.send, one message after another, against the
// floor of any durable outbox, writing the same message as one fsync'd `.eml` (temporary file, fsync,
// rename), and against the former outbox's way (the message streamed by nodemailer's build(), then
// two files each written, fsync'd and renamed in turn), all in this run, rounds interleaved.
import { mkdtempSync, rmSync } from "node:fs"
import { mkdir, open, rename } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import type { EmailProvider } from "@mailroom/core"
import { OutboxEmailProvider } from "@mailroom/local"
import { Effect } from "effect"
import MailComposer from "nodemailer/lib/mail-composer"
import { compare, ratioRows, verdict } from "./compare.ts"

const email: EmailProvider.OutboundEmail = {
  from: { address: "billing@acme.example", name: "Acme Billing" },
  to: ["alice@example.com", "bob@example.com"],
  cc: [],
  bcc: ["audit@acme.example"],
  replyTo: [],
  subject: "Your invoice",
  text: "See attached.",
  html: "<p>See attached.</p>",
  attachments: [],
  metadata: { "mailroom-org": "org_acme" }
}

let n = 0
const writeDurably = async (dir: string, name: string, content: Uint8Array) => {
  const temporary = path.join(dir, `.${name}.${n++}.tmp`)
  const handle = await open(temporary, "wx")
  try {
    await handle.writeFile(content)
    await handle.sync()
  } finally {
    await handle.close()
  }
  await rename(temporary, path.join(dir, name))
}

const compose = () =>
  new MailComposer({
    from: { name: "Acme Billing", address: "billing@acme.example" },
    to: [...email.to],
    bcc: [...email.bcc],
    subject: email.subject,
    messageId: `<${n}@outbox.mailroom>`,
    date: new Date(),
    text: email.text ?? "",
    html: email.html ?? "",
    headers: [{ key: "X-Mailroom-Organization", value: "org_acme" }]
  }).compile()

export const run = async (): Promise<ReadonlyArray<object>> => {
  const root = mkdtempSync(path.join(tmpdir(), "mailroom-bench-outbox-"))
  try {
    const dirs = { eml: path.join(root, "eml"), former: path.join(root, "former"), outbox: path.join(root, "outbox") }
    for (const dir of Object.values(dirs)) await mkdir(dir, { recursive: true })
    const outbox = await Effect.runPromise(OutboxEmailProvider.make({ dir: dirs.outbox }))
    const message = await compose().build()
    const contenders = [
      {
        name: "one fsync'd .eml (same message)",
        run: () => writeDurably(dirs.eml, `${n}.eml`, message)
      },
      {
        name: "former outbox: build(), then .json and .eml fsync'd in turn",
        run: async () => {
          const raw = await compose().build()
          const id = n
          await writeDurably(dirs.former, `${id}.json`, Buffer.from(JSON.stringify({ bcc: email.bcc })))
          await writeDurably(dirs.former, `${id}.eml`, raw)
        }
      },
      { name: "OutboxEmailProvider.send", run: () => Effect.runPromise(outbox.send(email)) }
    ]
    const comparison = await compare(contenders, { rounds: 5, perRound: 100 })
    const speedup = (times: ReadonlyArray<number>) => (times[1] ?? 0) / (times[2] ?? 1)
    return [
      ...ratioRows(comparison, contenders),
      {
        name: "speedup: former outbox / OutboxEmailProvider.send",
        "ratio (min / median)": `${speedup(comparison.min).toFixed(2)}x / ${speedup(comparison.median).toFixed(2)}x`,
        target: `≥ 1.5x: ${verdict(speedup(comparison.min) >= 1.5)}`
      }
    ]
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}
