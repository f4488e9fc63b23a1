// `GET /`, where a newcomer's browser or curl lands first: a small page (JSON for a client asking for
// JSON) whose links lead to the outbox viewer, the OpenAPI document and the docs, each one answering.
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { Server, ServerConfig } from "../src/index.js"

describe("GET / on the embedded defaults", () => {
  let dir: string
  let server: Server.RunningServer
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "mailroom-home-"))
    server = await Server.start(
      ServerConfig.parse(
        {
          port: 0,
          serviceDomain: "mailroom.test",
          organizations: [{ id: "org_acme", slug: "acme", apiKeys: ["mr_test_acme"] }],
          storage: { kind: "local", dir: "storage", signingSecret: "home-secret" },
          provider: { kind: "outbox", dir: "outbox" }
        },
        { baseDir: dir }
      ),
      { log: () => {} }
    )
  })
  afterAll(async () => {
    await server?.close()
    await rm(dir, { recursive: true, force: true })
  })

  it("a browser gets a page whose links to the viewer, the OpenAPI document and the readiness answer", async () => {
    const page = await fetch(`${server.url}/`, { headers: { accept: "text/html,application/xhtml+xml,*/*;q=0.8" } })
    assert.strictEqual(page.status, 200)
    assert.match(page.headers.get("content-type") ?? "", /^text\/html/)
    const html = await page.text()
    const links = [...html.matchAll(/href="([^"]+)"/g)].map((m) => m[1] as string)
    assert.includeMembers(links, ["_mailroom/outbox/", "openapi.json", "readyz"])
    assert.isTrue(
      links.some((link) => link.startsWith("https://github.com/mailroom-dev/mailroom/")),
      "no link to the docs"
    )
    for (const link of links.filter((l) => !l.startsWith("https:"))) {
      const followed = await fetch(new URL(link, `${server.url}/`))
      assert.strictEqual(followed.status, 200, `${link} answered ${followed.status}`)
    }
  })

  it("curl's */* gets the page too; a client asking for JSON gets the same links as JSON", async () => {
    const plain = await fetch(`${server.url}/`, { headers: { accept: "*/*" } })
    assert.match(plain.headers.get("content-type") ?? "", /^text\/html/)
    const json = await fetch(`${server.url}/`, { headers: { accept: "application/json" } })
    assert.strictEqual(json.status, 200)
    assert.match(json.headers.get("content-type") ?? "", /^application\/json/)
    assert.deepStrictEqual(await json.json(), {
      name: "mailroom",
      openapi: `${server.url}/openapi.json`,
      viewer: server.viewer,
      docs: "https://github.com/mailroom-dev/mailroom/tree/main/packages/server#readme",
      readiness: `${server.url}/readyz`
    })
  })

  it("another unknown path is still the API's 404", async () => {
    const missing = await fetch(`${server.url}/nothing-here`)
    assert.strictEqual(missing.status, 404)
    assert.deepStrictEqual(await missing.json(), { message: "no route for GET /nothing-here" })
  })
})
