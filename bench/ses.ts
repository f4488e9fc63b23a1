// Send overhead (issues 18 and 33): `Mailer.send` through the SES adapter in process, against the plain
// `SESv2Client.send` making the same SendEmail call (target ≤ 1.1x); and POST /emails through
// @mailroom/http's Node handler on node:http, against the floor any server reaches: a bare node:http
// handler that parses the body and makes the same SendEmail call (target ≤ 1.15x). All against one SES
// emulator (aws-ses-v2-local) in this process, rounds interleaved. POST /emails is sent as the SDK sends
// its own calls: node:http with a keep-alive Agent (50 sockets, the SDK's NodeHttpHandler defaults), so
// the ratio measures the server, not the client's HTTP stack.
import { randomUUID } from "node:crypto"
import { Agent, createServer, request as httpRequest } from "node:http"
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
  const emails = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/emails`)

  // The same client the adapter builds: one attempt, the emulator's endpoint.
  const client = new SESv2Client({ region: "us-east-1", endpoint, credentials, maxAttempts: 1 })
  // The floor: what a server adds at the least, reading the body, sending it and answering.
  const bare = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      const parsed = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { readonly attachments?: unknown }
      client.send(command(parsed.attachments !== undefined)).then(
        (output) => {
          const answer = JSON.stringify({ message_id: output.MessageId })
          res.writeHead(201, {
            "content-type": "application/json; charset=utf-8",
            "content-length": Buffer.byteLength(answer)
          })
          res.end(answer)
        },
        () => {
          res.writeHead(500)
          res.end()
        }
      )
    })
  })
  await new Promise<void>((resolve) => bare.listen(0, "127.0.0.1", resolve))
  const bareUrl = new URL(`http://127.0.0.1:${(bare.address() as AddressInfo).port}/emails`)
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
    // Both tags the adapter writes: the organisation, and the message's own id (a new one per send).
    EmailTags: [
      { Name: "mailroom-org", Value: "org_acme" },
      { Name: "mailroom-message", Value: randomUUID() }
    ]
  })
  const command = (attachments: boolean) => new SendEmailCommand(input(attachments))
  const agent = new Agent({ keepAlive: true, maxSockets: 50 })
  const post = (url: URL, body: string) =>
    new Promise<void>((resolve, reject) => {
      const request = httpRequest(
        url,
        {
          method: "POST",
          agent,
          headers: {
            "content-type": "application/json",
            "content-length": Buffer.byteLength(body),
            "x-api-key": "mr_bench"
          }
        },
        (response) => {
          response.on("data", () => undefined)
          response.on("end", () =>
            response.statusCode === 201
              ? resolve()
              : reject(new Error(`POST ${url.pathname} answered ${response.statusCode}`))
          )
          response.on("error", reject)
        }
      )
      request.on("error", reject)
      request.end(body)
    })
  // The emulator keeps every message; emptied between batches so its memory does not grow.
  const between = async () => void (await fetch(`${endpoint}/clear-store`, { method: "POST" })).arrayBuffer()

  // Many short rounds: on a shared machine the min of short batches is the one least touched by
  // other processes' load. Five warm-up rounds: the first comparison runs on a cold process.
  const rounds = { rounds: 15, perRound: 60, warmup: 5, between }
  const rows: Array<object> = []
  try {
    for (const [label, attached] of [
      ["no attachment", false],
      ["one 100 KiB attachment", true]
    ] as const) {
      const body = JSON.stringify(attached ? withAttachment : request)
      const inProcess = [
        { name: `SESv2Client.send, ${label}`, run: () => client.send(command(attached)) },
        {
          name: `Mailer.send (SES adapter), ${label}`,
          run: () => runtime.runPromise(mailer.send(acme, attached ? withAttachment : request))
        }
      ]
      rows.push(...ratioRows(await compare(inProcess, rounds), inProcess, [undefined, 1.1]))
      const overHttp = [
        { name: `the floor: bare node:http, JSON.parse + SESv2Client.send, ${label}`, run: () => post(bareUrl, body) },
        { name: `POST /emails (@mailroom/http on node:http), ${label}`, run: () => post(emails, body) }
      ]
      rows.push(...ratioRows(await compare(overHttp, rounds), overHttp, [undefined, 1.15]))
    }
  } finally {
    agent.destroy()
    client.destroy()
    await new Promise<void>((resolve) => server.close(() => resolve()))
    await new Promise<void>((resolve) => bare.close(() => resolve()))
    await handler.dispose()
    await runtime.dispose()
    emulator.closeAllConnections()
    await new Promise<void>((resolve) => emulator.close(() => resolve()))
  }
  return rows
}
