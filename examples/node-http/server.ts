// mailroom's API on a plain node:http server, on the memory layers.
import { createServer } from "node:http"
import { EmailProvider, Mailroom, ObjectStore, Organizations } from "@mailroom/core"
import { MailroomHandler } from "@mailroom/http"

const mailroom = MailroomHandler.fromLayer(
  Mailroom.layer({
    provider: EmailProvider.layerMemory(),
    store: ObjectStore.layerMemory(),
    organizations: Organizations.layerStatic({
      serviceDomain: "mailroom.test",
      organizations: [{ id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"], apiKeys: ["mr_test_acme"] }]
    })
  })
)

export const server = createServer(mailroom.node)

if (import.meta.main) server.listen(3000, "127.0.0.1", () => console.log("mailroom on http://127.0.0.1:3000"))
