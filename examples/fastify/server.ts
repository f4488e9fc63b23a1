// mailroom's API in a Fastify app: one plugin, registered under /mail. Its routes, the signed upload
// URLs and /openapi.json follow the prefix, and its scope leaves bodies unparsed for mailroom alone.
import { Mailroom, Organizations } from "@mailroom/core"
import { MailroomFastify } from "@mailroom/http/fastify"
import { DiskObjectStore, OutboxEmailProvider } from "@mailroom/local"
import Fastify from "fastify"

export interface AppOptions {
  /** Where uploads and the outbox's .eml files go. */
  readonly dir: string
  /** The origin clients reach this app at: upload URLs and /openapi.json follow it with the prefix. */
  readonly publicUrl: string
  /** Where mailroom is registered. Default "/mail"; "" for the root of the app. */
  readonly prefix?: string
}

export const makeApp = async ({ dir, publicUrl, prefix = "/mail" }: AppOptions) => {
  const app = Fastify()
  app.get("/health", async () => ({ ok: true }))
  app.post("/echo", async (request) => ({ received: request.body })) // the app's routes keep Fastify's parser
  // The plugin builds the layer, fails registration (and so listen) naming a bad setting, and
  // releases it when the app closes.
  await app.register(MailroomFastify.plugin, {
    prefix,
    layer: Mailroom.layer({
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
    publicUrl // the handler's options go beside the layer: here, /openapi.json's servers
  })
  return app
}

if (import.meta.main) {
  const port = Number(process.env.PORT ?? 3000)
  const app = await makeApp({ dir: ".mailroom", publicUrl: `http://127.0.0.1:${port}` })
  await app.listen({ port, host: "127.0.0.1" })
  console.log(`mailroom on http://127.0.0.1:${port}/mail`)
}
