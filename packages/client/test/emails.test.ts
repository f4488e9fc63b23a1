// emails.send against a real server: the 201 body, each error status as its class with the server's
// messages, and retries that reuse one Idempotency-Key, so that a retried send is replayed, never sent twice.
import { createServer, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { rejection } from "@mailroom/test-support"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import {
  AuthenticationError,
  ConflictError,
  MailroomApiError,
  MailroomClient,
  MailroomConnectionError,
  PayloadTooLargeError,
  RateLimitError,
  ServiceUnavailableError,
  UnprocessableError,
  ValidationError
} from "../src/index.js"
import { type Fault, type Gateway, refusingUrl, startGateway } from "./support/gateway.js"
import { acme, type Mailroom, startMailroom } from "./support/mailroom.js"

const email = (subject = "Welcome") => ({
  from: "hello@acme.example",
  to: ["alice@example.com"],
  subject,
  body: { text: "Hi Alice" }
})

/** A fetch that records the method, path and Idempotency-Key of every request the client makes. */
const recording = () => {
  const calls: Array<{ method: string; path: string; idempotencyKey: string | null }> = []
  const fetch: typeof globalThis.fetch = (input, init) => {
    const headers = new Headers(init?.headers)
    calls.push({
      method: init?.method ?? "GET",
      path: new URL(String(input)).pathname,
      idempotencyKey: headers.get("idempotency-key")
    })
    return globalThis.fetch(input, init)
  }
  return { calls, fetch }
}

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

describe("emails.send against a running server", () => {
  let mailroom: Mailroom
  beforeAll(async () => {
    mailroom = await startMailroom()
  })
  afterAll(async () => {
    await mailroom?.close()
  })
  const client = (options: Partial<MailroomClient.Options> = {}) =>
    MailroomClient.make({ baseUrl: mailroom.url, apiKey: acme.apiKey, retry: { initialDelay: 10 }, ...options })

  it("answers the 201 body and writes the message once, under a fresh Idempotency-Key", async () => {
    const { calls, fetch } = recording()
    const before = await mailroom.sent()
    const sent = await client({ fetch }).emails.send(email("Fresh key"))
    assert.strictEqual(sent.from, "hello@acme.example")
    assert.deepStrictEqual(sent.to, ["alice@example.com"])
    assert.strictEqual(sent.subject, "Fresh key")
    assert.deepStrictEqual(sent.attachments, [])
    assert.strictEqual(sent.replayed, false)
    assert.match(sent.idempotencyKey, uuid)
    assert.deepStrictEqual(calls, [{ method: "POST", path: "/emails", idempotencyKey: sent.idempotencyKey }])
    const written = (await mailroom.sent()).filter((name) => !before.includes(name))
    assert.deepStrictEqual(written, [`${sent.message_id}.eml`])
    assert.match(await mailroom.readSent(written[0] ?? ""), /^Subject: Fresh key$/m)
  })

  it("sends the same request again under a given key as a replay, writing nothing more", async () => {
    const idempotencyKey = `order-${Date.now()}`
    const first = await client().emails.send(email("Order shipped"), { idempotencyKey })
    const count = (await mailroom.sent()).length
    const again = await client().emails.send(email("Order shipped"), { idempotencyKey })
    assert.strictEqual(first.replayed, false)
    assert.strictEqual(again.replayed, true)
    assert.strictEqual(again.message_id, first.message_id)
    assert.strictEqual(again.idempotencyKey, idempotencyKey)
    assert.strictEqual((await mailroom.sent()).length, count)
  })

  it("400: a ValidationError listing every problem, not retried", async () => {
    const { calls, fetch } = recording()
    const error = await rejection(
      client({ fetch }).emails.send({ ...email(), to: [], cc: ["not an address"], body: {} })
    )
    assert.isTrue(ValidationError.isInstance(error))
    const { errors, status, isRetryable } = error as ValidationError
    assert.strictEqual(status, 400)
    assert.isFalse(isRetryable)
    assert.sameMembers(
      [...errors],
      [
        "to: must contain at least 1 recipient",
        "cc[0]: must be a valid email address",
        "body: must contain html or text"
      ]
    )
    assert.strictEqual(calls.length, 1)
  })

  it("401: an AuthenticationError with the server's message, not retried", async () => {
    const { calls, fetch } = recording()
    const error = await rejection(client({ fetch, apiKey: "mr_revoked" }).emails.send(email()))
    assert.isTrue(AuthenticationError.isInstance(error))
    assert.isTrue(MailroomApiError.isInstance(error))
    assert.strictEqual((error as AuthenticationError).status, 401)
    assert.deepStrictEqual((error as AuthenticationError).messages, ["missing, invalid or revoked credential"])
    assert.strictEqual(calls.length, 1)
  })

  it("a credential or key that is no header value: a TypeError naming the header, never its value; nothing sent", async () => {
    const { calls, fetch } = recording()
    const cases = [
      {
        name: "x-api-key",
        secret: "mr_test_acme\nmr_other",
        send: () => client({ fetch, apiKey: "mr_test_acme\nmr_other" })
      },
      { name: "idempotency-key", secret: "commande-日本", send: () => client({ fetch }) }
    ]
    for (const { name, secret, send } of cases) {
      const error = await rejection(
        send().emails.send(email(), { idempotencyKey: name === "idempotency-key" ? secret : "k-1" })
      )
      assert.instanceOf(error, TypeError, String(error))
      assert.isFalse(MailroomConnectionError.isInstance(error))
      const { message, cause } = error as TypeError
      assert.include(message, name)
      assert.notInclude(`${message} ${String(cause)}`, secret)
    }
    assert.deepStrictEqual(calls, [])
  })

  it("409: a ConflictError when the key was used with another request", async () => {
    const idempotencyKey = `conflict-${Date.now()}`
    await client().emails.send(email("First"), { idempotencyKey })
    const error = await rejection(client().emails.send(email("Second"), { idempotencyKey }))
    assert.isTrue(ConflictError.isInstance(error))
    assert.match((error as ConflictError).message, /already used with another request/)
  })

  it("413: a PayloadTooLargeError for a body over the server's limit", async () => {
    const error = await rejection(client().emails.send({ ...email(), body: { text: "x".repeat(1_100_000) } }))
    assert.isTrue(PayloadTooLargeError.isInstance(error))
    assert.strictEqual((error as PayloadTooLargeError).status, 413)
  })

  it("422: an UnprocessableError when the sender's domain is not verified, nothing written", async () => {
    const before = (await mailroom.sent()).length
    const error = await rejection(client().emails.send({ ...email(), from: "hello@unverified.example" }))
    assert.isTrue(UnprocessableError.isInstance(error))
    assert.isFalse(ValidationError.isInstance(error))
    assert.isNotEmpty((error as UnprocessableError).messages)
    assert.strictEqual((await mailroom.sent()).length, before)
  })
})

describe("503 from a server whose sending is paused", () => {
  let mailroom: Mailroom
  beforeAll(async () => {
    mailroom = await startMailroom({ kind: "outbox", dir: "outbox", paused: true })
  })
  afterAll(async () => {
    await mailroom?.close()
  })

  it("is retried up to the attempts allowed, all with the same key, then thrown; nothing is written", async () => {
    const { calls, fetch } = recording()
    const client = MailroomClient.make({
      baseUrl: mailroom.url,
      apiKey: acme.apiKey,
      fetch,
      retry: { attempts: 3, initialDelay: 10 }
    })
    const error = await rejection(client.emails.send(email()))
    assert.isTrue(ServiceUnavailableError.isInstance(error))
    const unavailable = error as ServiceUnavailableError
    assert.match(unavailable.message, /sending is paused/)
    assert.isTrue(unavailable.isRetryable)
    assert.isFalse(unavailable.mayHaveBeenSent)
    assert.strictEqual(calls.length, 3)
    assert.strictEqual(new Set(calls.map((c) => c.idempotencyKey)).size, 1)
    assert.deepStrictEqual(await mailroom.sent(), [])
  })
})

/** An SES endpoint that takes each request and never answers, counting them. */
const stalledSes = async () => {
  const held: Array<ServerResponse> = []
  const server = createServer((req, res) => {
    req.resume()
    req.on("end", () => {
      // GetAccount, which the provider's verify asks at start-up, is answered; sends are held.
      if (req.method === "GET" && req.url === "/v2/email/account") {
        res.writeHead(200, { "content-type": "application/json" })
        res.end(JSON.stringify({ SendingEnabled: true }))
      } else held.push(res)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: () => held.length,
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of held) res.destroy()
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

describe("503 from a server whose provider did not confirm the message", () => {
  let ses: Awaited<ReturnType<typeof stalledSes>>
  let mailroom: Mailroom
  beforeAll(async () => {
    ses = await stalledSes()
    mailroom = await startMailroom({
      kind: "ses",
      region: "us-east-1",
      endpoint: ses.url,
      accessKeyId: "AKIDSTALLED",
      secretAccessKey: "stalled-secret",
      timeout: "1 second"
    })
  })
  afterAll(async () => {
    await mailroom?.close()
    await ses?.close()
  })

  it("is not retried, since the message may have gone out: the provider sees one request", async () => {
    const client = MailroomClient.make({ baseUrl: mailroom.url, apiKey: acme.apiKey, retry: { initialDelay: 10 } })
    const error = await rejection(client.emails.send(email()))
    assert.isTrue(ServiceUnavailableError.isInstance(error), String(error))
    assert.isTrue((error as ServiceUnavailableError).mayHaveBeenSent)
    assert.isFalse((error as ServiceUnavailableError).isRetryable)
    assert.strictEqual(ses.requests(), 1)
  })
})

describe("through a gateway that fails on cue, in front of a real server", () => {
  let mailroom: Mailroom
  let current: Gateway | undefined
  const faults: Array<Fault> = []
  beforeAll(async () => {
    mailroom = await startMailroom()
  })
  afterAll(async () => {
    await current?.close()
    await mailroom?.close()
  })
  /** A fresh gateway whose n-th request meets `plan[n - 1]`, and forwards once the plan runs out. */
  const gateway = async (plan: ReadonlyArray<Fault>) => {
    await current?.close()
    faults.splice(0, faults.length, ...plan)
    current = await startGateway(mailroom.url, (_, n) => faults[n - 1] ?? { kind: "forward" })
    return current
  }
  const client = (url: string, options: Partial<MailroomClient.Options> = {}) =>
    MailroomClient.make({ baseUrl: url, apiKey: acme.apiKey, retry: { initialDelay: 10 }, ...options })
  const keys = (p: Gateway) => p.seen.map((s) => s.headers["idempotency-key"])

  it("429: waits the Retry-After, retries with the same key, and the message is written once", async () => {
    const p = await gateway([
      { kind: "answer", status: 429, headers: { "retry-after": "1" }, body: { error: "slow down" } }
    ])
    const before = (await mailroom.sent()).length
    const started = Date.now()
    const sent = await client(p.url).emails.send(email("Throttled"))
    assert.isAtLeast(Date.now() - started, 950, "the Retry-After of 1 s was not waited out")
    assert.strictEqual(p.seen.length, 2)
    assert.deepStrictEqual(keys(p), [sent.idempotencyKey, sent.idempotencyKey])
    assert.strictEqual(sent.replayed, false)
    assert.strictEqual((await mailroom.sent()).length, before + 1)
  })

  it("a Retry-After longer than maxDelay is not waited out: the RateLimitError says how long", async () => {
    const p = await gateway([
      { kind: "answer", status: 429, headers: { "retry-after": "120" }, body: { error: "slow down" } }
    ])
    const error = await rejection(client(p.url).emails.send(email()))
    assert.isTrue(RateLimitError.isInstance(error))
    assert.strictEqual((error as RateLimitError).retryAfter, 120)
    assert.deepStrictEqual((error as RateLimitError).messages, ["slow down"])
    assert.strictEqual(p.seen.length, 1)
  })

  it("a 503 after the server had sent: the retry is answered as a replay and nothing is sent twice", async () => {
    const p = await gateway([
      {
        kind: "forward-then-answer",
        status: 503,
        body: { error: "the email provider is unavailable; nothing was sent" }
      }
    ])
    const before = await mailroom.sent()
    const sent = await client(p.url).emails.send(email("Lost answer"))
    assert.strictEqual(sent.replayed, true)
    assert.deepStrictEqual(keys(p), [sent.idempotencyKey, sent.idempotencyKey])
    const written = (await mailroom.sent()).filter((name) => !before.includes(name))
    assert.deepStrictEqual(written, [`${sent.message_id}.eml`])
  })

  it("a 503 that says the message may have been sent is not retried", async () => {
    const p = await gateway([
      {
        kind: "answer",
        status: 503,
        // As the server answers it (SPEC 7's {error}, with the field the client reads).
        body: {
          error:
            "the email provider did not confirm the message; it may have been sent, so check before sending it again",
          may_have_been_sent: true
        }
      }
    ])
    const error = await rejection(client(p.url).emails.send(email()))
    assert.isTrue(ServiceUnavailableError.isInstance(error))
    assert.isTrue((error as ServiceUnavailableError).mayHaveBeenSent)
    assert.isFalse((error as ServiceUnavailableError).isRetryable)
    assert.strictEqual(p.seen.length, 1)
  })

  it("a connection cut after the request went out is not retried: a MailroomConnectionError, one message", async () => {
    const p = await gateway([{ kind: "forward-then-drop" }])
    const before = (await mailroom.sent()).length
    const error = await rejection(client(p.url).emails.send(email("Dropped")))
    assert.isTrue(MailroomConnectionError.isInstance(error))
    assert.strictEqual((error as MailroomConnectionError).reason, "Network")
    assert.isFalse((error as MailroomConnectionError).isRetryable)
    assert.strictEqual(p.seen.length, 1)
    assert.strictEqual((await mailroom.sent()).length, before + 1)
  })

  for (const status of [301, 302, 303, 307, 308]) {
    it(`a ${status} redirect is not followed: a send never becomes a GET, nor goes where it was not sent`, async () => {
      const p = await gateway([{ kind: "redirect", status }])
      const before = (await mailroom.sent()).length
      const error = await rejection(client(p.url).emails.send(email("Redirected")))
      assert.isTrue(MailroomApiError.isInstance(error), String(error))
      const { status: answered, messages, isRetryable } = error as MailroomApiError
      assert.strictEqual(answered, status)
      assert.isFalse(isRetryable)
      assert.deepStrictEqual(messages, [
        `the server redirected to ${mailroom.url}/emails: set baseUrl to the address that answers (redirects are not followed)`
      ])
      assert.strictEqual(p.seen.length, 1)
      assert.strictEqual((await mailroom.sent()).length, before)
    })
  }

  it("a timeout is a MailroomConnectionError and is not retried", async () => {
    const p = await gateway([{ kind: "stall" }])
    const started = Date.now()
    const error = await rejection(client(p.url, { timeout: 300 }).emails.send(email()))
    assert.isTrue(MailroomConnectionError.isInstance(error))
    assert.strictEqual((error as MailroomConnectionError).reason, "Timeout")
    assert.isBelow(Date.now() - started, 5000)
    assert.strictEqual(p.seen.length, 1)
  })

  it("the caller's AbortSignal ends the call with the caller's own reason", async () => {
    const p = await gateway([{ kind: "stall" }])
    const controller = new AbortController()
    const reason = new Error("the user went away")
    setTimeout(() => controller.abort(reason), 100)
    const error = await rejection(client(p.url).emails.send(email(), { signal: controller.signal }))
    assert.strictEqual(error, reason)
  })

  it("a connection refused is retried, being certainly not sent, then thrown as retryable", async () => {
    const { calls, fetch } = recording()
    const error = await rejection(
      client(await refusingUrl(), { fetch, retry: { attempts: 4, initialDelay: 10 } }).emails.send(email())
    )
    assert.isTrue(MailroomConnectionError.isInstance(error))
    assert.strictEqual((error as MailroomConnectionError).reason, "CouldNotConnect")
    assert.isTrue((error as MailroomConnectionError).isRetryable)
    assert.strictEqual(calls.length, 4)
    assert.strictEqual(new Set(calls.map((c) => c.idempotencyKey)).size, 1)
  })

  it("retry: false makes one attempt", async () => {
    const p = await gateway([{ kind: "answer", status: 429, headers: { "retry-after": "0" }, body: { error: "no" } }])
    const error = await rejection(client(p.url, { retry: false }).emails.send(email()))
    assert.isTrue(RateLimitError.isInstance(error))
    assert.strictEqual(p.seen.length, 1)
  })
})
