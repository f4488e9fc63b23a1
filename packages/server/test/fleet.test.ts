// Three `mailroom` processes on one Redis and one PostgreSQL behind a round-robin proxy, sending
// through an SES stand-in that counts recipients per second: together they keep to the account's
// rate, no message goes out twice (also when an Idempotency-Key is retried on every instance), and a
// key revoked in the database is refused by all three within the cache time.
import { createHash } from "node:crypto"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import {
  type PostgresCluster as Cluster,
  type RedisServer,
  startAll,
  startPostgresCluster as startCluster,
  startRedisServer
} from "@mailroom/test-support"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { migrate } from "../../postgres/test/support/migrate.js"
import { type RoundRobinProxy, startRoundRobinProxy } from "./support/roundRobinProxy.js"
import { type ServerProcess, startServer } from "./support/serverProcess.js"
import { type SesStandIn, startSesStandIn } from "./support/sesStandIn.js"

const sha256Hex = (value: string) => createHash("sha256").update(value, "utf8").digest("hex")

// The account sends 20 recipients a second; the limiter's bucket holds 3 (a whole message). So at most
// 23 are sent in any second, which is all the stand-in accepts (beyond, it answers 429 as SES does).
const maxSendRate = 20
const burst = 3
const cacheSeconds = 1
// A send may reach the stand-in a little after its slot (a busy event loop, three processes on two
// cores): up to a quarter of a second's worth of recipients is tolerated beyond the bound.
const jitter = Math.ceil(maxSendRate / 4)

interface Outcome {
  readonly status: number
  readonly body: Record<string, unknown>
  readonly replayed: boolean
}

const send = async (url: string, body: unknown, headers: Record<string, string> = {}): Promise<Outcome> => {
  const response = await fetch(`${url}/emails`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": "mr_live_fleet", ...headers },
    body: JSON.stringify(body)
  })
  return {
    status: response.status,
    body: (await response.json()) as Record<string, unknown>,
    replayed: response.headers.get("idempotent-replayed") === "true"
  }
}

/** As a client does: a 429 is sent again after its Retry-After. */
const sendPatiently = async (url: string, body: unknown, headers: Record<string, string> = {}) => {
  for (let attempt = 1; ; attempt++) {
    const outcome = await send(url, body, headers)
    if (outcome.status !== 429 || attempt === 5) return outcome
    await new Promise((resolve) => setTimeout(resolve, 1000))
  }
}

const message = (i: number) => ({
  from: "billing@acme.example",
  // 1 to 3 recipients, across to, cc and bcc: the limiter counts them all.
  to: [`to${i}@example.com`],
  ...(i % 3 >= 1 ? { cc: [`cc${i}@example.com`] } : {}),
  ...(i % 3 === 2 ? { bcc: [`bcc${i}@example.com`] } : {}),
  subject: `send-${i}`,
  body: { text: `Message ${i}` }
})

/** Runs `task` on each item, at most `concurrency` at a time. */
const pool = async <A, B>(items: ReadonlyArray<A>, concurrency: number, task: (item: A) => Promise<B>) => {
  const results: Array<B> = []
  let index = 0
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (index < items.length) {
        const i = index++
        results[i] = await task(items[i] as A)
      }
    })
  )
  return results
}

