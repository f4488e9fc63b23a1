// What an operator sees of one server: /healthz and /readyz for a load balancer (a Redis that goes
// away makes it 503 naming Redis), /metrics behind its token, the rate limit's 429, and spans over OTLP.
import { mkdtemp, rm } from "node:fs/promises"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type RedisServer, startRedisServer } from "@mailroom/test-support"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { Server, ServerConfig } from "../src/index.js"
import { type SesStandIn, startSesStandIn } from "./support/sesStandIn.js"

const organizations = [{ id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"], apiKeys: ["mr_acme"] }]
const message = (to: ReadonlyArray<string>, subject = "Hello") => ({
  from: "hello@acme.example",
  to,
  subject,
  body: { text: "Hi" }
})

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${url}/emails`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": "mr_acme", ...headers },
    body: JSON.stringify(body)
  })

/** A receiver of OTLP/HTTP JSON: keeps the spans of every `POST /v1/traces`. */
const otlpReceiver = async () => {
  const spans: Array<{ name: string; traceId: string; spanId: string; parentSpanId?: string }> = []
  const server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      if (req.url === "/v1/traces") {
        const data = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
          resourceSpans: Array<{ scopeSpans: Array<{ spans: typeof spans }> }>
        }
        for (const r of data.resourceSpans) for (const s of r.scopeSpans) spans.push(...s.spans)
      }
      res.writeHead(200, { "content-type": "application/json" })
      res.end("{}")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

describe("operations of one server", () => {
  let dir: string
  let redis: RedisServer
  let ses: SesStandIn
  let otlp: Awaited<ReturnType<typeof otlpReceiver>>
  let server: Server.RunningServer
  let closed = false

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "mailroom-operations-"))
    redis = await startRedisServer()
    ses = await startSesStandIn({ maxSendRate: 2, acceptPerSecond: 100 })
    otlp = await otlpReceiver()
    server = await Server.start(
      ServerConfig.parse(
        {
          port: 0,
          serviceDomain: "mailroom.test",
          organizations,
          storage: { kind: "local", dir: "storage", signingSecret: "test-secret" },
          provider: { kind: "ses", region: "eu-west-1", endpoint: ses.url, accessKeyId: "AKID", secretAccessKey: "s" },
          idempotency: { kind: "redis", url: redis.url },
          // The SES account sends 2 recipients a second, with no burst beyond: a 3-recipient message
          // waits 1.5 s for its tokens, more than `wait` allows, so it is a 429.
          sending: { rateLimit: { from: "ses", burst: 2, wait: "1 second" } },
          metrics: { enabled: true, token: { env: "TEST_METRICS_TOKEN" } },
          tracing: { otlpEndpoint: otlp.url, serviceName: "mailroom-test" }
        },
        { baseDir: dir, env: { TEST_METRICS_TOKEN: "scrape-me" } }
      ),
      { log: () => undefined }
    )
  }, 30_000)

  afterAll(async () => {
    if (!closed) await server?.close()
    await otlp?.close()
    await ses?.close()
    await redis?.dispose()
    if (dir !== undefined) await rm(dir, { recursive: true, force: true })
  })

  it("/healthz answers 200 and /readyz lists each check, without credentials", async () => {
    const health = await fetch(`${server.url}/healthz`)
    assert.strictEqual(health.status, 200)
    assert.deepStrictEqual(await health.json(), { status: "ok" })
    const ready = await fetch(`${server.url}/readyz`)
    assert.strictEqual(ready.status, 200)
    assert.deepStrictEqual(await ready.json(), {
      ready: true,
      checks: { storage: "ok", messages: "ok", queue: "ok", redis: "ok", provider: "ok" }
    })
  })

  it("/readyz is 503 naming Redis while Redis is down, and 200 once it is back", async () => {
    await redis.stop()
    try {
      const ready = await fetch(`${server.url}/readyz`)
      assert.strictEqual(ready.status, 503)
      const body = (await ready.json()) as { ready: boolean; checks: Record<string, string> }
      assert.isFalse(body.ready)
      assert.strictEqual(body.checks.storage, "ok")
      assert.match(body.checks.redis ?? "", /^Redis at redis:\/\/127\.0\.0\.1:\d+ /)
      // /healthz is about the process alone: a load balancer must not restart it for Redis.
      assert.strictEqual((await fetch(`${server.url}/healthz`)).status, 200)
    } finally {
      await redis.start()
    }
    const deadline = Date.now() + 10_000
    let status = 0
    while (Date.now() < deadline && status !== 200) {
      status = (await fetch(`${server.url}/readyz`)).status
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 100))
    }
    assert.strictEqual(status, 200)
  })

  it("the SES rate paces sends: over the wait, a 429 with Retry-After, nothing sent", async () => {
    // Read at start-up for the rate; the provider's verify (start-up, /readyz) calls GetAccount too.
    assert.isAtLeast(ses.accountReads(), 1, "the rate is read from GetAccount at start-up")
    const first = await post(server.url, message(["a@example.com", "b@example.com"]))
    assert.strictEqual(first.status, 201, await first.clone().text())
    const before = ses.seen.length
    const second = await post(server.url, message(["c@example.com", "d@example.com", "e@example.com"]))
    assert.strictEqual(second.status, 429)
    assert.strictEqual(second.headers.get("retry-after"), "2")
    assert.match(((await second.json()) as { error: string }).error, /2 recipients per second/)
    assert.strictEqual(ses.seen.length, before, "a refused send never reaches SES")
  })

  it("/metrics needs its token, then shows requests, provider outcomes and latency, replays and the limiter", async () => {
    await new Promise((resolve) => setTimeout(resolve, 1500))
    const keyed = { "idempotency-key": "order-1" }
    assert.strictEqual((await post(server.url, message(["f@example.com"], "Keyed"), keyed)).status, 201)
    const replay = await post(server.url, message(["f@example.com"], "Keyed"), keyed)
    assert.strictEqual(replay.headers.get("idempotent-replayed"), "true")

    assert.strictEqual((await fetch(`${server.url}/metrics`)).status, 401)
    const wrong = await fetch(`${server.url}/metrics`, { headers: { authorization: "Bearer nope" } })
    assert.strictEqual(wrong.status, 401)
    const scraped = await fetch(`${server.url}/metrics`, { headers: { authorization: "Bearer scrape-me" } })
    assert.strictEqual(scraped.status, 200)
    assert.match(scraped.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4/)
    const text = await scraped.text()
    const value = (series: string) => {
      const line = text.split("\n").find((l) => l.startsWith(`${series} `))
      return line === undefined ? undefined : Number(line.slice(series.length + 1))
    }
    assert.strictEqual(value('mailroom_http_requests_total{method="POST",route="/emails",status="201"}'), 3, text)
    assert.strictEqual(value('mailroom_http_requests_total{method="POST",route="/emails",status="429"}'), 1)
    assert.strictEqual(value('mailroom_provider_sends_total{provider="ses",outcome="sent"}'), 2)
    assert.strictEqual(value('mailroom_provider_send_seconds_count{provider="ses"}'), 2)
    assert.isDefined(value('mailroom_provider_send_seconds_bucket{provider="ses",le="+Inf"}'))
    assert.strictEqual(value("mailroom_idempotent_replays_total"), 1)
    assert.strictEqual(value("mailroom_rate_limiter_refusals_total"), 1)
    assert.strictEqual(value("mailroom_rate_limiter_wait_seconds_count"), 2)
    assert.include(text, "# TYPE mailroom_provider_send_seconds histogram")
  })

  it("the operational routes are not part of the API's OpenAPI document", async () => {
    const document = (await (await fetch(`${server.url}/openapi.json`)).json()) as { paths: Record<string, unknown> }
    assert.isTrue(Object.keys(document.paths).includes("/emails"))
    for (const path of ["/healthz", "/readyz", "/metrics"]) assert.notProperty(document.paths, path)
  })

  it("a send's spans reach the OTLP endpoint: the request, Mailer.send and the SES call, in one trace", async () => {
    assert.strictEqual((await post(server.url, message(["g@example.com"], "Traced"))).status, 201)
    // Closing flushes what the exporter still holds.
    await server.close()
    closed = true
    const request = otlp.spans.filter((s) => s.name === "POST /emails").at(-1)
    assert.isDefined(request, JSON.stringify(otlp.spans.map((s) => s.name)))
    const inTrace = otlp.spans.filter((s) => s.traceId === request?.traceId)
    const mailer = inTrace.find((s) => s.name === "Mailer.send")
    const provider = inTrace.find((s) => s.name === "EmailProvider.send")
    assert.strictEqual(mailer?.parentSpanId, request?.spanId)
    assert.isDefined(provider)
    assert.isDefined(inTrace.find((s) => s.name === "SendRateLimiter.acquire"))
  })
})

describe("the config of the fleet sections", () => {
  const base = {
    serviceDomain: "mailroom.test",
    organizations,
    storage: { kind: "local", dir: "storage", signingSecret: "s" },
    provider: { kind: "outbox", dir: "outbox" }
  }
  const problems = (input: Record<string, unknown>, env: Record<string, string> = {}) => {
    try {
      ServerConfig.parse({ ...base, ...input }, { env })
      return []
    } catch (error) {
      return (error as ServerConfig.ServerConfigError).problems
    }
  }

  it("refuses unknown fields, a rate given twice or not at all, SES's rate without SES, a missing token variable", () => {
    assert.deepStrictEqual(problems({ sending: { rateLimit: { perSecnd: 5 } } }), [
      "sending.rateLimit.perSecnd: is not a known field"
    ])
    assert.match(problems({ sending: { rateLimit: {} } })[0] ?? "", /^sending\.rateLimit: give perSecond/)
    assert.match(problems({ sending: { rateLimit: { perSecond: 5, from: "ses" } } })[0] ?? "", /not both/)
    assert.deepStrictEqual(problems({ sending: { rateLimit: { from: "ses" } } }), [
      'sending.rateLimit.from: "ses" needs "provider": {"kind": "ses"}'
    ])
    assert.deepStrictEqual(problems({ sending: { rateLimit: { perSecond: 5, store: { kind: "redis" } } } }), [
      "sending.rateLimit.store.url: is required, or set the REDIS_URL environment variable"
    ])
    assert.deepStrictEqual(problems({ metrics: { enabled: true, token: { env: "NOPE" } } }), [
      "metrics.token: the environment variable NOPE is not set"
    ])
    assert.deepStrictEqual(problems({ tracing: { otlpEndpoint: "collector:4318" } }), [
      "tracing.otlpEndpoint: must be an http(s) URL"
    ])
  })

  it("puts the bucket on the idempotency section's Redis by default, in memory otherwise", () => {
    const shared = ServerConfig.parse({
      ...base,
      idempotency: { kind: "redis", url: "redis://127.0.0.1:6379" },
      sending: { rateLimit: { perSecond: 14 } }
    })
    assert.deepStrictEqual(shared.sending.rateLimit, {
      rate: { perSecond: 14 },
      wait: "5 seconds",
      store: { kind: "redis", url: "redis://127.0.0.1:6379" }
    })
    const alone = ServerConfig.parse({ ...base, sending: { rateLimit: { perSecond: 14, burst: 50 } } })
    assert.deepStrictEqual(alone.sending.rateLimit?.store, { kind: "memory" })
  })
})
