// The server process with its organisations in a real PostgreSQL: keys created and revoked in the
// database as a workspace application would, a revocation seen within the cache time, an outage a 503.
import { createHash } from "node:crypto"
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type PostgresCluster as Cluster, startPostgresCluster as startCluster } from "@mailroom/test-support"
import { simpleParser } from "mailparser"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { migrate } from "../../postgres/test/support/migrate.js"
import { ServerConfig } from "../src/index.js"
import { type ServerProcess, startServer } from "./support/serverProcess.js"

const sha256Hex = (value: string) => createHash("sha256").update(value, "utf8").digest("hex")
const cacheSeconds = 1

describe("the mailroom command with organisations from PostgreSQL", () => {
  let cluster: Cluster
  let dir: string
  let server: ServerProcess

  const insertKey = (key: string, table = "mailroom_api_keys") =>
    cluster.psql(`INSERT INTO ${table} (organization_id, sha256) VALUES ('org_acme', '${sha256Hex(key)}')`)
  /** The status, `Retry-After` and body of a POST. */
  const answer = async (path: string, headers: Record<string, string>, body?: unknown) => {
    const response = await fetch(`${server.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body ?? { filename: "a.txt", content_type: "text/plain" })
    })
    return {
      status: response.status,
      retryAfter: response.headers.get("retry-after"),
      body: (await response.json()) as Record<string, unknown>
    }
  }
  const call = async (path: string, headers: Record<string, string>, body?: unknown) => {
    const { status, body: answered } = await answer(path, headers, body)
    return { status, body: answered }
  }
  const message = (attachments: ReadonlyArray<{ filename: string; key: string }> = []) => ({
    from: "billing@acme.example",
    to: ["alice@example.com"],
    subject: "Your invoice",
    body: { text: "Attached." },
    attachments
  })

  beforeAll(async () => {
    cluster = await startCluster()
    await migrate(cluster.url)
    await cluster.psql(`INSERT INTO mailroom_organizations (id, slug) VALUES ('org_acme', 'acme')`)
    await cluster.psql(
      `INSERT INTO mailroom_verified_domains (organization_id, domain) VALUES ('org_acme', 'acme.example')`
    )
    for (const key of ["mr_live_first", "mr_live_second", "mr_live_third"]) await insertKey(key)
    await insertKey("tok_acme", "mailroom_access_tokens")
    dir = await mkdtemp(join(tmpdir(), "mailroom-server-postgres-"))
    const path = join(dir, "mailroom.config.json")
    await writeFile(
      path,
      JSON.stringify({
        serviceDomain: "mailroom.test",
        // No url: it comes from DATABASE_URL, so the file holds no password.
        organizations: { kind: "postgres", cacheSeconds, timeoutSeconds: 1 },
        storage: { kind: "local", dir: "storage", signingSecret: "postgres-test-secret" },
        provider: { kind: "outbox", dir: "outbox" }
      })
    )
    server = await startServer(path, { DATABASE_URL: cluster.url })
  }, 60_000)

  afterAll(async () => {
    await server?.stop()
    await cluster?.destroy()
    if (dir !== undefined) await rm(dir, { recursive: true, force: true })
  })

  it("presign, upload and send with a key from the database; revoked there, it is a 401 within the cache time", async () => {
    const key = { "x-api-key": "mr_live_first" }
    const presigned = await call("/attachments/presign", key)
    assert.strictEqual(presigned.status, 201, JSON.stringify(presigned.body))
    const { url, key: storageKey } = presigned.body as { url: string; key: string }
    assert.isTrue(storageKey.startsWith("attachments/org_acme/"), storageKey)
    const put = await fetch(url, { method: "PUT", headers: { "content-type": "text/plain" }, body: "hello" })
    assert.strictEqual(put.status, 200)
    const sent = await call("/emails", key, message([{ filename: "a.txt", key: storageKey }]))
    assert.strictEqual(sent.status, 201, JSON.stringify(sent.body))
    const parsed = await simpleParser(await readFile(join(dir, "outbox", `${sent.body.message_id}.eml`)))
    assert.strictEqual(parsed.from?.value[0]?.address, "billing@acme.example")
    assert.strictEqual(parsed.attachments[0]?.content.toString(), "hello")
    // The v1 variant's bearer token comes from its own table.
    const bearer = await call("/v1/attachments/presign", { authorization: "Bearer tok_acme" })
    assert.strictEqual(bearer.status, 201, JSON.stringify(bearer.body))

    await cluster.psql(`UPDATE mailroom_api_keys SET revoked_at = now() WHERE sha256 = '${sha256Hex("mr_live_first")}'`)
    const revokedAt = Date.now()
    let refused = await call("/attachments/presign", key)
    while (refused.status === 201) {
      await new Promise((resolve) => setTimeout(resolve, 50))
      refused = await call("/attachments/presign", key)
    }
    const elapsed = Date.now() - revokedAt
    assert.strictEqual(refused.status, 401)
    assert.deepStrictEqual(refused.body, { message: "missing, invalid or revoked credential" })
    // cacheSeconds plus the time a lookup and a request take on a loaded machine: still well under
    // the 5 s a server that ignored cacheSeconds would keep the key.
    assert.isAtMost(elapsed, cacheSeconds * 1000 + 1500, `refused ${elapsed} ms after revoking`)
    const send = await call("/emails", key, message())
    assert.deepStrictEqual(send, { status: 401, body: { message: "missing, invalid or revoked credential" } })
    // The organisation's other key is untouched.
    assert.strictEqual((await call("/emails", { "x-api-key": "mr_live_second" }, message())).status, 201)
  })

  it("a v1 bearer token whose revoked_at has passed is a 401; one revoked for later still works", async () => {
    await cluster.psql(
      `INSERT INTO mailroom_access_tokens (organization_id, sha256, revoked_at) VALUES
        ('org_acme', '${sha256Hex("tok_acme_revoked")}', now() - interval '1 minute'),
        ('org_acme', '${sha256Hex("tok_acme_rolling")}', now() + interval '1 hour')`
    )
    const revoked = await call("/v1/attachments/presign", { authorization: "Bearer tok_acme_revoked" })
    assert.deepStrictEqual(
      revoked,
      { status: 401, body: { message: "missing, invalid or revoked credential" } },
      "a bearer token whose revoked_at is in the past must be refused"
    )
    const rolling = await call("/v1/attachments/presign", { authorization: "Bearer tok_acme_rolling" })
    assert.strictEqual(
      rolling.status,
      201,
      `a bearer token whose revoked_at is in the future must still work: ${JSON.stringify(rolling.body)}`
    )
  })

  it("a database outage is a 503 in each operation's shape, never a 401; back up, the same key works", async () => {
    const key = { "x-api-key": "mr_live_third" } // never used before: no cached answer hides the outage
    const logged = server.waitFor(/organisations database cannot be reached/)
    await cluster.stop()
    try {
      const send = await answer("/emails", key, message())
      assert.strictEqual(send.status, 503)
      assert.deepStrictEqual(Object.keys(send.body), ["error", "may_have_been_sent"])
      assert.isFalse(send.body.may_have_been_sent)
      assert.include(String(send.body.error), "cannot be checked right now")
      assert.strictEqual(send.retryAfter, "5", "an outage says when to try again, as the message database's does")
      const presign = await answer("/attachments/presign", key)
      assert.strictEqual(presign.status, 503)
      assert.deepStrictEqual(Object.keys(presign.body), ["error"])
      assert.strictEqual(presign.retryAfter, "5")
      await new Promise((resolve) => setTimeout(resolve, cacheSeconds * 1000 + 100))
      const v1 = await call("/v1/attachments/presign", { authorization: "Bearer tok_acme" })
      assert.strictEqual(v1.status, 503)
      assert.deepStrictEqual(Object.keys(v1.body), ["message"])
      assert.include(await logged, "ECONNREFUSED")
    } finally {
      await cluster.start()
    }
    assert.strictEqual((await call("/emails", key, message())).status, 201)
  })
})

describe("ServerConfig: organizations from PostgreSQL", () => {
  const base = {
    serviceDomain: "mailroom.test",
    storage: { kind: "local", dir: "s", signingSecret: "x" },
    provider: { kind: "outbox", dir: "o" }
  }
  const problems = (organizations: unknown, env: Record<string, string> = {}) => {
    try {
      ServerConfig.parse({ ...base, organizations }, { env })
    } catch (error) {
      return (error as ServerConfig.ServerConfigError).problems
    }
    return []
  }

  it("the URL comes from the file or from DATABASE_URL; the file's list is then empty", () => {
    const fromEnv = ServerConfig.parse(
      { ...base, organizations: { kind: "postgres", cacheSeconds: 2 } },
      { env: { DATABASE_URL: "postgres://mailroom:secret@db.internal:5432/app" } }
    )
    assert.deepStrictEqual(fromEnv.organizationsSource, {
      kind: "postgres",
      cacheSeconds: 2,
      url: "postgres://mailroom:secret@db.internal:5432/app"
    })
    assert.deepStrictEqual(fromEnv.organizations, [])
    const fromFile = ServerConfig.parse(
      { ...base, organizations: { kind: "postgres", url: "postgresql://db.internal/app" } },
      { env: { DATABASE_URL: "postgres://elsewhere/app" } }
    )
    assert.strictEqual(
      fromFile.organizationsSource.kind === "postgres" && fromFile.organizationsSource.url,
      "postgresql://db.internal/app"
    )
    const listed = ServerConfig.parse({ ...base, organizations: [{ id: "org_acme", slug: "acme" }] })
    assert.deepStrictEqual(listed.organizationsSource, { kind: "config" })
  })

  it("a missing URL, an unknown field, a wrong URL or a wrong shape is named, never echoing the password", () => {
    assert.deepStrictEqual(problems({ kind: "postgres" }), [
      "organizations.url: is required, or set the DATABASE_URL environment variable"
    ])
    assert.deepStrictEqual(problems({ kind: "postgres", url: "postgres://h/db", cacheTTL: 5, cacheCapacity: 0 }), [
      "organizations.cacheTTL: is not a known field",
      "organizations.cacheCapacity: must be a whole number above 0"
    ])
    const wrongUrl = problems({ kind: "postgres", url: "mysql://mailroom:hunter2@db/app" })
    assert.deepStrictEqual(wrongUrl, ["organizations.url: must be a postgres:// or postgresql:// URL"])
    assert.deepStrictEqual(problems({ kind: "postgres" }, { DATABASE_URL: "mysql://mailroom:hunter2@db/app" }), [
      "DATABASE_URL: must be a postgres:// or postgresql:// URL"
    ])
    assert.deepStrictEqual(problems({ kind: "mysql" }), [
      'organizations: must be a list of organizations, or {"kind": "postgres", ...}'
    ])
    assert.deepStrictEqual(problems([{ id: "org_acme" }]), ["organizations[0].slug: is required"])
  })
})
