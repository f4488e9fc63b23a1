// A PostgreSQL that answers a COMMIT after the 5 s deadline (synchronous replication to a standby that
// does not exist holds it): a scheduled message whose claim committed late is still sent, once, through
// a provider that does not de-duplicate (SMTP), where it was recorded `unknown` and never sent; and a
// send refused because its record's COMMIT was late is recorded `failed`, where it read `sending`.
import { spawn } from "node:child_process"
import { writeFile } from "node:fs/promises"
import { join } from "node:path"
import { type PostgresCluster, startPostgresCluster, type TempDir, tempDir } from "@mailroom/test-support"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import * as SmtpPeer from "../../smtp/test/support/SmtpPeer.js"
import { type ServerProcess, startServer } from "./support/serverProcess.js"

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Polls `check` every 100 ms until it holds, failing with `what` after `ms`. */
const until = async (what: string, check: () => Promise<boolean>, ms = 30_000) => {
  for (const deadline = Date.now() + ms; !(await check()); await pause(100)) {
    if (Date.now() > deadline) assert.fail(`never: ${what}`)
  }
}

describe("a scheduled message whose claim commits after its deadline", () => {
  let cluster: PostgresCluster
  let peer: SmtpPeer.Peer
  let dir: TempDir
  let server: ServerProcess
  beforeAll(async () => {
    cluster = await startPostgresCluster()
    peer = await SmtpPeer.start({ hideSTARTTLS: true })
    dir = await tempDir("late-commit")
    const path = join(dir.path, "mailroom.config.json")
    await writeFile(
      path,
      JSON.stringify({
        serviceDomain: "mailroom.test",
        organizations: [{ id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"], apiKeys: ["mr_test_acme"] }],
        storage: { kind: "local", dir: "storage", signingSecret: "late-commit-secret" },
        provider: { kind: "smtp", host: "127.0.0.1", port: peer.port },
        idempotency: { kind: "memory" },
        viewer: { enabled: false },
        messages: { kind: "postgres" }
      })
    )
    // The test cluster runs with synchronous_commit=off; the role's setting wins for the server's
    // sessions, and with no standby named a COMMIT waits for nothing until `hold` names one.
    await cluster.psql("ALTER ROLE postgres SET synchronous_commit = on")
    server = await startServer(path, { DATABASE_URL: cluster.url })
    await until("ready", async () => (await fetch(`${server.url}/readyz`)).status === 200)
  }, 60_000)
  afterAll(async () => {
    await server?.stop()
    await peer?.close()
    await cluster?.destroy()
    await dir?.remove()
  })

  const hold = async (on: boolean) => {
    await cluster.psql(
      on ? "ALTER SYSTEM SET synchronous_standby_names = 'nobody'" : "ALTER SYSTEM RESET synchronous_standby_names"
    )
    await cluster.psql("SELECT pg_reload_conf()")
  }
  const status = async (id: string) =>
    (await cluster.psql(`SELECT status FROM mailroom_messages WHERE id = '${id}'`))[0]?.[0]

  it("is put back once the database answers, and sent once", { timeout: 90_000 }, async () => {
    // Far enough ahead that the test's own session holds the row's lock first, on a busy machine too.
    const when = new Date(Math.ceil((Date.now() + 8000) / 1000) * 1000).toISOString()
    const scheduled = await fetch(`${server.url}/emails`, {
      method: "POST",
      headers: { "x-api-key": "mr_test_acme", "content-type": "application/json" },
      body: JSON.stringify({
        from: "billing@acme.example",
        to: ["alice@example.com"],
        subject: "Held commit",
        body: { text: "Hi" },
        scheduled_at: when
      })
    })
    assert.strictEqual(scheduled.status, 202, await scheduled.clone().text())
    const { message_id: id } = (await scheduled.json()) as { message_id: string }
    // A session of the test's own locks the row before the message's time, so the claim waits on it.
    const locker = spawn("psql", ["-h", "127.0.0.1", "-p", String(cluster.port), "-U", "postgres", "-X", "-q"], {
      stdio: ["pipe", "ignore", "inherit"]
    })
    const lockerExited = new Promise((resolve) => locker.once("exit", resolve))
    try {
      locker.stdin.write(`BEGIN; SELECT 1 FROM mailroom_messages WHERE id = '${id}' FOR UPDATE;\n`)
      await until("the test's session holds the row", async () => {
        const [[held]] = (await cluster.psql(
          "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid) WHERE l.mode = 'RowShareLock' AND a.application_name = 'psql' AND a.state = 'idle in transaction'"
        )) as [[string]]
        return held !== "0"
      })
      assert.strictEqual(await status(id), "scheduled", "the lock was taken before the message's time")
      await until("the claim waits on the row's lock", async () => {
        const [[waiting]] = (await cluster.psql(
          "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%mailroom_messages%'"
        )) as [[string]]
        return waiting !== "0"
      })
      // Every COMMIT is held from now on; the lock goes, the claim runs and its COMMIT waits.
      const late = server.waitFor(
        /the message database failed \(claiming a scheduled message\): no answer within/,
        20_000
      )
      await hold(true)
      locker.stdin.end("ROLLBACK;\n")
      await lockerExited
      await late
    } finally {
      locker.kill()
      await hold(false)
    }
    await until("sent", async () => (await status(id)) === "sent", 60_000)
    assert.strictEqual(peer.received.filter((m) => m.raw.toString().includes("Subject: Held commit")).length, 1)
  })

  it("a send refused because its record's COMMIT was late: the record is failed, not sending", {
    timeout: 90_000
  }, async () => {
    await hold(true)
    let refused: Response
    try {
      refused = await fetch(`${server.url}/emails`, {
        method: "POST",
        headers: { "x-api-key": "mr_test_acme", "content-type": "application/json" },
        body: JSON.stringify({
          from: "billing@acme.example",
          to: ["bob@example.com"],
          subject: "Refused",
          body: { text: "Hi" }
        })
      })
    } finally {
      await hold(false)
    }
    assert.strictEqual(refused.status, 503)
    assert.strictEqual(((await refused.json()) as { may_have_been_sent: boolean }).may_have_been_sent, false)
    // The record landed once the COMMIT was answered; it is taken back within seconds.
    const idOf = async () =>
      (await cluster.psql("SELECT id FROM mailroom_messages WHERE subject = 'Refused'"))[0]?.[0] as string | undefined
    await until("the late record", async () => (await idOf()) !== undefined)
    const id = (await idOf()) as string
    await until("failed", async () => (await status(id)) === "failed", 30_000)
    const [[reason]] = (await cluster.psql(`SELECT reason FROM mailroom_messages WHERE id = '${id}'`)) as [[string]]
    assert.include(reason, "nothing went to the provider")
    assert.strictEqual(peer.received.filter((m) => m.raw.toString().includes("Subject: Refused")).length, 0)
  })
})
