// The AWS wiring against the local peers of the adapters' own tests: s3rver (which checks SigV4
// signatures) for S3, aws-ses-v2-local for SES, configured only through the environment.
import type { AddressInfo } from "node:net"
import { Effect, Exit, ManagedRuntime, Scope } from "effect"
import { afterAll, assert, beforeAll, it } from "vitest"
import * as S3rver from "../../../packages/s3/test/s3rver.js"
import { Emulator, EmulatorLive, stored } from "../../../packages/ses/test/emulator.js"

const ses = ManagedRuntime.make(EmulatorLive)
const scope = Effect.runSync(Scope.make())
let url = ""
let stop = async () => {}

beforeAll(async () => {
  const s3 = await Effect.runPromise(Scope.provide(scope)(S3rver.start()))
  const { url: sesUrl } = await ses.runPromise(Emulator)
  Object.assign(process.env, {
    AWS_REGION: S3rver.region,
    MAILROOM_BUCKET: S3rver.bucket,
    S3_ENDPOINT: s3.endpoint,
    S3_FORCE_PATH_STYLE: "true",
    SES_ENDPOINT: sesUrl,
    // s3rver's one account; the SES emulator takes any.
    AWS_ACCESS_KEY_ID: S3rver.credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: S3rver.credentials.secretAccessKey
  })
  const { start } = await import("../server.js")
  const { server, mailroom, listening } = start(0)
  await listening
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  stop = async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()))
    await mailroom.dispose()
  }
})
afterAll(async () => {
  await stop()
  await ses.dispose()
  await Effect.runPromise(Scope.close(scope, Exit.void))
})

it("presigns to S3, sends through SES with the attachment, from environment configuration", async () => {
  const headers = { "x-api-key": "mr_live_acme_example", "content-type": "application/json" }
  const presign = await fetch(`${url}/attachments/presign`, {
    method: "POST",
    headers,
    body: JSON.stringify({ filename: "invoice.pdf", content_type: "application/pdf" })
  })
  assert.strictEqual(presign.status, 201)
  const { url: upload, key } = (await presign.json()) as { url: string; key: string }
  const put = await fetch(upload, {
    method: "PUT",
    headers: { "content-type": "application/pdf" },
    body: "%PDF-1.7 invoice"
  })
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
  const email = await ses.runPromise(stored(provider_message_id))
  assert.strictEqual(Buffer.from(email.attachments[0]?.content ?? "", "base64").toString(), "%PDF-1.7 invoice")
})
