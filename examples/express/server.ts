// mailroom's API at the root of an Express app, mounted before the app's express.json(): mailroom
// reads its own bodies (uploads stay byte for byte) and hands every other request on to the app.
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
  // Before the body parsers: a parser first would take the bytes of a JSON upload (and answer one over
  // its 100 kB limit with Express's HTML error page). Anything not mailroom's goes on to the routes below.
  app.use(mailroom.node)
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
  app.listen(port, "127.0.0.1", () => console.log(`mailroom on http://127.0.0.1:${port}`))
}
