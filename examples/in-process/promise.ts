// Sending with mailroom's Promise client, for backends that do not use Effect.
import { EmailProvider, Mailroom, MailroomError, ObjectStore, Organizations } from "@mailroom/core"

export const mailroom = Mailroom.make({
  provider: EmailProvider.layerMemory(),
  store: ObjectStore.layerMemory(),
  organizations: Organizations.layerStatic({
    serviceDomain: "mailroom.test",
    organizations: [{ id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"] }]
  })
})

export const main = async () => {
  const { response } = await mailroom.send(
    { orgId: "org_acme" },
    { from: "hello@acme.example", to: ["alice@example.com"], subject: "Welcome", body: { text: "Hi Alice" } },
    { idempotencyKey: "welcome-alice" }
  )
  try {
    await mailroom.send({ orgId: "org_acme" }, { from: "x", to: [], subject: "", body: {} })
  } catch (error) {
    if (MailroomError.isMailroomError(error) && error._tag === "ValidationError")
      return { response, errors: error.errors }
    throw error
  }
  throw new Error("the invalid request was accepted")
}

if (import.meta.main) {
  console.log(await main())
  await mailroom.dispose()
}
