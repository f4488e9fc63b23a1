// mailroom's API as a fetch handler inside a Hono app, under /mail (the same handler serves Next.js
// route handlers, Bun and Deno). The whole URL reaches the handler: `basePath` is the one setting.
import { serve } from "@hono/node-server"
import { Mailroom, Organizations } from "@mailroom/core"
import { MailroomHandler } from "@mailroom/http"
import { DiskObjectStore, OutboxEmailProvider } from "@mailroom/local"
import { Hono } from "hono"

export interface AppOptions {
  /** Where uploads and the outbox's .eml files go. */
  readonly dir: string
  /** The origin clients reach this app at: upload and download URLs point at it, under `basePath`. */
  readonly publicUrl: string
  /** Where mailroom is served. Default "/mail"; "" for the root of the app. */
  readonly basePath?: string
}

export const makeApp = ({ dir, publicUrl, basePath = "/mail" }: AppOptions) => {
  const mailroom = MailroomHandler.fromLayer(
    Mailroom.layer({
      provider: OutboxEmailProvider.layer({ dir: `${dir}/outbox` }),
      store: DiskObjectStore.layer({
        dir: `${dir}/storage`,
        publicUrl,
        signingSecret: process.env.STORAGE_SECRET ?? "change-me"
      }),
      organizations: Organizations.single({
        domains: ["app.example"],
        apiKeys: [process.env.MAILROOM_API_KEY ?? "mr_test_app"]
      })
    }),
    // The v1 variant follows basePath; signed URLs and /openapi.json carry it.
    { basePath, publicUrl }
  )
  const app = new Hono()
  app.get("/health", (c) => c.json({ ok: true }))
  // Not app.mount(): it takes the path off the URL without saying so, and the links would lose it.
  app.all(`${basePath}/*`, (c) => mailroom.web(c.req.raw))
  return { app, mailroom }
}

if (import.meta.main) {
  const port = Number(process.env.PORT ?? 3000)
  const { app, mailroom } = makeApp({ dir: ".mailroom", publicUrl: `http://127.0.0.1:${port}` })
  await mailroom.ready // a broken configuration stops here, naming the setting
  serve({ fetch: app.fetch, port, hostname: "127.0.0.1" })
  console.log(`mailroom on http://127.0.0.1:${port}/mail`)
}
