// Three `mailroom` processes on one PostgreSQL draining messages scheduled for the same second into one
// outbox, one of them SIGKILLed halfway: every message is in the outbox exactly once, none lost. CI runs
// 300; MAILROOM_FLEET_MESSAGES=10000 runs the full size (bench-sized: minutes on two cores).
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type PostgresCluster, startAll, startPostgresCluster } from "@mailroom/test-support"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { type ServerProcess, startServer } from "./support/serverProcess.js"

const total = Number(process.env.MAILROOM_FLEET_MESSAGES ?? 300)
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe(`three servers on one PostgreSQL drain ${total} scheduled messages`, () => {
  let dir: string
  let cluster: PostgresCluster
  let servers: Array<ServerProcess> = []
  const outbox = async () => {
    try {
      return (await readdir(join(dir, "outbox"))).filter((name) => name.endsWith(".eml"))
    } catch {
      return []
    }
  }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "mailroom-scheduled-fleet-"))
    cluster = await startPostgresCluster()
    const path = join(dir, "mailroom.config.json")
    await writeFile(
      path,
      JSON.stringify({
        serviceDomain: "mailroom.test",
        organizations: [{ id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"], apiKeys: ["mr_test_acme"] }],
        storage: { kind: "local", dir: "storage", signingSecret: "fleet-secret" },
        // One outbox for the three, as one vendor account is: it holds each message as one file.
        provider: { kind: "outbox", dir: "outbox" },
        idempotency: { kind: "memory" },
        viewer: { enabled: false },
        // A dead instance's looks are taken by another 3 s after it stopped renewing them.
        messages: { kind: "postgres", queue: { lockExpiration: "3 seconds" } }
      })
    )
    servers = await startAll(
      [1, 2, 3].map(() => ({ start: () => startServer(path, { DATABASE_URL: cluster.url }), stop: (s) => s.stop() }))
    )
    for (const server of servers) {
      const deadline = Date.now() + 30_000
      while ((await fetch(`${server.url}/readyz`)).status !== 200) {
        if (Date.now() > deadline) throw new Error(`${server.url} never became ready:\n${server.output().stderr}`)
        await pause(100)
      }
    }
  }, 60_000)

  afterAll(async () => {
    await Promise.all(servers.map((server) => server.stop()))
    await cluster?.destroy()
    if (dir !== undefined) await rm(dir, { recursive: true, force: true })
  })

  it(
    "one instance killed with SIGKILL halfway: every message in the outbox exactly once, none lost",
    async () => {
      const [first, second, third] = servers as [ServerProcess, ServerProcess, ServerProcess]
      // Scheduled through all three, a batch of 100 at a time, for one second far enough ahead.
      const when = new Date(Math.ceil((Date.now() + 5000 + total * 10) / 1000) * 1000).toISOString()
      const ids: Array<string> = []
      for (let start = 0; start < total; start += 100) {
        const server = servers[(start / 100) % 3] as ServerProcess
        const batch = Array.from({ length: Math.min(100, total - start) }, (_, i) => ({
          from: "billing@acme.example",
          to: [`user${start + i}@example.com`],
          subject: `Due ${start + i}`,
          body: { text: "Hi" },
          scheduled_at: when
        }))
        const response = await fetch(`${server.url}/emails/batch`, {
          method: "POST",
          headers: { "x-api-key": "mr_test_acme", "content-type": "application/json" },
          body: JSON.stringify(batch)
        })
        const body = (await response.json()) as { data: Array<{ message_id: string }>; errors: Array<unknown> }
        assert.deepStrictEqual(body.errors, [])
        ids.push(...body.data.map((d) => d.message_id))
      }
      assert.isBelow(Date.now(), Date.parse(when), "all were scheduled before their time")
      assert.strictEqual(ids.length, total)

      const deadline = Date.now() + 60_000 + total * 20
      while ((await outbox()).length < total / 2) {
        if (Date.now() > deadline) assert.fail(`halfway never came: ${(await outbox()).length} sent`)
        await pause(20)
      }
      second.signal("SIGKILL")
      const atKill = (await outbox()).length
      while ((await outbox()).length < total) {
        if (Date.now() > deadline) assert.fail(`only ${(await outbox()).length} of ${total} sent`)
        await pause(200)
      }
      // Past the dead instance's lock expiry and the survivors' next looks: nothing more appears.
      await pause(5000)
      const files = await outbox()
      assert.strictEqual(files.length, total, "none twice")
      assert.sameMembers(
        files,
        ids.map((id) => `${id}.eml`),
        "none lost"
      )
      assert.isBelow(atKill, total, "the kill came while messages were still due")
      for (const server of [first, third]) {
        const waiting = await fetch(`${server.url}/emails?status=scheduled&limit=1`, {
          headers: { "x-api-key": "mr_test_acme" }
        })
        assert.deepStrictEqual(((await waiting.json()) as { data: Array<unknown> }).data, [])
      }
    },
    Math.max(300_000, total * 60)
  )
})
