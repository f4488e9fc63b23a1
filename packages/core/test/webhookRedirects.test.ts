// Webhook delivery to a receiver that answers with a redirect: the signed event must never be forwarded
// to the Location it names, and the 3xx counts as a failed attempt that is tried again later.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { assert, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { PersistedQueue } from "effect/persistence"
import { describe } from "vitest"
import { MailEvent, MailEvents, Organizations, WebhookDelivery } from "../src/index.js"
import { organizations } from "./fixtures.js"

interface Listener {
  readonly url: string
  /** Each request's method and `webhook-id`, in the order they came. */
  readonly requests: ReadonlyArray<{ readonly method: string; readonly webhookId: string | undefined }>
  /** Resolves when the listener has had `count` requests. */
  readonly reached: (count: number) => Promise<void>
  readonly close: () => Promise<void>
}

/** A real HTTP server on 127.0.0.1 that records every request, then lets `answer` reply to it. */
const listen = (answer: (index: number, res: ServerResponse) => void) =>
  Effect.acquireRelease(
    Effect.promise(async (): Promise<Listener> => {
      const requests: Array<{ method: string; webhookId: string | undefined }> = []
      const waiters = new Set<() => void>()
      const server = createServer((req: IncomingMessage, res) => {
        req.resume()
        req.on("end", () => {
          const id = req.headers["webhook-id"]
          requests.push({ method: req.method ?? "", webhookId: Array.isArray(id) ? id[0] : id })
          answer(requests.length - 1, res)
          for (const wake of waiters) wake()
        })
      })
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
      const { port } = server.address() as AddressInfo
      return {
        url: `http://127.0.0.1:${port}/hooks`,
        requests,
        reached: (count) =>
          new Promise<void>((resolve) => {
            const check = () => {
              if (requests.length < count) return
              waiters.delete(check)
              resolve()
            }
            waiters.add(check)
            check()
          }),
        close: () =>
          new Promise<void>((resolve) => {
            server.close(() => resolve())
            server.closeAllConnections()
          })
      }
    }),
    (listener) => Effect.promise(() => listener.close())
  )

const secret = `whsec_${Buffer.from("a-test-secret-of-32-bytes-long!!").toString("base64")}`

const delivery = (url: string) =>
  WebhookDelivery.layer({
    endpoints: [{ organizationId: "org_acme", url, secret }],
    retry: { firstDelay: "50 millis", maxDelay: "200 millis" }
  }).pipe(
    Layer.provide(Layer.succeed(Organizations.Organizations, organizations)),
    Layer.provide(PersistedQueue.layer),
    Layer.provide(PersistedQueue.layerStoreMemory)
  )

describe("WebhookDelivery and redirects", () => {
  it.live("a 3xx is a failed attempt, retried later; the Location target is never called", () =>
    Effect.gen(function* () {
      const target = yield* listen((_, res) => res.writeHead(200).end("ok"))
      // Every kind of redirect once (303 and 301/302 turn a POST into a GET, 307/308 forward the body
      // and its signature as they are), then a 200 that ends the retries.
      const redirects = [301, 302, 303, 307, 308]
      const receiver = yield* listen((index, res) => {
        const status = redirects[index]
        if (status === undefined) res.writeHead(200).end("ok")
        else res.writeHead(status, { location: target.url }).end()
      })
      const event = MailEvent.make({
        type: "bounced",
        provider: "test",
        messageId: "msg-1",
        recipient: "alice@example.com",
        occurredAt: "2026-01-02T03:04:05.000Z",
        organizationId: "org_acme",
        raw: {}
      })
      const calledTarget = Effect.promise(() => target.reached(1)).pipe(
        Effect.andThen(
          Effect.sync(() =>
            assert.fail(
              `the redirect's Location was called (${target.requests.map((r) => r.method).join(", ")}): a signed event must never be forwarded to where a receiver points`
            )
          )
        )
      )
      const retried = Effect.promise(() => receiver.reached(redirects.length + 1)).pipe(
        Effect.timeoutOrElse({
          duration: "15 seconds",
          orElse: () =>
            Effect.sync(() =>
              assert.fail(
                `a 3xx answer must be a failed attempt, retried later; the receiver had ${receiver.requests.length} attempts, not ${redirects.length + 1}`
              )
            )
        })
      )
      yield* Effect.gen(function* () {
        yield* (yield* MailEvents.MailEvents).publish([event])
        yield* Effect.raceFirst(retried, calledTarget)
      }).pipe(Effect.provide(delivery(receiver.url)))
      assert.deepStrictEqual(
        receiver.requests.map((r) => [r.method, r.webhookId]),
        Array.from({ length: redirects.length + 1 }, () => ["POST", event.id])
      )
      assert.strictEqual(target.requests.length, 0, "the Location target was called")
    }).pipe(Effect.scoped)
  )
})
