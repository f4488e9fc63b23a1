// Who reaches the outbox viewer: a loopback listener serves it to a loopback Host; beyond loopback it
// takes the admin token (header, or the cookie set after ?token=); an organisation's credential
// never opens it; everyone else gets the API's 404, not the page.
import { createHash } from "node:crypto"
import { mkdtemp, rm } from "node:fs/promises"
import { request } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, afterEach, assert, beforeAll, describe, it } from "vitest"
import { Server, ServerConfig } from "../src/index.js"
import { launchChromium } from "./support/browser.js"

const organizations = [
  {
    id: "org_acme",
    slug: "acme",
    verifiedDomains: ["acme.example"],
    apiKeys: ["mr_test_acme"],
    accessTokens: ["tok_acme"]
  }
]
const adminToken = "viewer-admin-token-1"

const configFor = (dir: string, extra: Record<string, unknown> = {}, env: Record<string, string> = {}) =>
  ServerConfig.parse(
    {
      port: 0,
      serviceDomain: "mailroom.test",
      organizations,
      storage: { kind: "local", dir: "storage", signingSecret: "access-test" },
      provider: { kind: "outbox", dir: "outbox" },
      ...extra
    },
    { baseDir: dir, source: "test config", env }
  )

/** GET (or `method`) with any Host header (fetch will not send one of its own choosing). */
const get = (url: string, headers: Record<string, string> = {}, method = "GET") =>
  new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }>(
    (resolve, reject) => {
      const req = request(url, { method, headers }, (res) => {
        let body = ""
        res.on("data", (chunk: Buffer) => {
          body += chunk.toString()
        })
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }))
      })
      req.on("error", reject)
      req.end()
    }
  )

const isViewerPage = (body: string) => body.includes("<title>Outbox · mailroom</title>")

