// The application's own tests, with vitest: MailroomTest.make() stands in for the production client,
// and its inbox hands each test the mail the sign-up sent, whose link the test then follows.
import { MailroomTest } from "@mailroom/core/testing"
import { afterAll, expect, test } from "vitest"
import { makeSignUp } from "../signup.js"

const mailroom = MailroomTest.make({ domains: ["app.example"] })
const app = makeSignUp(mailroom)
afterAll(() => mailroom.dispose())

test("sign-up mails a link that confirms the address", async () => {
  await app.signUp("alice@example.com")
  const mail = await mailroom.awaitEmail({ to: "alice@example.com", subject: "confirm" })
  const [link] = mail.links
  expect(link?.text).toBe("Confirm your address")
  expect(app.confirm(link?.url ?? "")).toBe("alice@example.com")
})

test("a bounced address is suppressed: the next sign-up to it is refused", async () => {
  await app.signUp("bounced+carol@simulator.mailroom.test")
  await expect(app.signUp("bounced+carol@simulator.mailroom.test")).rejects.toThrow(/suppression list/)
})
