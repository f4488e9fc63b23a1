// In-process cost of core's operations on the memory layers: what mailroom itself adds per call,
// before any vendor or network.
import { Attachments, EmailProvider, Mailer, Mailroom, ObjectStore, Organizations } from "@mailroom/core"
import { Effect, Layer, ManagedRuntime } from "effect"
import { Bench } from "tinybench"

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

  const bench = new Bench({ time: 1000, warmup: true })
  bench
    .add("presign (Attachments.presign)", () =>
      runtime.runPromise(attachments.presign(acme, { filename: "report.pdf" }))
    )
    .add("send, no attachment (Mailer.send)", () => runtime.runPromise(mailer.send(acme, message)))
    .add("send, one 100 KiB attachment", () =>
      runtime.runPromise(mailer.send(acme, { ...message, attachments: [{ filename: "r.pdf", key: uploaded.key }] }))
    )
  await bench.run()
  await runtime.dispose()
  return bench.tasks.map((task) => {
    const result = task.result as { throughput?: { mean: number }; latency?: { mean: number } } | undefined
    return {
      name: task.name,
      "ops/s": Math.round(result?.throughput?.mean ?? 0),
      "mean µs": Number(((result?.latency?.mean ?? 0) * 1000).toFixed(1))
    }
  })
}
