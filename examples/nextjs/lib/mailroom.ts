// One mailroom per server process, shared by the route handlers. Next.js may evaluate a module more
// than once in development (hot reload), so the instance is kept on globalThis.
import { EmailProvider, Mailroom, ObjectStore, Organizations } from "@mailroom/core"
import { MailroomHandler } from "@mailroom/http"

const make = () =>
  MailroomHandler.fromLayer(
    Mailroom.layer({
      provider: EmailProvider.layerMemory(), // SesEmailProvider.layerConfig(...) in production
      store: ObjectStore.layerMemory(), // S3ObjectStore.layerConfig(...)
      organizations: Organizations.single({
        domains: ["app.example"],
        apiKeys: [process.env.MAILROOM_API_KEY ?? "mr_test_app"]
      })
    }),
    // The route's own path: Next.js hands the handler the full URL.
    { basePath: "/api/mail", v1BasePath: "/api/mail" }
  )

const shared = globalThis as { mailroom?: ReturnType<typeof make> }
shared.mailroom ??= make()
export const mailroom = shared.mailroom
