// The `mailroom` command delivering two organisations' events while one organisation's receiver is
// dead (it takes each request and never answers): the other organisation's events are not held up.
import { writeFile } from "node:fs/promises"
import { join } from "node:path"
import type { MailEvent } from "@mailroom/core"
import { startWebhookReceiver, type WebhookReceiver } from "@mailroom/core/testing"
import { type TempDir, tempDir } from "@mailroom/test-support"
import { Webhook } from "standardwebhooks"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { type ServerProcess, startServer } from "./support/serverProcess.js"

const acmeSecret = `whsec_${Buffer.from("acme-webhook-signing-key-32bytes").toString("base64")}`
const globexSecret = `whsec_${Buffer.from("globex-webhook-signing-key-32byt").toString("base64")}`
// Each attempt to the dead receiver holds its worker this long: far beyond what the test waits.
const timeoutSeconds = 120
const acmeEvents = 12

const send = (base: string, key: string, from: string, to: string) =>
  fetch(`${base}/emails`, {
    method: "POST",
    headers: { "x-api-key": key, "content-type": "application/json" },
    body: JSON.stringify({ from, to: [to], subject: "Hi", body: { text: "Hi" } })
  })

describe("one organisation's dead webhook receiver", () => {
  let temp: TempDir
  let acme: WebhookReceiver
  let globex: WebhookReceiver
  let server: ServerProcess
  beforeAll(async () => {
    temp = await tempDir("webhook-isolation")
    acme = await startWebhookReceiver({ statuses: Array.from({ length: acmeEvents }, () => "hang" as const) })
    globex = await startWebhookReceiver()
    const path = join(temp.path, "mailroom.config.json")
    await writeFile(
      path,
      JSON.stringify({
        serviceDomain: "mailroom.test",
        organizations: [
          { id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"], apiKeys: ["mr_test_acme"] },
          { id: "org_globex", slug: "globex", verifiedDomains: ["globex.example"], apiKeys: ["mr_test_globex"] }
        ],
        storage: { kind: "local", dir: "storage", signingSecret: "webhook-isolation-secret" },
        provider: { kind: "outbox", dir: "outbox" },
        events: {
          webhooks: [
            { organization: "org_acme", url: acme.url, secret: acmeSecret },
            { organization: "org_globex", url: globex.url, secret: globexSecret }
          ],
          queue: { kind: "local", dir: "events" },
          timeout: `${timeoutSeconds} seconds`
        }
      })
    )
    server = await startServer(path)
  })
  afterAll(async () => {
    await server?.stop()
    await acme?.close()
    await globex?.close()
    await temp?.remove()
  })

  it("does not hold up another organisation's events", async () => {
    for (let i = 0; i < acmeEvents; i++) {
      const sent = await send(server.url, "mr_test_acme", "app@acme.example", `user${i}@example.com`)
      assert.strictEqual(sent.status, 201, await sent.text())
    }
    // Every worker the server has for webhooks may now be waiting on acme's receiver.
    await acme.waitFor(4, 30_000)
    const sent = await send(server.url, "mr_test_globex", "app@globex.example", "bob@example.com")
    const answer = (await sent.json()) as { message_id: string }
    assert.strictEqual(sent.status, 201, JSON.stringify(answer))
    const messageId = answer.message_id
    // Held up behind acme, it would arrive only once acme's attempts timed out (minutes from now).
    const [request] = await globex.waitFor(1, 30_000)
    assert.isDefined(request)
    const event = new Webhook(globexSecret).verify(request.body, request.headers) as MailEvent.MailEvent
    assert.deepStrictEqual(
      [event.type, event.organization_id, event.message_id],
      ["delivered", "org_globex", messageId]
    )
  }, 90_000)
})
