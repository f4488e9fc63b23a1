// Delivery events in process: routing to organisations, subscribers (Effect stream and Promise callback),
// and the Standard Webhooks delivery with retries, checked at a real receiver with the reference verifier.
import { assert, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Layer, Logger, Option, Stream } from "effect"
import { PersistedQueue } from "effect/persistence"
import { Webhook } from "standardwebhooks"
import { afterAll, describe, it as vitest } from "vitest"
import {
  EmailProvider,
  MailEvent,
  MailEvents,
  Mailroom,
  ObjectStore,
  Organizations,
  WebhookDelivery
} from "../src/index.js"
import { expectConfigError, startWebhookReceiver } from "../src/testing/index.js"
import { organizations } from "./fixtures.js"

const organizationsLayer = Layer.succeed(Organizations.Organizations, organizations)

const event = (type: MailEvent.Type, organizationId: string | undefined, recipient = "alice@example.com") =>
  MailEvent.make({
    type,
    provider: "test",
    messageId: "msg-1",
    recipient,
    occurredAt: "2026-01-02T03:04:05.000Z",
    organizationId,
    raw: { recipient }
  })

/** Log lines written while `effect` runs, each also shown to `onLine` as it is written. */
const captureLogs = <A, E, R>(effect: Effect.Effect<A, E, R>, onLine: (line: string) => void = () => {}) =>
  Effect.gen(function* () {
    const lines: Array<string> = []
    const logger = Logger.make(({ message }) => {
      const line = (Array.isArray(message) ? message : [message]).map(String).join(" ")
      lines.push(line)
      onLine(line)
    })
    const result = yield* effect.pipe(Effect.provide(Logger.layer([logger])))
    return { result, lines }
  })

describe("MailEvent.make", () => {
  vitest("gives the same record the same id, and different records different ids", () => {
    assert.strictEqual(event("delivered", "org_acme").id, event("delivered", "org_acme").id)
    assert.match(event("delivered", "org_acme").id, /^evt_[0-9a-f]{32}$/)
    const ids = new Set([
      event("delivered", "org_acme").id,
      event("bounced", "org_acme").id,
      event("delivered", "org_acme", "bob@example.com").id
    ])
    assert.strictEqual(ids.size, 3)
  })
})

describe("MailEvents", () => {
  it.effect("routes each event to its organisation's subscribers, and drops one for no known organisation", () =>
    Effect.gen(function* () {
      const events = yield* MailEvents.MailEvents
      const acme = yield* events.subscribe({ organizationId: "org_acme" })
      const all = yield* events.subscribe()
      const acmeSeen = yield* Effect.forkChild(Stream.runCollect(Stream.take(acme, 1)))
      const allSeen = yield* Effect.forkChild(Stream.runCollect(Stream.take(all, 2)))
      const { result, lines } = yield* captureLogs(
        events.publish([
          event("delivered", "org_acme"),
          event("delivered", undefined),
          event("delivered", "org_nobody"),
          event("bounced", "org_globex")
        ])
      )
      assert.deepStrictEqual(
        result.map((e) => [e.type, e.organization_id]),
        [
          ["delivered", "org_acme"],
          ["bounced", "org_globex"]
        ]
      )
      assert.strictEqual(lines.length, 2)
      assert.include(lines[0], "names no organisation")
      assert.include(lines[1], "no organisation org_nobody")
      const forAcme = yield* Fiber.join(acmeSeen)
      assert.deepStrictEqual(
        forAcme.map((e) => e.type),
        ["delivered"]
      )
      const forAll = yield* Fiber.join(allSeen)
      assert.deepStrictEqual(
        forAll.map((e) => e.organization_id),
        ["org_acme", "org_globex"]
      )
    }).pipe(Effect.scoped, Effect.provide(MailEvents.layer().pipe(Layer.provide(organizationsLayer))))
  )

  it.live("hands events to subscribers only once every sink has them", () =>
    Effect.gen(function* () {
      const failing: MailEvents.Sink = {
        deliver: () => Effect.fail(new MailEvents.MailEventsError({ message: "disk full" }))
      }
      const events = yield* MailEvents.make({ sinks: [failing] })
      const stream = yield* events.subscribe()
      const exit = yield* Effect.exit(events.publish([event("delivered", "org_acme")]))
      assert.isTrue(Exit.isFailure(exit))
      const first = yield* Stream.runHead(stream).pipe(Effect.timeoutOption("50 millis"))
      assert.isTrue(Option.isNone(first))
    }).pipe(Effect.scoped, Effect.provide(organizationsLayer))
  )
})

