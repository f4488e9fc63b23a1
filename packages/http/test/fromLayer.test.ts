// fromLayer builds its layer at once: requests made before it is ready wait for it, and a layer that
// cannot be built rejects `ready` naming the setting. The wire contract stays the spec's.
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { EmailProvider, Mailroom, ObjectStore, Organizations } from "@mailroom/core"
import { Config, ConfigProvider, Effect, Layer } from "effect"
import { assert, it } from "vitest"
import { MailroomHandler } from "../src/index.js"
import { keys, makeWorld } from "./world.js"

const message = { from: "a@app.example", to: ["b@example.com"], subject: "Hi", body: { text: "Hi" } }

const appLayer = (organizations: Layer.Layer<Organizations.Organizations, Config.ConfigError>) =>
  Mailroom.layer({ provider: EmailProvider.layerMemory(), store: ObjectStore.layerMemory(), organizations })

it("a request made while the layer is still being built waits for it, then is served", async () => {
  const slow = Layer.effect(
    Organizations.Organizations,
    Effect.as(Effect.sleep("300 millis"), Organizations.makeSingle({ domains: ["app.example"], apiKeys: ["k_app"] }))
  )
  const mailroom = MailroomHandler.fromLayer(appLayer(slow))
  const answer = await mailroom.web(
    new Request("http://localhost/emails", {
      method: "POST",
      headers: { "x-api-key": "k_app", "content-type": "application/json" },
      body: JSON.stringify(message)
    })
  )
  assert.strictEqual(answer.status, 201)
  await mailroom.ready
  await mailroom.dispose()
})

it("a layer missing a variable rejects ready naming it; the server never listens", async () => {
  const organizations = Layer.effect(
    Organizations.Organizations,
    Effect.map(Config.String("MAILROOM_APP_DOMAIN"), (domain) => Organizations.makeSingle({ domains: [domain] }))
  ).pipe(Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({}))))
  const logged: Array<string> = []
  const mailroom = MailroomHandler.fromLayer(appLayer(organizations), { logError: (m) => logged.push(m) })
  const server = createServer(mailroom.node)
  const started = mailroom.ready.then(() => new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve)))
  const error = await started.then(
    () => assert.fail("started without MAILROOM_APP_DOMAIN"),
    (e: unknown) => e as Error
  )
  assert.match(error.message, /^mailroom could not start: .*MAILROOM_APP_DOMAIN/s)
  assert.isFalse(server.listening)
  // Whoever serves it anyway gets the operation's 500, at once.
  const answer = await mailroom.web(new Request("http://localhost/openapi.json"))
  assert.deepStrictEqual([answer.status, await answer.json()], [500, { message: "internal error" }])
  await mailroom.dispose()
})

it("the HTTP API refuses attachment content with the 400 it always gave: files go through storage", async () => {
  const world = makeWorld()
  const mailroom = MailroomHandler.fromLayer(world.layer)
  const server = createServer(mailroom.node)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  try {
    const answer = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/emails`, {
      method: "POST",
      headers: { "x-api-key": keys.acme, "content-type": "application/json" },
      body: JSON.stringify({
        from: "billing@acme.example",
        to: ["alice@example.com"],
        subject: "Hi",
        body: { text: "Hi" },
        attachments: [{ filename: "a.txt", content: "aGk=" }]
      })
    })
    assert.deepStrictEqual(
      [answer.status, await answer.json()],
      [400, { errors: ["attachments[0].content: is not a known field", "attachments[0].key: is required"] }]
    )
    assert.strictEqual(world.provider.sent.length, 0)
  } finally {
    server.close()
    await mailroom.dispose()
  }
})

it("dispose during a send waits for its answer, releases the layer after; a request meanwhile is a 503", async () => {
  const memory = EmailProvider.makeMemory()
  const order: Array<string> = []
  let called = () => {}
  const reached = new Promise<void>((resolve) => {
    called = resolve
  })
  let answer = () => {}
  const gate = new Promise<void>((resolve) => {
    answer = resolve
  })
  // A provider that holds each message until the test lets it answer, and says when it is released.
  const slow = Layer.effect(
    EmailProvider.EmailProvider,
    Effect.as(
      Effect.addFinalizer(() => Effect.sync(() => order.push("released"))),
      EmailProvider.EmailProvider.of({
        ...memory,
        send: (email) =>
          Effect.andThen(
            Effect.promise(() => {
              called()
              return gate
            }),
            Effect.tap(memory.send(email), () => Effect.sync(() => order.push("sent")))
          )
      })
    )
  )
  const organizations = Organizations.single({ domains: ["app.example"], apiKeys: ["k_app"] })
  const mailroom = MailroomHandler.fromLayer(
    Mailroom.layer({ provider: slow, store: ObjectStore.layerMemory(), organizations }),
    { logError: () => {} }
  )
  const server = createServer(mailroom.node)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const post = () =>
    fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/emails`, {
      method: "POST",
      headers: { "x-api-key": "k_app", "content-type": "application/json" },
      body: JSON.stringify({ from: "a@app.example", to: ["b@example.com"], subject: "Hi", body: { text: "Hi" } })
    })
  try {
    const first = post().then(async (r) => [r.status, await r.json()] as const)
    await reached
    const disposed = mailroom.dispose()
    const late = await post()
    assert.deepStrictEqual(
      [late.status, await late.json()],
      [503, { error: "mailroom is shutting down (dispose was called); nothing was done", may_have_been_sent: false }]
    )
    answer()
    const [status, body] = await first
    await disposed
    assert.deepStrictEqual([status, body.message_id], [201, memory.sent[0]?.messageId])
    assert.strictEqual(memory.sent.length, 1, "the request made during dispose sent nothing")
    assert.deepStrictEqual(order, ["sent", "released"])
  } finally {
    server.closeAllConnections()
    server.close()
  }
})
