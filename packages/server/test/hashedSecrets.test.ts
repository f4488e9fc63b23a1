// Secrets the config takes as `sha256:<hex>`: a malformed one stops start-up naming its field (once it
// crashed the process at the first request that presented a value), and every comparison answers no.
import { createHash } from "node:crypto"
import { writeFile } from "node:fs/promises"
import { request } from "node:http"
import { join } from "node:path"
import { type TempDir, tempDir } from "@mailroom/test-support"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { ServerConfig } from "../src/index.js"
import * as Access from "../src/internal/viewer/access.js"
import { run } from "./process.js"

const hashProblem = 'a hashed secret must be "sha256:" followed by exactly 64 hex digits (the SHA-256 of the secret)'
const goodHash = `sha256:${createHash("sha256").update("viewer-admin-token").digest("hex")}`

const base = {
  serviceDomain: "mailroom.test",
  organizations: [{ id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"], apiKeys: ["mr_test_acme"] }],
  storage: { kind: "local", dir: "storage", signingSecret: "hashed-secrets-test" },
  provider: { kind: "outbox", dir: "outbox" }
}

/** GET with a header and agent of our own choosing; rejects when the connection fails. */
const get = (url: string, headers: Record<string, string>) =>
  new Promise<number>((resolve, reject) => {
    const req = request(url, { headers, agent: false }, (res) => {
      res.resume()
      res.on("end", () => resolve(res.statusCode ?? 0))
    })
    req.on("error", reject)
    req.end()
  })

describe("a malformed sha256: secret in the config", () => {
  let dir: TempDir
  beforeAll(async () => {
    dir = await tempDir("hashed-secrets")
  })
  afterAll(() => dir.remove())

  /** Runs the built `mailroom` on `config`: its exit code and stderr when it refuses to start. */
  const refusal = async (name: string, config: Record<string, unknown>, env: Record<string, string> = {}) => {
    const path = join(dir.path, `${name}.json`)
    await writeFile(path, JSON.stringify(config))
    const server = run(path, { HOST: "127.0.0.1", ...env })
    const started = await server.listening.catch(() => undefined)
    if (started !== undefined) {
      // It started: the request that once killed it must be answered, and the process still be there.
      try {
        const status = await get(`${started}/_mailroom/outbox/`, { "x-mailroom-viewer-token": "anything" }).catch(
          async (error: unknown) => {
            // No answer: see whether the process is gone.
            await Promise.race([server.exited, new Promise((resolve) => setTimeout(resolve, 2000))])
            return `no answer: ${String(error)}`
          }
        )
        assert.isNull(server.child.exitCode, `the server died on a viewer request: ${server.output().stderr}`)
        assert.fail(`the server started on a malformed hashed secret (the viewer request got ${status})`)
      } finally {
        server.child.kill("SIGKILL")
        await server.exited
      }
    }
    return { code: await server.exited, stderr: server.output().stderr }
  }

  it("viewer.token sha256:abcd: the process refuses to start, naming the field, and never crashes on a request", async () => {
    const { code, stderr } = await refusal("viewer", { ...base, viewer: { token: "sha256:abcd" } })
    assert.strictEqual(code, 1)
    assert.include(stderr, `viewer.token: ${hashProblem}`)
    // The value is not repeated, whatever it is.
    assert.notInclude(stderr, "abcd")
  })

  it("an organisation's API key, read from the file: the process refuses to start, naming the field", async () => {
    const organizations = [{ ...base.organizations[0], apiKeys: ["mr_test_acme", "sha256:12345"] }]
    const { code, stderr } = await refusal("apikey", { ...base, organizations })
    assert.strictEqual(code, 1)
    assert.include(stderr, `organizations[0].apiKeys[1]: ${hashProblem}`)
  })

  it("names the other hashed fields, written in the file or read from the environment", () => {
    const problems = (extra: Record<string, unknown>, env: Record<string, string> = {}) => {
      try {
        ServerConfig.parse({ ...base, ...extra }, { baseDir: dir.path, env })
        return []
      } catch (error) {
        return (error as ServerConfig.ServerConfigError).problems
      }
    }
    const malformed = `sha256:${"a".repeat(63)}g`
    const organizations = [{ ...base.organizations[0], accessTokens: ["tok_ok", malformed] }]
    assert.deepStrictEqual(problems({ organizations }), [`organizations[0].accessTokens[1]: ${hashProblem}`])
    assert.deepStrictEqual(problems({ viewer: { token: { env: "VIEWER" } } }, { VIEWER: "sha256:" }), [
      `viewer.token: ${hashProblem}`
    ])
    assert.deepStrictEqual(problems({ metrics: { enabled: true, token: `${goodHash}00` } }), [
      `metrics.token: ${hashProblem}`
    ])
    assert.deepStrictEqual(
      problems({ metrics: { enabled: true, token: { env: "METRICS" } } }, { METRICS: "sha256:x" }),
      [`metrics.token: ${hashProblem}`]
    )
  })

  it("names the events section's hashed credentials", () => {
    const problems = (events: Record<string, unknown>, env: Record<string, string> = {}) => {
      try {
        ServerConfig.parse({ ...base, events }, { baseDir: dir.path, env })
        return []
      } catch (error) {
        return (error as ServerConfig.ServerConfigError).problems
      }
    }
    assert.deepStrictEqual(
      problems(
        {
          ses: { eventBridgeSecret: "sha256:abcd" },
          postmark: {
            basicAuth: { username: "sha256:ff", password: { env: "PM_PASSWORD" } },
            header: { name: "x-secret", value: `${goodHash}0` }
          }
        },
        { PM_PASSWORD: "sha256:0" }
      ),
      [
        `events.ses.eventBridgeSecret: ${hashProblem}`,
        `events.postmark.basicAuth.username: ${hashProblem}`,
        `events.postmark.basicAuth.password: ${hashProblem}`,
        `events.postmark.header.value: ${hashProblem}`
      ]
    )
    // Well-formed hashes, upper-case hex included, are taken.
    assert.deepStrictEqual(
      problems({ ses: { eventBridgeSecret: goodHash.toUpperCase().replace("SHA256:", "sha256:") } }),
      []
    )
  })
})

describe("the viewer's token check", () => {
  const decide = (token: string, headers: Record<string, string>) =>
    Access.make({ enabled: true, token, host: "127.0.0.1", secure: false }).decide(
      { method: "GET", headers } as never,
      new URL("http://127.0.0.1/_mailroom/outbox/")
    )

  it("answers no, never throws, whatever the configured token and the presented value", () => {
    for (const token of ["sha256:abcd", "sha256:", `${goodHash}00`]) {
      for (const presented of ["", "abcd", "x".repeat(10_000), "\u00e9"]) {
        assert.deepStrictEqual(decide(token, { "x-mailroom-viewer-token": presented }), { kind: "hidden" })
        assert.deepStrictEqual(decide(token, { cookie: `mailroom_viewer=${presented}` }), { kind: "hidden" })
      }
    }
    assert.deepStrictEqual(decide(goodHash, { "x-mailroom-viewer-token": "viewer-admin-token" }), { kind: "allowed" })
  })
})
