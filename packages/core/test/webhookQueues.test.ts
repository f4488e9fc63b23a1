// Webhook delivery's queues in their store: each organisation's events wait in a queue of their own,
// and an event left in the single shared queue of an earlier version is still delivered after an upgrade.
import { assert, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { PersistedQueue } from "effect/persistence"
import { describe } from "vitest"
import { MailEvents, Organizations, WebhookDelivery } from "../src/index.js"
import { startWebhookReceiver } from "../src/testing/WebhookReceiver.js"
import { organizations } from "./fixtures.js"

const secret = `whsec_${Buffer.from("a-test-secret-of-32-bytes-long!!").toString("base64")}`

// What an earlier version wrote to its queue named "mailroom-webhooks", field for field.
const Queued = Schema.Struct({
  organizationId: Schema.String,
  eventId: Schema.String,
  body: Schema.String,
  queuedAt: Schema.Number
})

describe("WebhookDelivery's queues", () => {
  it.live("an event in the shared queue of an earlier version is delivered, with its id and body", () =>
    Effect.gen(function* () {
      const receiver = yield* Effect.acquireRelease(
        Effect.promise(() => startWebhookReceiver()),
        (r) => Effect.promise(() => r.close())
      )
      const store = yield* Layer.build(PersistedQueue.layerStoreMemory)
      const factory = Layer.provide(PersistedQueue.layer, Layer.succeedContext(store))
      const body = JSON.stringify({ id: "evt_before_upgrade", type: "delivered", organization_id: "org_acme" })
      yield* Effect.gen(function* () {
        const shared = yield* PersistedQueue.make({ name: "mailroom-webhooks", schema: Queued })
        yield* shared.offer(
          { organizationId: "org_acme", eventId: "evt_before_upgrade", body, queuedAt: Date.now() },
          { id: "evt_before_upgrade" }
        )
      }).pipe(Effect.provide(factory))
      yield* Effect.gen(function* () {
        yield* MailEvents.MailEvents
        const [request] = yield* Effect.promise(() => receiver.waitFor(1, 15_000))
        assert.deepStrictEqual([request?.headers["webhook-id"], request?.body], ["evt_before_upgrade", body])
      }).pipe(
        Effect.provide(
          WebhookDelivery.layer({ endpoints: [{ organizationId: "org_acme", url: receiver.url, secret }] }).pipe(
            Layer.provide(Layer.succeed(Organizations.Organizations, organizations)),
            Layer.provide(factory)
          )
        )
      )
    }).pipe(Effect.scoped)
  )
})
