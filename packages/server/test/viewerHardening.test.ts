// The outbox viewer against the built `mailroom` process, as an attacker's message would meet it: a
// link crafted to make a check backtrack renders at once while the API keeps answering, and a link the
// checks cannot read is named on the page instead of failing it.
import { writeFile } from "node:fs/promises"
import { join } from "node:path"
import { type TempDir, tempDir } from "@mailroom/test-support"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { type ServerProcess, startServer } from "./support/serverProcess.js"

const viewer = "/_mailroom/outbox/"

describe("the outbox viewer against a server process", () => {
  let dir: TempDir
  let server: ServerProcess
  beforeAll(async () => {
    dir = await tempDir("viewer-hardening")
    const config = {
      serviceDomain: "mailroom.test",
      organizations: [{ id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"], apiKeys: ["mr_test_acme"] }],
      storage: { kind: "local", dir: "storage", signingSecret: "viewer-hardening" },
      provider: { kind: "outbox", dir: "outbox" }
    }
    await writeFile(join(dir.path, "config.json"), JSON.stringify(config))
    server = await startServer(join(dir.path, "config.json"), { HOST: "127.0.0.1" })
  })
  afterAll(async () => {
    await server?.stop()
    await dir?.remove()
  })

  /** Sends a message whose HTML is `html`; its page's URL. */
  const send = async (html: string) => {
    const response = await fetch(`${server.url}/emails`, {
      method: "POST",
      headers: { "x-api-key": "mr_test_acme", "content-type": "application/json" },
      body: JSON.stringify({ from: "a@acme.example", to: ["bob@example.com"], subject: "Links", body: { html } })
    })
    assert.strictEqual(response.status, 201, await response.clone().text())
    const { message_id } = (await response.json()) as { message_id: string }
    return `${server.url}${viewer}messages/${encodeURIComponent(message_id)}`
  }

  /** The status and milliseconds of a GET, or "no answer" when none comes within `limitMs`. */
  const timed = async (url: string, limitMs: number) => {
    const started = performance.now()
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(limitMs) })
      const body = await response.text()
      return { status: response.status, ms: performance.now() - started, body }
    } catch {
      return { status: "no answer" as const, ms: performance.now() - started, body: "" }
    }
  }

  it("a mailto: link of 100,000 dots renders within a generous bound, and the API answers meanwhile", async () => {
    // Once it took the pattern that checked addresses 46 s, the process answering nothing meanwhile.
    const page = await send(`<p>Hi</p><a href="mailto:a@${".".repeat(100_000)}@">write to us</a>`)
    let done = false
    const rendering = timed(page, 10_000).finally(() => {
      done = true
    })
    // The API is asked again and again while the page is on its way: each must be answered.
    const api: Array<Awaited<ReturnType<typeof timed>>> = []
    do api.push(await timed(`${server.url}/openapi.json`, 5_000))
    while (!done)
    const rendered = await rendering
    for (const answer of api) assert.strictEqual(answer.status, 200, `the API answered in ${answer.ms.toFixed(0)} ms`)
    assert.strictEqual(rendered.status, 200, `the page took ${rendered.ms.toFixed(0)} ms`)
    assert.include(rendered.body, "is 100,010 characters long: clients and servers cut URLs that long")
  })

  it("a mailto: link whose %-escape is cut short is a 200 page that names the problem", async () => {
    const page = await send('<a href="mailto:%E0%A4%A">write to us</a><a href="mailto:ok@acme.example">ok</a>')
    const answer = await timed(page, 10_000)
    assert.strictEqual(answer.status, 200)
    assert.include(answer.body, "mailto:%E0%A4%A")
    assert.include(answer.body, "has a %-escape that is not UTF-8: clients cannot read the address")
    assert.notInclude(answer.body, "URIError")
  })
})
