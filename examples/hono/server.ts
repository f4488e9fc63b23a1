// mailroom's API as a fetch handler inside a Hono app, under /mail (the same handler serves
// Next.js route handlers, Bun and Deno).
import { serve } from "@hono/node-server"
import { EmailProvider, Mailroom, ObjectStore, Organizations } from "@mailroom/core"
import { MailroomHandler } from "@mailroom/http"
import { Hono } from "hono"

const mailroom = MailroomHandler.fromLayer(
  Mailroom.layer({
    provider: EmailProvider.layerMemory(),
    store: ObjectStore.layerMemory(),
    organizations: Organizations.layerStatic({
      serviceDomain: "mailroom.test",
      organizations: [{ id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"], apiKeys: ["mr_test_acme"] }]
    })
  }),
  { basePath: "/mail", v1BasePath: "/mail" }
)

export const app = new Hono()
app.get("/health", (c) => c.json({ ok: true }))
app.all("/mail/*", (c) => mailroom.web(c.req.raw))

if (import.meta.main) serve({ fetch: app.fetch, port: 3000, hostname: "127.0.0.1" })
