// The Resend wiring against the stand-in the adapter's own tests use, configured only through the
// environment: a presigned upload sent as an attachment, then a Resend webhook signed as Svix signs it.
import { randomBytes } from "node:crypto"
import { freePort, type TempDir, tempDir } from "@mailroom/test-support"
import { Webhook } from "standardwebhooks"
import { afterAll, assert, beforeAll, it } from "vitest"
import * as ResendStandIn from "../../../packages/resend/test/ResendStandIn.js"

const webhookSecret = `whsec_${randomBytes(24).toString("base64")}`
let standIn: ResendStandIn.StandIn
let storage: TempDir
let url = ""
let stop = async () => {}

beforeAll(async () => {
  standIn = await ResendStandIn.start({ domains: ["acme.example"] })
  storage = await tempDir("example-resend")
  const port = await freePort()
  url = `http://127.0.0.1:${port}`
  Object.assign(process.env, {
    RESEND_API_KEY: standIn.apiKey,
    RESEND_BASE_URL: standIn.url,
    RESEND_WEBHOOK_SECRET: webhookSecret,
    PUBLIC_URL: url,
    STORAGE_DIR: storage.path,
    STORAGE_SECRET: "example-storage-secret"
  })
  const { start } = await import("../server.js")
  const { server, mailroom } = await start(port)
  stop = async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()))
    await mailroom.dispose()
  }
})
afterAll(async () => {
  await stop()
  await standIn?.close()
  await storage?.remove()
})

const headers = { "x-api-key": "mr_live_acme_example", "content-type": "application/json" }

it("uploads to the disk store and sends through Resend with the attachment, from environment configuration", async () => {
  const presign = await fetch(`${url}/attachments/presign`, {
    method: "POST",
    headers,
    body: JSON.stringify({ filename: "invoice.pdf", content_type: "application/pdf" })
  })
  assert.strictEqual(presign.status, 201)
  const { url: upload, key } = (await presign.json()) as { url: string; key: string }
  const put = await fetch(upload, { method: "PUT", headers: { "content-type": "application/pdf" }, body: "%PDF-1.7" })
  assert.strictEqual(put.status, 200, await put.text())
  const send = await fetch(`${url}/emails`, {
    method: "POST",
    headers,
    body: JSON.stringify({
      from: "billing@acme.example",
      to: ["alice@example.com"],
      subject: "Your invoice",
      body: { text: "Attached." },
      attachments: [{ filename: "invoice.pdf", key }]
    })
  })
  assert.strictEqual(send.status, 201)
  const { message_id } = (await send.json()) as { message_id: string }
  // The record names the id the provider gave the message, which it holds the message under.
  const record = await fetch(`${url}/emails/${message_id}`, { headers })
  const { provider_message_id } = (await record.json()) as { provider_message_id: string }
  const received = standIn.received(provider_message_id)
  assert.strictEqual(received.subject, "Your invoice")
  assert.strictEqual(Buffer.from(received.attachments[0]?.content ?? []).toString(), "%PDF-1.7")
})

it("takes Resend's webhook at /webhooks/resend when signed with the secret, and refuses it otherwise", async () => {
  const body = JSON.stringify({
    type: "email.delivered",
    created_at: new Date().toISOString(),
    data: {
      email_id: "4ef9a417-02e9-4d39-ad75-9611e0fcc33c",
      to: ["alice@example.com"],
      tags: { "mailroom-org": "org_acme" }
    }
  })
  const post = (secret: string) => {
    const now = new Date()
    return fetch(`${url}/webhooks/resend`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "svix-id": "msg_example",
        "svix-timestamp": String(Math.floor(now.getTime() / 1000)),
        "svix-signature": new Webhook(secret).sign("msg_example", now, body)
      },
      body
    })
  }
  const accepted = await post(webhookSecret)
  assert.deepStrictEqual([accepted.status, await accepted.json()], [200, { events: 1 }])
  assert.strictEqual((await post(`whsec_${randomBytes(24).toString("base64")}`)).status, 401)
})
