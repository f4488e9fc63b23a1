// SMTP throughput (issue 28): SmtpEmailProvider.send against nodemailer's own pooled SMTP transport used
// directly, both sending the same message to one smtp-server in this process, each with a pool of five
// connections and batches of 50 concurrent sends, rounds interleaved. The provider's extra work per
// message (building the bytes before the envelope, its own Message-ID, watching the end of DATA) must
// cost at most a tenth of the throughput.
import type { EmailProvider } from "@mailroom/core"
import { SmtpEmailProvider } from "@mailroom/smtp"
import { Effect, Exit, Scope } from "effect"
import nodemailer from "nodemailer"
import { compare, ratioRows, verdict } from "./compare.ts"
import { startSmtpSink } from "./servers.ts"

const batch = 50
const attachment = new Uint8Array(20 * 1024).fill(7)

const email: EmailProvider.OutboundEmail = {
  from: { address: "billing@acme.example", name: "Acme Billing" },
  to: ["alice@example.com"],
  cc: [],
  bcc: ["audit@acme.example"],
  replyTo: [],
  subject: "Your invoice",
  text: "See attached.",
  html: "<p>See attached.</p>",
  attachments: [{ filename: "invoice.pdf", contentType: "application/pdf", content: attachment }]
}

export const run = async (): Promise<ReadonlyArray<object>> => {
  const sink = await startSmtpSink()
  const { port } = sink
  const scope = await Effect.runPromise(Scope.make())
  const provider = await Effect.runPromise(
    Scope.provide(SmtpEmailProvider.make({ host: "127.0.0.1", port, maxConnections: 5 }), scope)
  )
  const direct = nodemailer.createTransport({ pool: true, host: "127.0.0.1", port, maxConnections: 5, logger: false })
  const message = {
    from: { name: "Acme Billing", address: "billing@acme.example" },
    to: ["alice@example.com"],
    bcc: ["audit@acme.example"],
    subject: email.subject,
    text: email.text ?? "",
    html: email.html ?? "",
    attachments: [{ filename: "invoice.pdf", contentType: "application/pdf", content: Buffer.from(attachment) }]
  }
  const many = <A>(send: () => Promise<A>) => Promise.all(Array.from({ length: batch }, send))
  try {
    const contenders = [
      {
        name: `nodemailer pooled transport, ${batch} concurrent sendMail`,
        run: () => many(() => direct.sendMail(message))
      },
      {
        name: `SmtpEmailProvider.send, ${batch} concurrent`,
        run: () => many(() => Effect.runPromise(provider.send(email)))
      }
    ]
    const comparison = await compare(contenders, { rounds: 7, perRound: 4 })
    const throughput = (times: ReadonlyArray<number>) => (times[0] ?? 0) / (times[1] ?? 1)
    return [
      ...ratioRows(comparison, contenders),
      {
        name: "throughput: SmtpEmailProvider / nodemailer",
        "ratio (min / median)": `${throughput(comparison.min).toFixed(2)}x / ${throughput(comparison.median).toFixed(2)}x`,
        target: `≥ 0.9x: ${verdict(throughput(comparison.min) >= 0.9)}`
      }
    ]
  } finally {
    direct.close()
    await Effect.runPromise(Scope.close(scope, Exit.void))
    await sink.close()
  }
}
