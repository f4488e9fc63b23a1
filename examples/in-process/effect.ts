// Sending with mailroom's Effect services on the memory layers: presign, upload, send.
import { Attachments, EmailProvider, Mailer, Mailroom, ObjectStore, Organizations } from "@mailroom/core"
import { Effect, Layer } from "effect"

export const store = ObjectStore.makeMemory()

const MailroomLive = Mailroom.layer({
  provider: EmailProvider.layerMemory(),
  store: Layer.succeed(ObjectStore.ObjectStore, store),
  organizations: Organizations.layerStatic({
    serviceDomain: "mailroom.test",
    organizations: [{ id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"], apiKeys: ["mr_test_acme"] }]
  })
})

export const program = Effect.gen(function* () {
  const organizations = yield* Organizations.Organizations
  const acme = yield* organizations.authenticate({ kind: "apiKey", value: "mr_test_acme" })

  const attachments = yield* Attachments.Attachments
  const upload = yield* attachments.presign(acme, { filename: "invoice.pdf", content_type: "application/pdf" })
  yield* Effect.promise(() =>
    store.fetch(upload.url, { method: "PUT", headers: { "content-type": "application/pdf" }, body: "%PDF-1.7" })
  )

  const mailer = yield* Mailer.Mailer
  const { response } = yield* mailer.send(acme, {
    from: "billing@acme.example",
    to: ["alice@example.com"],
    subject: "Your invoice",
    body: { text: "Attached." },
    attachments: [{ filename: "invoice.pdf", key: upload.key }]
  })
  return response
}).pipe(Effect.provide(MailroomLive))

if (import.meta.main) console.log(await Effect.runPromise(program))
