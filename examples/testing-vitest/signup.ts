// A tiny sign-up flow, the code under test: it mails a confirmation link, and confirms the address
// whose link is followed. Written once against mailroom's Promise client and once as Effect code.
import { Mailer, type Mailroom, Organizations } from "@mailroom/core"
import { Effect } from "effect"

const confirmation = (baseUrl: string, token: string) => ({
  from: "welcome@app.example",
  subject: "Confirm your address",
  body: {
    html: `<p>Welcome! <a href="${baseUrl}/confirm?token=${token}">Confirm your address</a></p>`,
    text: `Welcome! Confirm your address: ${baseUrl}/confirm?token=${token}`
  }
})

/** The flow over the Promise client: production passes `Mailroom.make(...)`, tests `MailroomTest.make()`. */
export const makeSignUp = (mailroom: Mailroom.Client, baseUrl = "https://app.example") => {
  const pending = new Map<string, string>()
  return {
    signUp: async (email: string) => {
      const token = crypto.randomUUID()
      pending.set(token, email)
      await mailroom.send({ ...confirmation(baseUrl, token), to: [email] })
    },
    /** The address the link confirms, or undefined for a link this app did not send. */
    confirm: (link: string) => {
      const token = new URL(link).searchParams.get("token") ?? ""
      const email = pending.get(token)
      pending.delete(token)
      return email
    }
  }
}

/** The same mail as Effect code, for the application's one organisation. */
export const signUp = (email: string, token: string) =>
  Effect.gen(function* () {
    const organizations = yield* Organizations.Organizations
    const mailer = yield* Mailer.Mailer
    const app = organizations.sole
    if (app === undefined) return yield* Effect.die("the application sends for one organisation")
    return yield* mailer.send(app, { ...confirmation("https://app.example", token), to: [email] })
  })
