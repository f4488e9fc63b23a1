// Delivery events in process: each recipient's event of a send, handed to a Promise callback.
import { EmailProvider, type MailEvent, Mailroom, ObjectStore, Organizations } from "@mailroom/core"

export const mailroom = Mailroom.make({
  provider: EmailProvider.layerMemory(), // reports a `delivered` event per recipient, as the outbox does
  store: ObjectStore.layerMemory(),
  organizations: Organizations.layerStatic({
    serviceDomain: "mailroom.test",
    organizations: [{ id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"] }]
  })
})

export const main = async () => {
  const seen: Array<MailEvent.MailEvent> = []
  let bothSeen = () => {}
  const both = new Promise<void>((resolve) => {
    bothSeen = resolve
  })
  const stop = await mailroom.onEvent(
    (event) => {
      seen.push(event)
      if (seen.length === 2) bothSeen()
    },
    { organizationId: "org_acme" }
  )
  const { response } = await mailroom.send(
    { orgId: "org_acme" },
    { from: "hello@acme.example", to: ["alice@example.com", "bob@example.com"], subject: "Hi", body: { text: "Hi" } }
  )
  await both // one per recipient, just after the send returns
  await stop()
  return { messageId: response.message_id, events: seen.map((e) => [e.type, e.recipient, e.message_id]) }
}

if (import.meta.main) {
  console.log(await main())
  await mailroom.dispose()
}
