// The outbox viewer against the built `mailroom` process, as an attacker's message would meet it: a
// link crafted to make a check backtrack renders at once while the API keeps answering, a link the
// checks cannot read is named on the page instead of failing it, and every response the viewer writes
// carries its security headers.
import { writeFile } from "node:fs/promises"
import { join } from "node:path"
import { type TempDir, tempDir } from "@mailroom/test-support"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { type ServerProcess, startServer } from "./support/serverProcess.js"

const viewer = "/_mailroom/outbox/"
const token = "viewer-hardening-token"
const withToken = { "x-mailroom-viewer-token": token }

describe("the outbox viewer against a server process", () => {
  let dir: TempDir
  let server: ServerProcess
  beforeAll(async () => {
    dir = await tempDir("viewer-hardening")
    const config = {
      serviceDomain: "mailroom.test",
      organizations: [{ id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"], apiKeys: ["mr_test_acme"] }],
      storage: { kind: "local", dir: "storage", signingSecret: "viewer-hardening" },
      provider: { kind: "outbox", dir: "outbox" },
      viewer: { token }
    }
    await writeFile(join(dir.path, "config.json"), JSON.stringify(config))
    server = await startServer(join(dir.path, "config.json"), { HOST: "127.0.0.1" })
  })
  afterAll(async () => {
    await server?.stop()
    await dir?.remove()
  })

  /** Sends a message whose HTML is `html`; its page's URL. */
  const send = async (html: string, attachments: ReadonlyArray<{ filename: string; key: string }> = []) => {
    const response = await fetch(`${server.url}/emails`, {
      method: "POST",
      headers: { "x-api-key": "mr_test_acme", "content-type": "application/json" },
      body: JSON.stringify({
        from: "a@acme.example",
        to: ["bob@example.com"],
        subject: "Links",
        body: { html },
        attachments
      })
    })
    assert.strictEqual(response.status, 201, await response.clone().text())
    const { message_id } = (await response.json()) as { message_id: string }
    return `${server.url}${viewer}messages/${encodeURIComponent(message_id)}`
  }

  /** The status and milliseconds of a GET, or "no answer" when none comes within `limitMs`. */
  const timed = async (url: string, limitMs: number) => {
    const started = performance.now()
    try {
      const response = await fetch(url, { headers: withToken, signal: AbortSignal.timeout(limitMs) })
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

  it("an attachment downloads under the store's names: the exact one, and one curl -OJ can read", async () => {
    const presigned = await fetch(`${server.url}/attachments/presign`, {
      method: "POST",
      headers: { "x-api-key": "mr_test_acme", "content-type": "application/json" },
      body: JSON.stringify({ filename: "résumé 100%.pdf", content_type: "application/pdf" })
    })
    const { url, key } = (await presigned.json()) as { url: string; key: string }
    const put = await fetch(url, { method: "PUT", headers: { "content-type": "application/pdf" }, body: "%PDF" })
    assert.strictEqual(put.status, 200)
    const message = new URL(await send("<p>CV</p>", [{ filename: "résumé 100%.pdf", key }])).pathname
    const download = await fetch(`${server.url}${message}/attachments/0`, { headers: withToken })
    assert.strictEqual(await download.text(), "%PDF")
    assert.strictEqual(
      download.headers.get("content-disposition"),
      `attachment; filename="resume 100_.pdf"; filename*=UTF-8''r%C3%A9sum%C3%A9%20100%25.pdf`
    )
  })

  it("every viewer response carries its content security policy, frame and sniffing headers", async () => {
    const presigned = await fetch(`${server.url}/attachments/presign`, {
      method: "POST",
      headers: { "x-api-key": "mr_test_acme", "content-type": "application/json" },
      body: JSON.stringify({ filename: "notes.html", content_type: "text/html" })
    })
    const { url, key } = (await presigned.json()) as { url: string; key: string }
    const put = await fetch(url, {
      method: "PUT",
      headers: { "content-type": "text/html" },
      body: "<script>1</script>"
    })
    assert.strictEqual(put.status, 200)
    const page = await send('<a href="https://acme.example/">x</a>', [{ filename: "notes.html", key }])
    const message = new URL(page).pathname
    const same = { "x-mailroom-viewer": "1", origin: server.url }
    const cases: ReadonlyArray<readonly [string, RequestInit & { headers?: Record<string, string> }, number]> = [
      [viewer, {}, 200],
      [`${viewer}rows`, {}, 200],
      [`${viewer}rows?q=nothing-matches`, {}, 200],
      [`${viewer}events`, {}, 200],
      [`${viewer}assets/viewer.css`, {}, 200],
      [`${viewer}assets/viewer.js`, {}, 200],
      [`${viewer}assets/favicon.svg`, {}, 200],
      [message, {}, 200],
      [`${message}?fragment=1`, {}, 200],
      [`${message}/html`, {}, 200],
      [`${message}/html?images=remote`, {}, 200],
      [`${message}/attachments/0?inline=1`, {}, 200],
      [`${viewer}api/messages`, {}, 200],
      [`${message.replace("/messages/", "/api/messages/")}`, {}, 200],
      [`${viewer}api/wait?timeout=1ms`, {}, 204],
      [`${viewer}api/openapi.json`, {}, 200],
      [`${viewer}api/messages?to=x`, {}, 400],
      [`${message}/raw`, {}, 200],
      [`${message}/attachments/0`, {}, 200],
      [`${message}/attachments/9`, {}, 404],
      [`${viewer}messages/no-such-message`, {}, 404],
      [`${viewer}nothing-here`, {}, 404],
      [`${viewer}%E0%A4%A`, {}, 404],
      [viewer, { method: "POST" }, 405],
      [`${viewer}events`, { method: "HEAD" }, 405],
      [message, { method: "DELETE" }, 403],
      [`${viewer}messages/no-such-message`, { method: "DELETE", headers: same }, 404],
      ["/_mailroom/outbox", { redirect: "manual" }, 308],
      [`${viewer}?token=${token}`, { redirect: "manual", headers: {} }, 303],
      [message, { method: "DELETE", headers: same }, 200]
    ]
    // An HTML attachment asked for inline is still a download: it would run as the viewer.
    const inline = await fetch(`${server.url}${message}/attachments/0?inline=1`, { headers: withToken })
    assert.match(inline.headers.get("content-disposition") ?? "", /^attachment;/)
    for (const [path, init, status] of cases) {
      const response = await fetch(`${server.url}${path}`, {
        ...init,
        headers: { ...(path.includes("?token=") ? {} : withToken), ...init.headers }
      })
      const what = `${init.method ?? "GET"} ${path}`
      assert.strictEqual(response.status, status, what)
      const csp = response.headers.get("content-security-policy") ?? ""
      const framing = response.headers.get("x-frame-options")
      if (path.startsWith(`${message}/html`)) {
        // The message's own HTML: framed by the viewer's page only, and sandboxed; remote images only when asked.
        assert.include(csp, "frame-ancestors 'self'", what)
        assert.include(csp, "sandbox", what)
        assert.strictEqual(framing, "SAMEORIGIN", what)
        assert.strictEqual(csp.includes("img-src data: https: http:"), path.endsWith("?images=remote"), what)
        assert.notInclude(csp, "script-src", what)
      } else {
        assert.include(csp, "frame-ancestors 'none'", what)
        assert.include(csp, "default-src 'none'", what)
        assert.strictEqual(framing, "DENY", what)
      }
      assert.strictEqual(response.headers.get("x-content-type-options"), "nosniff", what)
      assert.strictEqual(response.headers.get("referrer-policy"), "no-referrer", what)
      // The live feed never ends by itself.
      await response.body?.cancel()
    }
  })
})
