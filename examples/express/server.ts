// mailroom's API at the root of an Express app that parses JSON bodies for its own routes first:
// mailroom uses the parsed body, and hands every request that is not its own on to the app (next).
import { Mailroom, Organizations } from "@mailroom/core"
import { MailroomHandler } from "@mailroom/http"
import { DiskObjectStore, OutboxEmailProvider } from "@mailroom/local"
import express from "express"

export interface AppOptions {
  /** Where uploads and the outbox's .eml files go. */
  readonly dir: string
  /** The address clients reach this app at: upload and download URLs point at it. */
  readonly publicUrl: string
}

export const makeApp = ({ dir, publicUrl }: AppOptions) => {
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
    })
  )
  const app = express()
  app.use(express.json())
  app.use(mailroom.node) // its routes, its signed upload URLs; anything else goes on to the routes below
  app.get("/health", (_req, res) => {
    res.json({ ok: true })
  })
  return { app, mailroom }
}

if (import.meta.main) {
  const port = Number(process.env.PORT ?? 3000)
  const { app, mailroom } = makeApp({ dir: ".mailroom", publicUrl: `http://127.0.0.1:${port}` })
  await mailroom.ready // a broken configuration stops here, naming the setting
  app.listen(port, "127.0.0.1", () => console.log(`mailroom on http://127.0.0.1:${port}`))
}
