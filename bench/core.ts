// In-process cost of core's operations on the memory layers: what mailroom itself adds per call,
// before any vendor or network; interleaved rounds, each beside a send with no attachment.
import { Attachments, EmailProvider, Mailer, Mailroom, ObjectStore, Organizations } from "@mailroom/core"
import { Effect, Layer, ManagedRuntime } from "effect"
import { compare, ratioRows } from "./compare.ts"

export const run = async () => {
  const store = ObjectStore.makeMemory()
  // The memory provider keeps every message; a bench sends many, so this one only answers.
  const provider: EmailProvider.EmailProvider = {
    ...EmailProvider.makeMemory(),
    send: () => Effect.succeed({ messageId: "bench" })
  }
  const runtime = ManagedRuntime.make(
    Mailroom.layer({
      provider: Layer.succeed(EmailProvider.EmailProvider, provider),
      store: Layer.succeed(ObjectStore.ObjectStore, store),
      organizations: Organizations.layerStatic({
        serviceDomain: "mailroom.test",
        organizations: [{ id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"] }]
      })
    })
  )
  const acme = { orgId: "org_acme", slug: "acme" }
  const { attachments, mailer } = await runtime.runPromise(
    Effect.all({ attachments: Attachments.Attachments, mailer: Mailer.Mailer })
  )
  const uploaded = await runtime.runPromise(
    attachments.presign(acme, { filename: "report.pdf", content_type: "application/pdf" })
  )
  await store.fetch(uploaded.url, {
    method: "PUT",
    headers: { "content-type": "application/pdf" },
    body: new Uint8Array(100 * 1024)
  })
  const message = {
    from: "billing@acme.example",
    from_name: "Acme Billing",
    to: ["alice@example.com", "bob@example.com"],
    subject: "Your invoice",
    body: { text: "See attached.", html: "<p>See attached.</p>" }
  }

  // Each beside a send with no attachment: issue 33 found a presign costing three times one.
  const contenders = [
    { name: "send, no attachment (Mailer.send)", run: () => runtime.runPromise(mailer.send(acme, message)) },
    {
      name: "presign (Attachments.presign)",
      run: () => runtime.runPromise(attachments.presign(acme, { filename: "report.pdf" }))
    },
    {
      name: "send, one 100 KiB attachment",
      run: () =>
        runtime.runPromise(mailer.send(acme, { ...message, attachments: [{ filename: "r.pdf", key: uploaded.key }] }))
    }
  ]
  const comparison = await compare(contenders, { rounds: 7, perRound: 500, warmup: 2 })
  await runtime.dispose()
  return ratioRows(comparison, contenders)
}
