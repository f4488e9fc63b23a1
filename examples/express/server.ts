// mailroom's API under /mail in an Express app, mounted before the app's express.json(): Express
// tells mailroom the mount, so the signed upload URLs and /openapi.json carry /mail with no setting.
import { Mailroom, Organizations } from "@mailroom/core"
import { MailroomHandler } from "@mailroom/http"
import { DiskObjectStore, OutboxEmailProvider } from "@mailroom/local"
import express from "express"

export interface AppOptions {
  /** Where uploads and the outbox's .eml files go. */
  readonly dir: string
  /**
   * Where clients reach the app: its origin, and signed URLs and /openapi.json follow it with the
   * mount. Behind a reverse proxy that strips or adds a prefix, where clients reach mailroom, path
   * included: `https://example.com/api/mail`.
   */
  readonly publicUrl: string
  /** Where mailroom is mounted. Default "/mail"; "/" for the root of the app. */
  readonly mountPath?: string
}

export const makeApp = ({ dir, publicUrl, mountPath = "/mail" }: AppOptions) => {
  const mailroom = MailroomHandler.fromLayer(
    Mailroom.layer({
      provider: OutboxEmailProvider.layer({ dir: `${dir}/outbox` }),
      store: DiskObjectStore.layer({
        dir: `${dir}/storage`,
        publicUrl,
        signingSecret: process.env.STORAGE_SECRET ?? "change-me"
      }),
      // One application sending for itself: no organisation to invent.
      organizations: Organizations.single({
        domains: ["app.example"],
        apiKeys: [process.env.MAILROOM_API_KEY ?? "mr_test_app"]
      })
    }),
    { publicUrl } // /openapi.json's servers
  )
  const app = express()
  // Before the body parsers: a parser first would take the bytes of a JSON upload (and answer one over
  // its 100 kB limit with Express's HTML error page). Anything not mailroom's goes on to the routes below.
  app.use(mountPath, mailroom.node)
  app.use(express.json())
  app.get("/health", (_req, res) => {
    res.json({ ok: true })
  })
  return { app, mailroom }
}

if (import.meta.main) {
  const port = Number(process.env.PORT ?? 3000)
  const { app, mailroom } = makeApp({ dir: ".mailroom", publicUrl: `http://127.0.0.1:${port}` })
  await mailroom.ready // a broken configuration stops here, naming the setting
  app.listen(port, "127.0.0.1", () => console.log(`mailroom on http://127.0.0.1:${port}/mail`))
}