describe("Mailroom.make onEvent (Promise callback)", () => {
  const mailroom = Mailroom.make({
    provider: EmailProvider.layerMemory(),
    store: ObjectStore.layerMemory(),
    organizations: organizationsLayer
  })
  afterAll(() => mailroom.dispose())

  vitest("calls the listener with each recipient's delivered event, carrying the message id", async () => {
    const forAcme: Array<MailEvent.MailEvent> = []
    const forGlobex: Array<MailEvent.MailEvent> = []
    const stopAcme = await mailroom.onEvent((e) => void forAcme.push(e), { organizationId: "org_acme" })
    const stopGlobex = await mailroom.onEvent((e) => void forGlobex.push(e), { organizationId: "org_globex" })
    const { response } = await mailroom.send(
      { orgId: "org_acme" },
      {
        from: "a@acme.example",
        to: ["b@example.com"],
        cc: ["c@example.com"],
        bcc: ["B@example.com"],
        subject: "Hi",
        body: { text: "x" }
      }
    )
    await new Promise((resolve) => setTimeout(resolve, 20))
    assert.deepStrictEqual(
      forAcme.map((e) => [e.type, e.recipient, e.message_id, e.organization_id, e.provider]),
      [
        ["delivered", "b@example.com", response.message_id, "org_acme", "memory"],
        ["delivered", "c@example.com", response.message_id, "org_acme", "memory"]
      ]
    )
    assert.deepStrictEqual(forGlobex, [])
    await stopAcme()
    await mailroom.send(
      { orgId: "org_acme" },
      { from: "a@acme.example", to: ["d@example.com"], subject: "Hi", body: { text: "x" } }
    )
    await new Promise((resolve) => setTimeout(resolve, 20))
    assert.strictEqual(forAcme.length, 2)
    await stopGlobex()
  })

  vitest("keeps calling a listener that threw", async () => {
    const seen: Array<string> = []
    const stop = await mailroom.onEvent((e) => {
      seen.push(e.recipient ?? "")
      if (seen.length === 1) throw new Error("listener bug")
    })
    for (const to of ["first@example.com", "second@example.com"]) {
      await mailroom.send(
        { orgId: "org_globex" },
        { from: "a@globex.example", to: [to], subject: "Hi", body: { text: "x" } }
      )
    }
    await new Promise((resolve) => setTimeout(resolve, 20))
    assert.deepStrictEqual(seen, ["first@example.com", "second@example.com"])
    await stop()
  })
})

