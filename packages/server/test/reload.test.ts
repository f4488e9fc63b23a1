// SIGHUP on the real process: the config file's organisations (keys, tokens, domains) change without
// a restart; a file that does not parse or check is logged and the running config is kept.
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { type ServerProcess, startServer } from "./support/serverProcess.js"

const acme = (keys: ReadonlyArray<string>, domains: ReadonlyArray<string> = ["acme.example"]) => ({
  id: "org_acme",
  slug: "acme",
  verifiedDomains: domains,
  apiKeys: keys
})
const config = (organizations: ReadonlyArray<unknown>, provider: Record<string, unknown> = {}) => ({
  serviceDomain: "mailroom.test",
  organizations,
  storage: { kind: "local", dir: "storage", signingSecret: "reload-secret" },
  provider: { kind: "outbox", dir: "outbox", ...provider }
})

describe("SIGHUP", () => {
  let dir: string
  let path: string
  let server: ServerProcess
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "mailroom-reload-"))
    path = join(dir, "mailroom.config.json")
    await writeFile(path, JSON.stringify(config([acme(["mr_test_old"])])))
    server = await startServer(path)
  })
  afterAll(async () => {
    await server?.stop()
    await rm(dir, { recursive: true, force: true })
  })

  const send = async (key: string, from = "billing@acme.example") => {
    const response = await fetch(`${server.url}/emails`, {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: JSON.stringify({ from, to: ["alice@example.com"], subject: "Hi", body: { text: "Hi" } })
    })
    return response.status
  }
  /** Writes the file, sends SIGHUP, and answers the line the server logs about it. */
  const reload = async (contents: string, expected: RegExp) => {
    await writeFile(path, contents)
    const line = server.waitFor(expected)
    server.signal("SIGHUP")
    return line
  }

  it("re-reads the organisations: a removed key is refused, a new key and a new domain work, no restart", async () => {
    assert.strictEqual(await send("mr_test_old"), 201)
    assert.strictEqual(await send("mr_test_new"), 401)
    const pid = server.pid
    const line = await reload(
      JSON.stringify(config([acme(["mr_test_new"], ["acme.example", "news.example"])])),
      /SIGHUP: reloaded/
    )
    assert.strictEqual(line, `SIGHUP: reloaded 1 organization from ${path}`)
    assert.strictEqual(await send("mr_test_old"), 401)
    assert.strictEqual(await send("mr_test_new"), 201)
    assert.strictEqual(await send("mr_test_new", "hello@news.example"), 201)
    assert.strictEqual(server.pid, pid)
  })

  it("a file that is not JSON, or does not check, is logged and the running organisations are kept", async () => {
    const notKept = "SIGHUP: the config was not reloaded; the running one is kept."
    // The reason is the last line the server writes about it, after the notice.
    await reload("{ not json", /is not valid JSON/)
    assert.include(server.output().stderr, `${notKept}\n${path} is not a valid mailroom config`)
    assert.strictEqual(await send("mr_test_new"), 201)

    // Valid JSON, but a key given twice: refused as a whole, nothing half-applied.
    const twice = { id: "org_globex", slug: "globex", apiKeys: ["mr_test_third"] }
    await reload(
      JSON.stringify(config([acme(["mr_test_third"]), twice])),
      /organizations\[1\]\.apiKeys\[0\]: is already configured/
    )
    assert.strictEqual(server.output().stderr.split(notKept).length, 3)
    assert.include(server.output().stderr, `${notKept}\n${path} is not a valid mailroom config:\n  - organizations[1]`)
    assert.strictEqual(await send("mr_test_new"), 201)
    assert.strictEqual(await send("mr_test_third"), 401)

    const typo = { ...config([acme(["mr_test_third"])]), organisations: [] }
    await reload(JSON.stringify(typo), /organisations: is not a known field/)
    assert.strictEqual(await send("mr_test_third"), 401)
    assert.strictEqual(await send("mr_test_new"), 201)
  })

  it("says which other sections changed and still need a restart", async () => {
    const line = await reload(JSON.stringify(config([acme(["mr_test_new"])], { paused: true })), /SIGHUP: reloaded/)
    assert.strictEqual(line, `SIGHUP: reloaded 1 organization from ${path}; provider changed too, and take a restart`)
    // The provider is not paused: only organisations were applied.
    assert.strictEqual(await send("mr_test_new"), 201)
  })
})
