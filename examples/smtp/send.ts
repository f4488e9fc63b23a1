// mailroom in-process on your own SMTP relay (Postfix, a company MTA, SES or Postmark over SMTP), signing
// every message with DKIM, configured from the environment: SMTP_HOST, SMTP_PORT (587), SMTP_SECURE
// (false: STARTTLS), SMTP_USER and SMTP_PASS when the relay wants a login, DKIM_DOMAIN, DKIM_SELECTOR and
// DKIM_PRIVATE_KEY (PEM) to sign.
import { Mailroom, ObjectStore, Organizations } from "@mailroom/core"
import { SmtpEmailProvider } from "@mailroom/smtp"
import { Config } from "effect"

const optional = <A>(config: Config.Config<A>) => config.pipe(Config.withDefault(undefined))

export const mailroom = Mailroom.make({
  provider: SmtpEmailProvider.layerConfig({
    host: Config.String("SMTP_HOST"),
    port: Config.Port("SMTP_PORT").pipe(Config.withDefault(587)),
    secure: Config.Boolean("SMTP_SECURE").pipe(Config.withDefault(false)),
    auth: optional(Config.all({ user: Config.String("SMTP_USER"), pass: Config.Redacted("SMTP_PASS") })),
    dkim: optional(
      Config.all({
        domainName: Config.String("DKIM_DOMAIN"),
        keySelector: Config.String("DKIM_SELECTOR"),
        privateKey: Config.Redacted("DKIM_PRIVATE_KEY")
      })
    )
  }),
  store: ObjectStore.layerMemory(),
  organizations: Organizations.layerStatic({
    serviceDomain: "mail.example.com",
    organizations: [{ id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"] }]
  })
})

/** One message to `to`; its `message_id` is the Message-ID the relay received (without the brackets). */
export const sendReceipt = (to: string) =>
  mailroom.send(
    { orgId: "org_acme" },
    {
      from: "billing@acme.example",
      from_name: "Acme Billing",
      to: [to],
      subject: "Your receipt",
      body: { text: "Thanks for your order.", html: "<p>Thanks for your order.</p>" },
      attachments: [{ filename: "receipt.txt", content: "Order 42: 12.50 EUR", content_type: "text/plain" }]
    }
  )

if (import.meta.main) {
  const { response } = await sendReceipt(process.argv[2] ?? "alice@example.com")
  console.log(`sent: ${response.message_id}`)
  await mailroom.dispose()
}
