// mailroom on AWS: SES sends, S3 keeps the attachments, both configured from the environment
// (AWS_REGION, MAILROOM_BUCKET; credentials from the SDK's default chain unless AWS_ACCESS_KEY_ID and
// AWS_SECRET_ACCESS_KEY are set; S3_ENDPOINT and SES_ENDPOINT for S3-compatible stores or local peers).
import { createServer } from "node:http"
import { Mailroom, Organizations } from "@mailroom/core"
import { MailroomHandler } from "@mailroom/http"
import { S3ObjectStore } from "@mailroom/s3"
import { SesEmailProvider } from "@mailroom/ses"
import { Config } from "effect"

const region = Config.String("AWS_REGION")

export const layer = Mailroom.layer({
  provider: SesEmailProvider.layerConfig({
    region,
    endpoint: Config.String("SES_ENDPOINT").pipe(Config.withDefault(undefined))
  }),
  store: S3ObjectStore.layerConfig({
    bucket: Config.String("MAILROOM_BUCKET"),
    region,
    endpoint: Config.String("S3_ENDPOINT").pipe(Config.withDefault(undefined)),
    forcePathStyle: Config.Boolean("S3_FORCE_PATH_STYLE").pipe(Config.withDefault(false))
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

export const start = (port: number) => {
  const mailroom = MailroomHandler.fromLayer(layer)
  const server = createServer(mailroom.node)
  // A missing variable rejects `ready`, naming it, and the server never listens.
  const listening = mailroom.ready.then(() => new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve)))
  return { server, mailroom, listening }
}

if (import.meta.main) {
  const { listening } = start(Number(process.env.PORT ?? 3000))
  await listening
  console.log(`mailroom (SES + S3) on http://127.0.0.1:${process.env.PORT ?? 3000}`)
}