describe("access to the outbox viewer", () => {
  let dir: string
  const running: Array<Server.RunningServer> = []
  const start = async (config: ServerConfig.Config, host?: string) => {
    const server = await Server.start(config, { log: () => {}, ...(host === undefined ? {} : { host }) })
    running.push(server)
    return server
  }
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "mailroom-viewer-access-"))
  })
  afterEach(async () => {
    await Promise.all(running.splice(0).map((server) => server.close()))
  })
  afterAll(() => rm(dir, { recursive: true, force: true }))

  it("is served on a loopback listener, to a loopback Host only", async () => {
    const server = await start(configFor(dir))
    assert.strictEqual(server.viewer, `${server.url}/_mailroom/outbox/`)
    const page = await get(`${server.url}/_mailroom/outbox/`)
    assert.strictEqual(page.status, 200)
    assert.isTrue(isViewerPage(page.body))
    assert.include(String(page.headers["content-security-policy"]), "script-src 'self'")
    const port = new URL(server.url).port
    assert.strictEqual((await get(`${server.url}/_mailroom/outbox/`, { host: `localhost:${port}` })).status, 200)
    // A page on another name that resolves to 127.0.0.1 (DNS rebinding) reads nothing.
    const rebound = await get(`${server.url}/_mailroom/outbox/`, { host: `attacker.example:${port}` })
    assert.strictEqual(rebound.status, 404)
    assert.isFalse(isViewerPage(rebound.body))
  })

  it("on a loopback listener, a Host that only starts like a loopback name is a 404 (DNS rebinding)", async () => {
    const server = await start(configFor(dir))
    const port = new URL(server.url).port
    for (const name of ["127.0.0.1.evil.example", "localhost.evil.example"]) {
      for (const host of [name, `${name}:${port}`]) {
        for (const path of ["/_mailroom/outbox/", "/_mailroom/outbox/rows"]) {
          const answer = await get(`${server.url}${path}`, { host })
          assert.strictEqual(
            answer.status,
            404,
            `Host ${host}: a name that resolves to 127.0.0.1 is not a loopback Host, and must not reach the viewer`
          )
          assert.deepStrictEqual(JSON.parse(answer.body), { message: `no route for GET ${path}` })
        }
      }
    }
  })

  it("answers 404, not the page, on 0.0.0.0 without a token", async () => {
    const server = await start(configFor(dir), "0.0.0.0")
    assert.isUndefined(server.viewer)
    for (const path of ["/_mailroom/outbox/", "/_mailroom/outbox/events", "/_mailroom/outbox/assets/viewer.js"]) {
      const answer = await get(`http://127.0.0.1:${new URL(server.url).port}${path}`)
      assert.strictEqual(answer.status, 404, path)
      assert.deepStrictEqual(JSON.parse(answer.body), { message: `no route for GET ${path}` })
    }
    // The API itself is served.
    assert.strictEqual((await get(`${server.url}/openapi.json`)).status, 200)
  })

  it("answers 404 when the config turns it off", async () => {
    const server = await start(configFor(dir, { viewer: { enabled: false } }))
    assert.isUndefined(server.viewer)
    assert.strictEqual((await get(`${server.url}/_mailroom/outbox/`)).status, 404)
  })

  it("beyond loopback, opens with the admin token only: never with an organisation's key or token", async () => {
    const server = await start(
      configFor(dir, { viewer: { token: { env: "VIEWER_TOKEN" } } }, { VIEWER_TOKEN: adminToken }),
      "0.0.0.0"
    )
    const list = `${server.url}/_mailroom/outbox/`
    assert.strictEqual(server.viewer, list)
    assert.strictEqual((await get(list)).status, 404)
    assert.strictEqual((await get(list, { "x-api-key": "mr_test_acme" })).status, 404)
    assert.strictEqual((await get(list, { authorization: "Bearer tok_acme" })).status, 404)
    assert.strictEqual((await get(list, { "x-mailroom-viewer-token": "mr_test_acme" })).status, 404)
    assert.strictEqual((await get(`${list}?token=tok_acme`)).status, 404)
    assert.strictEqual((await get(list, { "x-mailroom-viewer-token": `${adminToken}x` })).status, 404)
    const withHeader = await get(list, { "x-mailroom-viewer-token": adminToken })
    assert.strictEqual(withHeader.status, 200)
    assert.isTrue(isViewerPage(withHeader.body))

    // ?token= sets a cookie and takes the token out of the address.
    const signIn = await get(`${list}?q=alice&token=${adminToken}`)
    assert.strictEqual(signIn.status, 303)
    assert.strictEqual(signIn.headers.location, "/_mailroom/outbox/?q=alice")
    const cookie = String(signIn.headers["set-cookie"]).split(";")[0] as string
    assert.notInclude(cookie, adminToken)
    assert.include(String(signIn.headers["set-cookie"]), "HttpOnly")
    assert.strictEqual((await get(list, { cookie })).status, 200)
    assert.strictEqual((await get(list, { cookie: "mailroom_viewer=forged" })).status, 404)
  })

  it("signs in with ?token= only by GET: a POST or DELETE carrying it neither signs in nor sets the cookie", async () => {
    const server = await start(configFor(dir, { viewer: { token: adminToken } }), "0.0.0.0")
    const { host } = new URL(server.url)
    // What the viewer's own script sends with a change, so only the token decides.
    const sameOrigin = { "x-mailroom-viewer": "1", origin: `http://${host}` }
    for (const method of ["POST", "DELETE"]) {
      for (const path of ["/_mailroom/outbox/", "/_mailroom/outbox/messages"]) {
        const answer = await get(`${server.url}${path}?token=${adminToken}`, sameOrigin, method)
        const rule = `${method} ${path}?token=: only a GET may sign in with ?token=`
        assert.isUndefined(answer.headers["set-cookie"], `${rule}; it set a cookie`)
        assert.strictEqual(answer.status, 404, rule)
      }
    }
    // The same token by GET signs in.
    const signIn = await get(`${server.url}/_mailroom/outbox/?token=${adminToken}`)
    assert.strictEqual(signIn.status, 303)
    assert.isDefined(signIn.headers["set-cookie"])
  })

  it("takes the token as a sha256: hash, and signs a browser in with ?token=", async () => {
    const hash = createHash("sha256").update(adminToken).digest("hex")
    const server = await start(configFor(dir, { viewer: { token: `sha256:${hash}` } }), "0.0.0.0")
    assert.strictEqual((await get(`${server.url}/_mailroom/outbox/`)).status, 404)
    const browser = await launchChromium()
    try {
      const page = await browser.newPage()
      await page.goto(`${server.url}/_mailroom/outbox/?token=${adminToken}`)
      assert.strictEqual(page.url(), `${server.url}/_mailroom/outbox/`)
      // The cookie carries the live feed too.
      await page.locator('#live[data-state="live"]').waitFor()
      const sent = await fetch(`${server.url}/emails`, {
        method: "POST",
        headers: { "x-api-key": "mr_test_acme", "content-type": "application/json" },
        body: JSON.stringify({ from: "a@acme.example", to: ["bob@example.com"], subject: "Token", body: { text: "x" } })
      })
      assert.strictEqual(sent.status, 201)
      await page.locator("#messages li[data-id]", { hasText: "Token" }).waitFor()
    } finally {
      await browser.close()
    }
  })

  it("does not hold a shutdown open for a list that is watching live", async () => {
    const server = await start(configFor(dir, { shutdownGracePeriod: "20 seconds" }))
    const feed = await fetch(`${server.url}/_mailroom/outbox/events`)
    assert.strictEqual(feed.headers.get("content-type"), "text/event-stream")
    const reader = (feed.body as ReadableStream<Uint8Array>).getReader()
    assert.include(new TextDecoder().decode((await reader.read()).value), "retry:")
    const started = Date.now()
    await Promise.all(running.splice(0).map((s) => s.close()))
    assert.isBelow(Date.now() - started, 5000)
    // The stream ended cleanly rather than being cut.
    let next = await reader.read()
    while (!next.done) next = await reader.read()
  })

  it("refuses a config whose viewer token is an organisation's credential, or that has no outbox to show", () => {
    const problems = (extra: Record<string, unknown>, env: Record<string, string> = {}) => {
      try {
        configFor(dir, extra, env)
        return []
      } catch (error) {
        return (error as ServerConfig.ServerConfigError).problems
      }
    }
    assert.deepStrictEqual(problems({ viewer: { token: "mr_test_acme" } }), [
      "viewer.token: is also an organisation's API key or access token; choose a token of its own"
    ])
    const hashOfKey = createHash("sha256").update("tok_acme").digest("hex")
    assert.lengthOf(problems({ viewer: { token: `sha256:${hashOfKey}` } }), 1)
    assert.deepStrictEqual(problems({ viewer: { token: { env: "NOPE" } } }), [
      "viewer.token: the environment variable NOPE is not set"
    ])
    assert.deepStrictEqual(problems({ viewer: { enabeld: true } }), ["viewer.enabeld: is not a known field"])
    assert.deepStrictEqual(problems({ viewer: { enabled: true }, provider: { kind: "ses", region: "eu-west-1" } }), [
      "viewer.enabled: the viewer shows the outbox's messages, and provider.kind is ses"
    ])
    // Without the outbox and without a viewer section, nothing to show and nothing to complain about.
    assert.isFalse(configFor(dir, { provider: { kind: "ses", region: "eu-west-1" } }).viewer.enabled)
  })
})
