// mailroom on Resend: the API on node:http sends through Resend, attachments live on the local disk, and
// Resend's signed webhooks come in at POST /webhooks/resend. Configured from the environment (below).
import { createServer } from "node:http"
import { Mailroom, Organizations } from "@mailroom/core"
import { MailroomHandler } from "@mailroom/http"
import { DiskObjectStore } from "@mailroom/local"
import { ResendEmailProvider, ResendEventSource } from "@mailroom/resend"
import { Config, Effect } from "effect"

export const layer = Mailroom.layer({
  // RESEND_API_KEY: a sending-only key is enough. RESEND_BASE_URL: only for a proxy.
  provider: ResendEmailProvider.layerConfig({
    apiKey: Config.Redacted("RESEND_API_KEY"),
    baseUrl: Config.String("RESEND_BASE_URL").pipe(Config.withDefault(undefined))
  }),
  // PUBLIC_URL: where clients reach this server, the origin of upload and download URLs.
  store: DiskObjectStore.layerConfig({
    dir: Config.String("STORAGE_DIR").pipe(Config.withDefault(".mailroom/storage")),
    publicUrl: Config.String("PUBLIC_URL"),
    signingSecret: Config.Redacted("STORAGE_SECRET")
  }),
  organizations: Organizations.layerStatic({
    serviceDomain: "mail.example.com",
    // Keys as SHA-256 digests (printf %s "$KEY" | sha256sum): the plain key lives only with the client.
    organizations: [
      {
        id: "org_acme",
        slug: "acme",
        verifiedDomains: ["acme.example"],
        apiKeys: ["sha256:9866a93ca4cefe46c5ac19bccb163f88d86c2183fd42550e68e7a0a91e7517f1"]
      }
    ]
  })
})

export const start = async (port: number) => {
  // RESEND_WEBHOOK_SECRET: the signing secret (whsec_...) of the webhook created in Resend.
  const webhook = await Effect.runPromise(
    Effect.flatMap(Config.Redacted("RESEND_WEBHOOK_SECRET"), (secret) => ResendEventSource.make({ secret }))
  )
  const mailroom = MailroomHandler.fromLayer(layer, { eventSources: [webhook] })
  const server = createServer(mailroom.node)
  // A missing variable rejects `ready`, naming it, and the server never listens.
  await mailroom.ready
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve))
  return { server, mailroom }
}

if (import.meta.main) {
  const port = Number(process.env.PORT ?? 3000)
  await start(port)
  console.log(`mailroom (Resend) on http://127.0.0.1:${port}`)
}