describe("WebhookDelivery", () => {
  const secret = `whsec_${Buffer.from("a-test-secret-of-32-bytes-long!!").toString("base64")}`
  /** Publishes the events, then waits with `during` while the delivery workers run. */
  const deliver = <A>(
    endpoints: ReadonlyArray<WebhookDelivery.Endpoint>,
    retry: WebhookDelivery.RetryPolicy,
    events: ReadonlyArray<MailEvent.Unrouted>,
    during: Effect.Effect<A>
  ) =>
    Effect.gen(function* () {
      const mailEvents = yield* MailEvents.MailEvents
      yield* mailEvents.publish(events)
      return yield* during
    }).pipe(
      Effect.provide(
        WebhookDelivery.layer({ endpoints, retry }).pipe(
          Layer.provide(organizationsLayer),
          Layer.provide(PersistedQueue.layer),
          Layer.provide(PersistedQueue.layerStoreMemory)
        )
      )
    )

  it.live("retries a failing receiver with the same webhook-id and body, each verified by standardwebhooks", () =>
    Effect.gen(function* () {
      const acme = yield* Effect.acquireRelease(
        Effect.promise(() => startWebhookReceiver({ statuses: [500, 500] })),
        (r) => Effect.promise(() => r.close())
      )
      const globex = yield* Effect.acquireRelease(
        Effect.promise(() => startWebhookReceiver()),
        (r) => Effect.promise(() => r.close())
      )
      const bounced = event("bounced", "org_acme")
      const requests = yield* deliver(
        [
          { organizationId: "org_acme", url: acme.url, secret },
          { organizationId: "org_globex", url: globex.url, secret }
        ],
        { firstDelay: "50 millis", maxDelay: "200 millis" },
        [bounced],
        Effect.promise(() => acme.waitFor(3))
      )
      assert.deepStrictEqual(
        requests.map((r) => r.status),
        [500, 500, 200]
      )
      const verifier = new Webhook(secret)
      for (const request of requests) {
        assert.strictEqual(request.headers["webhook-id"], bounced.id)
        assert.strictEqual(request.headers["content-type"], "application/json")
        const payload = verifier.verify(request.body, request.headers) as MailEvent.MailEvent
        assert.strictEqual(payload.id, bounced.id)
        assert.strictEqual(payload.type, "bounced")
        assert.strictEqual(payload.organization_id, "org_acme")
        assert.strictEqual(request.body, requests[0]?.body)
      }
      assert.throws(() =>
        new Webhook(`whsec_${Buffer.alloc(32).toString("base64")}`).verify(
          requests[0]?.body ?? "",
          requests[0]?.headers ?? {}
        )
      )
      assert.strictEqual(globex.requests.length, 0)
    }).pipe(Effect.scoped)
  )

  it.live("gives up, with an error log line, on an event older than giveUpAfter", () =>
    Effect.gen(function* () {
      const receiver = yield* Effect.acquireRelease(
        Effect.promise(() => startWebhookReceiver({ statuses: Array(1000).fill(503) })),
        (r) => Effect.promise(() => r.close())
      )
      // Awaited, not slept on: giveUpAfter is fifty retry delays, so the retries come before it on
      // any machine, and the give-up is known by its log line however late it comes.
      const gaveUp = Deferred.makeUnsafe<void>()
      const { result: attempts, lines } = yield* captureLogs(
        deliver(
          [{ organizationId: "org_acme", url: receiver.url, secret }],
          { firstDelay: "20 millis", maxDelay: "20 millis", giveUpAfter: "1 second" },
          [event("delivered", "org_acme")],
          Effect.gen(function* () {
            yield* Deferred.await(gaveUp)
            const attempts = receiver.requests.length
            // Several retry delays: an attempt after giving up would have come by now.
            yield* Effect.sleep("150 millis")
            return attempts
          })
        ),
        (line) => {
          if (line.includes("gave up on event")) Deferred.doneUnsafe(gaveUp, Exit.void)
        }
      )
      assert.isAtLeast(attempts, 2)
      assert.isTrue(
        lines.some((line) => line.includes("gave up on event")),
        lines.join("\n")
      )
      assert.strictEqual(receiver.requests.length, attempts)
    })
  )

  vitest("refuses a secret that is not a whsec_ key", () => {
    assert.throws(() => WebhookDelivery.signingKey("not-a-secret"), /whsec_/)
    assert.throws(() => WebhookDelivery.signingKey("whsec_c2hvcnQ="), /24 to 64 bytes/)
    assert.strictEqual(WebhookDelivery.signingKey(secret).byteLength, 32)
  })
})

describe("WebhookDelivery's options", () => {
  const layer = (endpoints: WebhookDelivery.Options["endpoints"]) =>
    WebhookDelivery.layer({ endpoints }).pipe(
      Layer.provide(Layer.succeed(Organizations.Organizations, organizations)),
      Layer.provide(PersistedQueue.layer),
      Layer.provide(PersistedQueue.layerStoreMemory)
    )
  const secret = `whsec_${Buffer.alloc(32, 7).toString("base64")}`

  it.effect("a bad endpoint fails the layer with a ConfigError naming it, never showing the secret", () =>
    Effect.gen(function* () {
      yield* expectConfigError(layer([{ organizationId: "org_acme", url: "ftp://acme.example/hook", secret }]), [
        "endpoints",
        0,
        "url"
      ])
      yield* expectConfigError(
        layer([{ organizationId: "org_acme", url: "https://acme.example/hook", secret: "whsec_short" }]),
        ["endpoints", 0, "secret"],
        { secrets: ["whsec_short"] }
      )
      const twice = layer([
        { organizationId: "org_acme", url: "https://acme.example/a", secret },
        { organizationId: "org_acme", url: "https://acme.example/b", secret }
      ])
      yield* expectConfigError(twice, ["endpoints", 1], { says: /org_acme already has an endpoint/ })
    })
  )
})
