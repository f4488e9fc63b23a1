// The same test for Effect code, with @effect/vitest: MailroomTest.layer() provides every service the
// code needs, on memory, and the inbox it asserts on.
import { expect, layer } from "@effect/vitest"
import { links, MailroomTest } from "@mailroom/core/testing"
import { Effect } from "effect"
import { signUp } from "../signup.js"

layer(MailroomTest.layer({ domains: ["app.example"] }))("sign-up, as Effect code", (it) => {
  it.effect("mails a link with the token", () =>
    Effect.gen(function* () {
      const { response } = yield* signUp("bob@example.com", "token-1")
      const mail = yield* MailroomTest.awaitEmail({ to: "bob@example.com" })
      expect(mail.id).toBe(response.message_id)
      expect(links(mail).map((l) => l.url)).toEqual([
        "https://app.example/confirm?token=token-1",
        "https://app.example/confirm?token=token-1"
      ])
    })
  )
})
