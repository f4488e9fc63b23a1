// One mailroom per server process, shared by the route handlers. Next.js may evaluate a module more
// than once in development (hot reload), so the instance is kept on globalThis.
import { Mailroom, Organizations } from "@mailroom/core"
import { MailroomHandler } from "@mailroom/http"
import { DiskObjectStore, OutboxEmailProvider } from "@mailroom/local"

const dir = process.env.MAILROOM_DIR ?? ".mailroom"
const publicUrl = process.env.PUBLIC_URL ?? "http://localhost:3000"

const make = () =>
  MailroomHandler.fromLayer(
    Mailroom.layer({
      provider: OutboxEmailProvider.layer({ dir: `${dir}/outbox` }), // SesEmailProvider.layerConfig(...) in production
      store: DiskObjectStore.layer({
        dir: `${dir}/storage`, // S3ObjectStore.layerConfig(...) in production
        // The origin alone: signed URLs follow it with basePath, /api/mail/_mailroom/storage/...
        publicUrl,
        signingSecret: process.env.STORAGE_SECRET ?? "change-me"
      }),
      organizations: Organizations.single({
        domains: ["app.example"],
        apiKeys: [process.env.MAILROOM_API_KEY ?? "mr_test_app"]
      })
    }),
    // The route's own path (app/api/mail/[...path]): Next.js hands the handler the whole URL.
    { basePath: "/api/mail", publicUrl }
  )

const shared = globalThis as { mailroom?: ReturnType<typeof make> }
shared.mailroom ??= make()
export const mailroom = shared.mailroom
