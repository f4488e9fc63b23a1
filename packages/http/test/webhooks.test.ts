// POST /webhooks/{name}: a provider's delivery webhook through each transport. The source decides
// what is genuine; the route answers its verdict and hands the events on, and nothing from a refused request.

import { request } from "node:http"
import { EmailProvider, EventSource, MailEvent, MailEvents, Mailroom, ObjectStore, Organizations } from "@mailroom/core"
import { Effect } from "effect"
import { afterAll, assert, beforeAll, beforeEach, describe, it } from "vitest"
import { OpenApi } from "../src/index.js"
import { makeWorld, type Running, transports } from "./world.js"

/** A source like the real ones: a secret header, a JSON body naming the recipients and organisation. */
const testSource: EventSource.EventSource = {
  name: "test-provider",
  receive: (request) =>
    Effect.gen(function* () {
      if (request.header("x-test-secret") !== "s3cret") {
        return yield* EventSource.refusal("test", "Unauthenticated", "bad test secret")
      }
      const text = Buffer.from(request.body).toString("utf8")
      if (text === "certificate unreachable") {
        return yield* EventSource.refusal("test", "Unavailable", "try later")
      }
      let body: { readonly org?: string; readonly to?: ReadonlyArray<string> }
      try {
        body = JSON.parse(text)
      } catch {
        return yield* EventSource.refusal("test", "Malformed", "not JSON")
      }
      return (body.to ?? []).map((recipient) =>
        MailEvent.make({
          type: "bounced",
          provider: "test",
          messageId: "m-1",
          recipient,
          occurredAt: "2026-01-01T00:00:00.000Z",
          organizationId: body.org,
          bounce: { kind: "hard" },
          raw: body
        })
      )
    })
}

for (const [transport, start] of Object.entries(transports)) {
  describe(`${transport}: POST /webhooks/{name}`, () => {
    const delivered: Array<MailEvent.MailEvent> = []
    const control = { sinkBroken: false }
    let server: Running
    beforeAll(async () => {
      const world = makeWorld()
      const sink: MailEvents.Sink = {
        deliver: (events) =>
          control.sinkBroken
            ? Effect.fail(new MailEvents.MailEventsError({ message: "disk full" }))
            : Effect.sync(() => void delivered.push(...events))
      }
      const organizations = Organizations.layerStatic({
        serviceDomain: "mailroom.test",
        organizations: [
          { id: "org_acme", slug: "acme" },
          { id: "org_globex", slug: "globex" }
        ]
      })
      server = await start(
        {
          ...world,
          layer: Mailroom.layer({
            provider: EmailProvider.layerMemory(),
            store: ObjectStore.layerMemory(),
            organizations,
            events: MailEvents.layer({ sinks: [sink] })
          }) as typeof world.layer
        },
        { eventSources: [testSource], maxBodyBytes: 4096 }
      )
    })
    afterAll(() => server.close())
    beforeEach(() => {
      delivered.length = 0
      control.sinkBroken = false
    })

    const post = async (body: string, headers: Record<string, string> = { "x-test-secret": "s3cret" }) => {
      const response = await fetch(`${server.url}/webhooks/test-provider`, {
        method: "POST",
        // SNS posts JSON as text/plain: the route does not judge the content type.
        headers: { "content-type": "text/plain; charset=UTF-8", ...headers },
        body
      })
      return { status: response.status, body: (await response.json()) as Record<string, unknown> }
    }

    it("200 with the count of events handed to their organisations; one for no known organisation is dropped", async () => {
      const answer = await post(JSON.stringify({ org: "org_acme", to: ["a@example.com", "b@example.com"] }))
      assert.deepStrictEqual(answer, { status: 200, body: { events: 2 } })
      assert.deepStrictEqual(
        delivered.map((e) => [e.recipient, e.organization_id]),
        [
          ["a@example.com", "org_acme"],
          ["b@example.com", "org_acme"]
        ]
      )
      assert.deepStrictEqual(await post(JSON.stringify({ org: "org_unknown", to: ["c@example.com"] })), {
        status: 200,
        body: { events: 0 }
      })
      assert.strictEqual(delivered.length, 2)
    })

    it("401 for a bad credential, 400 for a malformed body, 503 when it cannot be checked: {message}, nothing delivered", async () => {
      const valid = JSON.stringify({ org: "org_acme", to: ["a@example.com"] })
      assert.deepStrictEqual(await post(valid, { "x-test-secret": "wrong" }), {
        status: 401,
        body: { message: "bad test secret" }
      })
      assert.deepStrictEqual(await post(valid, {}), { status: 401, body: { message: "bad test secret" } })
      assert.deepStrictEqual(await post("{not json"), { status: 400, body: { message: "not JSON" } })
      assert.deepStrictEqual(await post("certificate unreachable"), { status: 503, body: { message: "try later" } })
      assert.deepStrictEqual(delivered, [])
    })

    it("503 when the events cannot be queued, so the provider sends them again", async () => {
      control.sinkBroken = true
      const answer = await post(JSON.stringify({ org: "org_acme", to: ["a@example.com"] }))
      assert.strictEqual(answer.status, 503)
      assert.deepStrictEqual(answer.body, { message: "the events could not be queued; send them again later" })
    })

    it("413 over the body limit, 405 for another method", async () => {
      const answer = await post(JSON.stringify({ org: "org_acme", to: ["a".repeat(5000)] }))
      assert.strictEqual(answer.status, 413)
      const get = await fetch(`${server.url}/webhooks/test-provider`)
      assert.strictEqual(get.status, 405)
      assert.strictEqual(get.headers.get("allow"), "POST")
      assert.deepStrictEqual(delivered, [])
    })

    it("a source that is not configured is 404", async () => {
      const response = await fetch(`${server.url}/webhooks/postmark`, { method: "POST", body: "{}" })
      assert.strictEqual(response.status, 404)
    })
  })
}

