// The SMTP example against the strict peer of @mailroom/smtp's own tests (smtp-server), configured only
// through the environment: the message arrives with its attachment, and its DKIM signature verifies.
import { afterAll, assert, beforeAll, it } from "vitest"
import { dkimTestKey, parseReceived, verifyDkim } from "../../../packages/smtp/test/support/received.js"
import * as SmtpPeer from "../../../packages/smtp/test/support/SmtpPeer.js"

const key = dkimTestKey()
let peer: SmtpPeer.Peer
let example: typeof import("../send.js")

beforeAll(async () => {
  peer = await SmtpPeer.start({ hideSTARTTLS: true })
  Object.assign(process.env, {
    SMTP_HOST: "127.0.0.1",
    SMTP_PORT: String(peer.port),
    DKIM_DOMAIN: key.domainName,
    DKIM_SELECTOR: key.keySelector,
    DKIM_PRIVATE_KEY: key.privateKey
  })
  example = await import("../send.js")
})
afterAll(async () => {
  await example?.mailroom.dispose()
  await peer?.close()
})

it("sends through the relay named by the environment, signed with its DKIM key", async () => {
  const { response } = await example.sendReceipt("alice@example.com")
  // The record names the Message-ID the SMTP provider wrote, which the relay received the message under.
  const record = await example.mailroom.getEmail(response.message_id)
  const received = await peer.byMessageId(record.provider_message_id ?? "")
  const parsed = await parseReceived(received)
  assert.strictEqual(parsed.subject, "Your receipt")
  assert.strictEqual(parsed.from?.value[0]?.name, "Acme Billing")
  assert.strictEqual(parsed.attachments[0]?.content.toString("utf8"), "Order 42: 12.50 EUR")
  const [signature] = await verifyDkim(received.raw, key)
  assert.strictEqual(signature?.result, "pass")
})
