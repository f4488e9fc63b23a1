// mailroom's API mounted in an Express app under /mail, beside the app's own routes.
import { EmailProvider, Mailroom, ObjectStore, Organizations } from "@mailroom/core"
import { MailroomHandler } from "@mailroom/http"
import express from "express"

const mailroom = MailroomHandler.fromLayer(
  Mailroom.layer({
    provider: EmailProvider.layerMemory(),
    store: ObjectStore.layerMemory,
    organizations: Organizations.layerStatic({
      serviceDomain: "mailroom.test",
      organizations: [{ id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"], apiKeys: ["mr_test_acme"] }]
    })
  })
)

export const app = express()
app.get("/health", (_req, res) => {
  res.json({ ok: true })
})
// Express strips the mount path, so the handler sees /emails, /attachments/presign...
app.use("/mail", mailroom.node)

if (import.meta.main) app.listen(3000, "127.0.0.1", () => console.log("mailroom on http://127.0.0.1:3000/mail"))