/** A source whose headers decide: `x-signed` needs its body read (as SNS), a right secret is verified. */
const received: Array<string> = []
const checkingSource: EventSource.EventSource = {
  name: "checking",
  maxBodyBytes: 1024,
  checkHeaders: (header) =>
    header("x-test-secret") === "s3cret"
      ? "verified"
      : header("x-signed") !== undefined
        ? "unverified"
        : EventSource.refusal("test", "Unauthenticated", "bad test secret"),
  receive: (request) =>
    Effect.sync(() => {
      received.push(Buffer.from(request.body).toString("utf8"))
      return []
    })
}

interface Partial {
  /** The status and Retry-After, once the answer arrives. */
  readonly answer: Promise<{ readonly status: number; readonly retryAfter: string | undefined }>
  /** Sends the rest of the body. */
  readonly finish: () => void
}

/** A POST that declares `length` bytes and sends only the first; the rest on `finish`. */
const partial = (url: string, headers: Record<string, string>, length: number): Partial => {
  const outgoing = request(url, {
    method: "POST",
    headers: { ...headers, "content-length": String(length) },
    agent: false
  })
  const answer = new Promise<{ status: number; retryAfter: string | undefined }>((resolve, reject) => {
    outgoing.once("response", (response) => {
      response.resume()
      const retryAfter = response.headers["retry-after"]
      response.once("end", () => resolve({ status: response.statusCode ?? 0, retryAfter }))
    })
    outgoing.once("error", reject)
  })
  outgoing.write("{")
  return { answer, finish: () => outgoing.end("x".repeat(length - 1)) }
}

for (const [transport, start] of Object.entries(transports)) {
  describe(`${transport}: what a webhook's headers prove, before its body`, () => {
    let server: Running
    beforeAll(async () => {
      const world = makeWorld()
      server = await start(world, {
        eventSources: [checkingSource],
        maxUnverifiedWebhookBodies: 2,
        unverifiedWebhookBodyTimeout: "1 second"
      })
    })
    afterAll(() => server.close())
    beforeEach(() => {
      received.length = 0
    })
    const path = () => `${server.url}/webhooks/checking`

    it("headers the source refuses: 401 at once, the body never read", async () => {
      const refused = partial(path(), { "x-test-secret": "wrong" }, 1000)
      assert.deepStrictEqual(await refused.answer, { status: 401, retryAfter: undefined })
      refused.finish()
      assert.deepStrictEqual(received, [])
    })

    it("a declared body over the source's own limit: 413 at once, before the body", async () => {
      const large = partial(path(), { "x-test-secret": "s3cret" }, 1025)
      assert.strictEqual((await large.answer).status, 413)
      large.finish()
      assert.deepStrictEqual(received, [])
    })

    it("bodies only their content can verify: two at once, a third 503 with Retry-After; verified ones still read", async () => {
      const held = [partial(path(), { "x-signed": "1" }, 10), partial(path(), { "x-signed": "1" }, 10)]
      try {
        // The two are read (and hold their places) once their first byte has arrived.
        let third = await partial(path(), { "x-signed": "1" }, 10).answer
        for (let i = 0; i < 50 && third.status !== 503; i++) {
          third = await partial(path(), { "x-signed": "1" }, 10).answer
        }
        assert.deepStrictEqual(third, { status: 503, retryAfter: "5" })
        const verified = partial(path(), { "x-test-secret": "s3cret" }, 10)
        verified.finish()
        assert.strictEqual((await verified.answer).status, 200)
      } finally {
        for (const request of held) request.finish()
      }
      assert.deepStrictEqual(await Promise.all(held.map((r) => r.answer.then((a) => a.status))), [200, 200])
      const next = partial(path(), { "x-signed": "1" }, 10)
      next.finish()
      assert.strictEqual((await next.answer).status, 200)
    })

    it("an unverified body that does not arrive in time: 408, and its place is given back", async () => {
      const slow = partial(path(), { "x-signed": "1" }, 10)
      assert.strictEqual((await slow.answer).status, 408)
      const next = partial(path(), { "x-signed": "1" }, 10)
      next.finish()
      assert.strictEqual((await next.answer).status, 200)
    })
  })
}

describe("OpenAPI", () => {
  it("lists each configured webhook, without API-key security", () => {
    const document = OpenApi.document({ webhooks: ["ses", "postmark"] }) as {
      paths: Record<string, { post?: { security?: unknown; responses?: Record<string, unknown> } }>
    }
    for (const name of ["ses", "postmark"]) {
      const operation = document.paths[`/webhooks/${name}`]?.post
      assert.deepStrictEqual(operation?.security, [])
      assert.hasAllKeys(operation?.responses ?? {}, ["200", "400", "401", "408", "413", "503"])
    }
    assert.isUndefined((OpenApi.document() as typeof document).paths["/webhooks/ses"])
  })
})
