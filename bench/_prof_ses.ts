import type { AddressInfo } from "node:net"
import { SESv2Client, SendEmailCommand } from "@aws-sdk/client-sesv2"
import { Mailer, Mailroom, ObjectStore, Organizations } from "@mailroom/core"
import { SesEmailProvider } from "@mailroom/ses"
import emulatorModule from "aws-ses-v2-local"
import { Effect, Layer, ManagedRuntime } from "effect"

const startEmulator: typeof emulatorModule.default =
  typeof emulatorModule === "function" ? emulatorModule : emulatorModule.default
const credentials = { accessKeyId: "AKIDEMULATOR", secretAccessKey: "emulator-secret-key" }
const emulator = await startEmulator({ host: "127.0.0.1", port: 0 })
const endpoint = `http://127.0.0.1:${(emulator.address() as AddressInfo).port}`
const layer = Mailroom.layer({
  provider: SesEmailProvider.layer({ region: "us-east-1", endpoint, ...credentials }),
  store: Layer.succeed(ObjectStore.ObjectStore, ObjectStore.makeMemory()),
  organizations: Organizations.layerStatic({
    serviceDomain: "mailroom.test",
    organizations: [{ id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"], apiKeys: ["mr_bench"] }]
  })
})
const runtime = ManagedRuntime.make(layer)
const mailer = await runtime.runPromise(Effect.service(Mailer.Mailer))
const client = new SESv2Client({ region: "us-east-1", endpoint, credentials, maxAttempts: 1 })
const request = {
  from: "billing@acme.example",
  from_name: "Acme Billing",
  to: ["alice@example.com", "bob@example.com"],
  subject: "Your invoice",
  body: { text: "See attached.", html: "<p>See attached.</p>" }
}
const input = {
  FromEmailAddress: '"Acme Billing" <billing@acme.example>',
  Destination: { ToAddresses: request.to },
  Content: {
    Simple: {
      Subject: { Data: request.subject, Charset: "UTF-8" },
      Body: { Text: { Data: request.body.text, Charset: "UTF-8" }, Html: { Data: request.body.html, Charset: "UTF-8" } }
    }
  },
  EmailTags: [{ Name: "mailroom-org", Value: "org_acme" }]
}
const acme = { orgId: "org_acme", slug: "acme" }
const clear = async () => void (await fetch(`${endpoint}/clear-store`, { method: "POST" })).arrayBuffer()
const time = async (name: string, f: () => Promise<unknown>) => {
  await clear()
  const t = performance.now()
  for (let i = 0; i < 300; i++) await f()
  console.log(name, ((performance.now() - t) / 300).toFixed(3), "ms")
}
for (let r = 0; r < 4; r++) {
  await time("sdk", () => client.send(new SendEmailCommand(input)))
  await time("mailer", () => runtime.runPromise(mailer.send(acme, request)))
}
await runtime.dispose()
client.destroy()
emulator.closeAllConnections()
emulator.close()
