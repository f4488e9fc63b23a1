// Send overhead (issue 18): `Mailer.send` through the SES adapter, in process and through
// @mailroom/http's Node handler on node:http, against the plain `SESv2Client.send` making the same
// SendEmail call, all against one SES emulator (aws-ses-v2-local) in this process, rounds interleaved.
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { SESv2Client, SendEmailCommand, type SendEmailCommandInput } from "@aws-sdk/client-sesv2"
import { Mailer, Mailroom, ObjectStore, Organizations } from "@mailroom/core"
import { MailroomHandler } from "@mailroom/http"
import { SesEmailProvider } from "@mailroom/ses"
import emulatorModule from "aws-ses-v2-local"
import { Effect, Layer, ManagedRuntime } from "effect"
import { compare, ratioRows } from "./compare.ts"

const startEmulator: typeof emulatorModule.default =
  typeof emulatorModule === "function" ? emulatorModule : emulatorModule.default

const credentials = { accessKeyId: "AKIDEMULATOR", secretAccessKey: "emulator-secret-key" }
const attachmentBytes = new Uint8Array(100 * 1024).fill(7)

export const run = async (): Promise<ReadonlyArray<object>> => {
  const emulator = await startEmulator({ host: "127.0.0.1", port: 0 })
  const endpoint = `http://127.0.0.1:${(emulator.address() as AddressInfo).port}`
  const store = ObjectStore.makeMemory()
  const layer = Mailroom.layer({
    provider: SesEmailProvider.layer({ region: "us-east-1", endpoint, ...credentials }),
    store: Layer.succeed(ObjectStore.ObjectStore, store),
    organizations: Organizations.layerStatic({
      serviceDomain: "mailroom.test",
      organizations: [{ id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"], apiKeys: ["mr_bench"] }]
    })
  })
  const runtime = ManagedRuntime.make(layer)
  const mailer = await runtime.runPromise(Effect.service(Mailer.Mailer))
  const key = "attachments/org_acme/1767225600000-report.pdf"
  await Effect.runPromise(store.put(key, attachmentBytes, "application/pdf"))

  const handler = MailroomHandler.fromLayer(layer)
  await handler.ready
  const server = createServer(handler.node)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const serverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

  // The same client the adapter builds: one attempt, the emulator's endpoint.
  const client = new SESv2Client({ region: "us-east-1", endpoint, credentials, maxAttempts: 1 })
  const acme = { orgId: "org_acme", slug: "acme" }
  const request = {
    from: "billing@acme.example",
    from_name: "Acme Billing",
    to: ["alice@example.com", "bob@example.com"],
    subject: "Your invoice",
    body: { text: "See attached.", html: "<p>See attached.</p>" }
  }
  const withAttachment = { ...request, attachments: [{ filename: "report.pdf", key }] }
  // What the adapter sends for `request`, written out as a caller of the SDK would.
  const input = (attachments: boolean): SendEmailCommandInput => ({
    FromEmailAddress: '"Acme Billing" <billing@acme.example>',
    Destination: { ToAddresses: request.to },
    Content: {
      Simple: {
        Subject: { Data: request.subject, Charset: "UTF-8" },
        Body: {
          Text: { Data: request.body.text, Charset: "UTF-8" },
          Html: { Data: request.body.html, Charset: "UTF-8" }
        },
        ...(attachments
          ? {
              Attachments: [
                {
                  FileName: "report.pdf",
                  RawContent: attachmentBytes,
                  ContentType: "application/pdf",
                  ContentDisposition: "ATTACHMENT",
                  ContentTransferEncoding: "BASE64"
                }
              ]
            }
          : {})
      }
    },
    EmailTags: [{ Name: "mailroom-org", Value: "org_acme" }]
  })
  const post = async (body: string) => {
    const response = await fetch(`${serverUrl}/emails`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": "mr_bench" },
      body
    })
    await response.arrayBuffer()
    if (response.status !== 201) throw new Error(`POST /emails answered ${response.status}`)
  }
  // The emulator keeps every message; emptied between batches so its memory does not grow.
  const between = async () => void (await fetch(`${endpoint}/clear-store`, { method: "POST" })).arrayBuffer()

  const rows: Array<object> = []
  try {
    for (const [label, attached] of [
      ["no attachment", false],
      ["one 100 KiB attachment", true]
    ] as const) {
      const command = () => new SendEmailCommand(input(attached))
      const body = JSON.stringify(attached ? withAttachment : request)
      const inProcess = [
        { name: `SESv2Client.send, ${label}`, run: () => client.send(command()) },
        {
          name: `Mailer.send (SES adapter), ${label}`,
          run: () => runtime.runPromise(mailer.send(acme, attached ? withAttachment : request))
        }
      ]
      rows.push(
        ...ratioRows(await compare(inProcess, { rounds: 5, perRound: 200, between }), inProcess, [undefined, 1.1])
      )
      const overHttp = [
        { name: `SESv2Client.send, ${label}`, run: () => client.send(command()) },
        { name: `POST /emails (@mailroom/http on node:http), ${label}`, run: () => post(body) }
      ]
      rows.push(
        ...ratioRows(await compare(overHttp, { rounds: 5, perRound: 200, between }), overHttp, [undefined, 1.3])
      )
    }
  } finally {
    client.destroy()
    await new Promise<void>((resolve) => server.close(() => resolve()))
    await handler.dispose()
    await runtime.dispose()
    emulator.closeAllConnections()
    await new Promise<void>((resolve) => emulator.close(() => resolve()))
  }
  return rows
}