describe("a fleet of three servers", () => {
  let dir: string
  let cluster: Cluster
  let redis: RedisServer
  let ses: SesStandIn
  let servers: Array<ServerProcess> = []
  let proxy: RoundRobinProxy

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "mailroom-fleet-"))
    ;[cluster, redis, ses] = await startAll([
      { start: startCluster, stop: (c) => c.destroy() },
      { start: startRedisServer, stop: (r) => r.dispose() },
      { start: () => startSesStandIn({ maxSendRate, acceptPerSecond: maxSendRate + burst }), stop: (s) => s.close() }
    ])
    await migrate(cluster.url)
    await cluster.psql(`INSERT INTO mailroom_organizations (id, slug) VALUES ('org_acme', 'acme')`)
    await cluster.psql(
      `INSERT INTO mailroom_verified_domains (organization_id, domain) VALUES ('org_acme', 'acme.example')`
    )
    for (const key of ["mr_live_fleet", "mr_live_revoked"]) {
      await cluster.psql(
        `INSERT INTO mailroom_api_keys (organization_id, sha256) VALUES ('org_acme', '${sha256Hex(key)}')`
      )
    }
    const path = join(dir, "mailroom.config.json")
    await writeFile(
      path,
      JSON.stringify({
        serviceDomain: "mailroom.test",
        organizations: { kind: "postgres", cacheSeconds },
        storage: { kind: "local", dir: "storage", signingSecret: "fleet-secret" },
        provider: {
          kind: "ses",
          region: "eu-west-1",
          endpoint: ses.url,
          accessKeyId: "AKIDFLEET",
          secretAccessKey: "fleet-secret-key"
        },
        idempotency: { kind: "redis" },
        sending: { rateLimit: { from: "ses", burst, wait: "10 seconds" } },
        metrics: { enabled: true }
      })
    )
    const env = { DATABASE_URL: cluster.url, REDIS_URL: redis.url }
    servers = await startAll([1, 2, 3].map(() => ({ start: () => startServer(path, env), stop: (s) => s.stop() })))
    // "listening" comes before the layers are built: a load balancer waits for /readyz.
    for (const server of servers) {
      const deadline = Date.now() + 20_000
      while ((await fetch(`${server.url}/readyz`)).status !== 200) {
        if (Date.now() > deadline) throw new Error(`${server.url} never became ready:\n${server.output().stdout}`)
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
    }
    proxy = await startRoundRobinProxy(servers.map((s) => s.url))
  }, 60_000)

  afterAll(async () => {
    await proxy?.close()
    await Promise.all(servers.map((server) => server.stop()))
    await Promise.all([cluster?.destroy(), redis?.dispose(), ses?.close()])
    if (dir !== undefined) await rm(dir, { recursive: true, force: true })
  })

  it("60 sends through the proxy keep to the account's rate together, each sent once", async () => {
    // Each instance reads the rate at start-up; the provider's verify (start-up, /readyz) asks GetAccount too.
    assert.isAtLeast(ses.accountReads(), 3, "each instance read the rate from GetAccount")
    const indexes = Array.from({ length: 60 }, (_, i) => i)
    // Every third send carries an Idempotency-Key.
    const keyOf = (i: number) => (i % 3 === 0 ? { "idempotency-key": `order-${i}` } : {})
    const outcomes = await pool(indexes, 12, (i) => sendPatiently(proxy.url, message(i), keyOf(i)))
    outcomes.forEach((outcome, i) => {
      assert.strictEqual(outcome.status, 201, `send-${i}: ${JSON.stringify(outcome.body)}`)
    })

    // Each keyed send again, on every instance directly: the first response, nothing sent.
    for (const i of indexes.filter((i) => i % 3 === 0)) {
      for (const server of servers) {
        const again = await send(server.url, message(i), keyOf(i))
        assert.strictEqual(again.status, 201)
        assert.isTrue(again.replayed, `order-${i} replayed on ${server.url}`)
        assert.strictEqual(again.body.message_id, outcomes[i]?.body.message_id)
      }
    }
    // A new key sent to all three at once: one of them sends it, the others answer 409 or replay.
    const racing = await Promise.all(
      servers.map((server) => send(server.url, message(100), { "idempotency-key": "order-race" }))
    )
    assert.strictEqual(racing.filter((r) => r.status === 201 && !r.replayed).length, 1, JSON.stringify(racing))
    for (const r of racing) assert.include([201, 409], r.status)

    // What the stand-in saw: never more than the bucket allows in any second.
    const perSecond = [...ses.perSecond().values()]
    const busiest = Math.max(...perSecond)
    assert.isAtMost(busiest, maxSendRate + burst + jitter, `recipients per second: ${perSecond.join(", ")}`)
    // 121 recipients at 20 a second take 6 s at the least: the pacing was real, and spread the load.
    assert.isAtLeast(perSecond.length, 5, `recipients per second: ${perSecond.join(", ")}`)
    // No message sent twice: each subject accepted exactly once (a 429 from the stand-in sent nothing).
    const accepted = new Map<string, number>()
    for (const seen of ses.seen) if (seen.accepted) accepted.set(seen.subject, (accepted.get(seen.subject) ?? 0) + 1)
    for (const i of [...indexes, 100]) assert.strictEqual(accepted.get(`send-${i}`), 1, `send-${i}`)
    assert.strictEqual(accepted.size, 61)

    // The proxy spread the sends: every instance answered some, and waited on the shared bucket.
    for (const server of servers) {
      const metrics = await (await fetch(`${server.url}/metrics`)).text()
      assert.match(metrics, /^mailroom_http_requests_total\{method="POST",route="\/emails",status="201"\} [1-9]/m)
      assert.match(metrics, /^mailroom_rate_limiter_wait_seconds_count [1-9]/m)
    }
  }, 60_000)

  it("a key revoked in PostgreSQL is refused by all three within the cache time", async () => {
    const presign = (url: string) =>
      fetch(`${url}/attachments/presign`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": "mr_live_revoked" },
        body: JSON.stringify({ filename: "a.txt", content_type: "text/plain" })
      }).then((r) => r.status)
    // Each instance has the key cached as valid: what follows proves the cache expires.
    for (const server of servers) assert.strictEqual(await presign(server.url), 201)
    await cluster.psql(
      `UPDATE mailroom_api_keys SET revoked_at = now() WHERE sha256 = '${sha256Hex("mr_live_revoked")}'`
    )
    const revokedAt = Date.now()
    const refusedAfter = await Promise.all(
      servers.map(async (server) => {
        while ((await presign(server.url)) !== 401) {
          if (Date.now() - revokedAt > 10_000) return Number.POSITIVE_INFINITY
          await new Promise((resolve) => setTimeout(resolve, 50))
        }
        return Date.now() - revokedAt
      })
    )
    // cacheSeconds plus the time a lookup and a request take on a loaded machine.
    for (const ms of refusedAfter) assert.isAtMost(ms, cacheSeconds * 1000 + 1500, `refused after ${refusedAfter}`)
  }, 30_000)
})
