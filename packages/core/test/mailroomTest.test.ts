// MailroomTest, the one-line test setup of @mailroom/core/testing: the Effect layer and the Promise
// client send through the real services on memory, and their inbox answers awaitEmail, emailsTo,
// lastEmailTo and links as an application's tests would ask.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { Mailer, Messages, Organizations } from "../src/index.js"
import { EmailNotReceived, links, MailroomTest } from "../src/testing/index.js"

const signUp = (to: string) =>
  Effect.gen(function* () {
    const organizations = yield* Organizations.Organizations
    const mailer = yield* Mailer.Mailer
    const principal = organizations.sole
    if (principal === undefined) return yield* Effect.die("MailroomTest has one organisation")
    return yield* mailer.send(principal, {
      from: "hello@example.com",
      to: [to],
      subject: "Confirm your address",
      body: {
        html: '<p>Welcome! <a href="https://app.example/confirm?token=abc&amp;u=1">Confirm <b>now</b></a></p>',
        text: "Welcome! Confirm: https://app.example/confirm?token=abc&u=1."
      }
    })
  })

describe("MailroomTest.layer", () => {
  it.effect("one line gives the services and an inbox: awaitEmail, emailsTo, lastEmailTo, links", () =>
    Effect.gen(function* () {
      const { response } = yield* signUp("alice@example.com")
      const mail = yield* MailroomTest.awaitEmail({ to: "Alice@Example.com", subject: "confirm" })
      assert.strictEqual(mail.id, response.message_id)
      assert.deepStrictEqual(links(mail), [
        { url: "https://app.example/confirm?token=abc&u=1", text: "Confirm now", source: "html" },
        {
          url: "https://app.example/confirm?token=abc&u=1",
          text: "https://app.example/confirm?token=abc&u=1",
          source: "text"
        }
      ])
      yield* signUp("alice@example.com")
      const both = yield* MailroomTest.emailsTo("alice@example.com")
      assert.strictEqual(both.length, 2)
      assert.strictEqual((yield* MailroomTest.lastEmailTo("alice@example.com"))?.id, both[0]?.id)
      assert.isUndefined(yield* MailroomTest.lastEmailTo("bob@example.com"))
    }).pipe(Effect.provide(MailroomTest.layer()))
  )

  it.effect("a simulator address goes through the real pipeline: the record says bounced", () =>
    Effect.gen(function* () {
      const { response } = yield* signUp("bounced@simulator.mailroom.test")
      const organizations = yield* Organizations.Organizations
      const record = yield* Effect.flatMap(Messages.Messages, (m) =>
        m.get(organizations.sole ?? { orgId: "", slug: "" }, response.message_id)
      )
      assert.strictEqual(record.status, "bounced")
      assert.strictEqual((yield* MailroomTest.lastEmailTo("bounced@simulator.mailroom.test"))?.id, response.message_id)
    }).pipe(Effect.provide(MailroomTest.layer()))
  )

  it.live("awaitEmail waits for the next message, and fails saying what did not arrive", () =>
    Effect.gen(function* () {
      const waiting = yield* Effect.forkChild(MailroomTest.awaitEmail({ to: "carol@example.com", timeout: 5000 }))
      yield* signUp("dave@example.com")
      const { response } = yield* signUp("carol@example.com")
      assert.strictEqual((yield* Fiber.join(waiting)).id, response.message_id)
      const missing = yield* Effect.flip(
        MailroomTest.awaitEmail({ to: "erin@example.com", subject: "reset", timeout: 50 })
      )
      assert.instanceOf(missing, EmailNotReceived)
      assert.strictEqual(missing.message, 'no email to erin@example.com with "reset" in its subject within 50 ms')
    }).pipe(Effect.provide(MailroomTest.layer()))
  )
})

describe("MailroomTest.make", () => {
  it("the Promise client sends for its one organisation; the inbox answers as Promises", async () => {
    const mailroom = MailroomTest.make({ domains: ["app.example"] })
    const next = mailroom.awaitEmail({ to: "frank@example.com" })
    const { response } = await mailroom.send({
      from: "hi@app.example",
      to: ["frank@example.com"],
      subject: "Hi",
      body: { text: "Open https://app.example/welcome" }
    })
    const mail = await next
    assert.strictEqual(mail.id, response.message_id)
    assert.deepStrictEqual(
      links(mail).map((l) => l.url),
      ["https://app.example/welcome"]
    )
    assert.deepStrictEqual(
      (await mailroom.emailsTo("frank@example.com")).map((m) => m.id),
      [response.message_id]
    )
    await mailroom.clear()
    assert.deepStrictEqual(await mailroom.emailsTo("frank@example.com"), [])
    const missing = await mailroom.awaitEmail({ to: "frank@example.com", timeout: 20 }).then(
      () => assert.fail("a message arrived"),
      (error: unknown) => error
    )
    assert.instanceOf(missing, EmailNotReceived)
    assert.match((missing as EmailNotReceived).message, /^no email to frank@example.com within 20 ms$/)
    await mailroom.dispose()
  })
})

describe("links", () => {
  it("reads what a reader sees of each link, and ignores what only looks like one", () => {
    const mail = {
      links: [] as ReadonlyArray<never>
    }
    assert.deepStrictEqual(links(mail), [])
    const html =
      '<abbr title="x">a</abbr><A HREF=\'https://a.example/1\'>One &amp; <img src="x.png" alt="logo"></A>' +
      '<a class="b" href="https://a.example/2?x=1&amp;y=2" target="_blank">\n  Two\n</a><a name="anchor">no href</a>'
    const found = MailroomTest.makeInbox()
    found.record(
      "id",
      {
        from: { address: "a@example.com" },
        to: ["b@example.com"],
        cc: [],
        bcc: [],
        replyTo: [],
        subject: "s",
        html,
        text: "See http://a.example/3, or (https://a.example/4).",
        attachments: []
      },
      new Date(0)
    )
    assert.deepStrictEqual(links(found.emails[0] ?? mail), [
      { url: "https://a.example/1", text: "One & logo", source: "html" },
      { url: "https://a.example/2?x=1&y=2", text: "Two", source: "html" },
      { url: "http://a.example/3", text: "http://a.example/3", source: "text" },
      { url: "https://a.example/4", text: "https://a.example/4", source: "text" }
    ])
  })

  it("reads a hostile body in linear time", () => {
    const inbox = MailroomTest.makeInbox()
    const started = performance.now()
    inbox.record(
      "id",
      {
        from: { address: "a@example.com" },
        to: ["b@example.com"],
        cc: [],
        bcc: [],
        replyTo: [],
        subject: "s",
        html: `${"<a href=x>".repeat(50_000)}${"<a href=y>z</a>".repeat(50_000)}<a href="`,
        text: `http://${"a".repeat(200_000)}`,
        attachments: []
      },
      new Date(0)
    )
    assert.isBelow(performance.now() - started, 2000)
  })
})
