// The outbox viewer's list shows what is not in the outbox yet: messages scheduled and cancelled, read
// from the message log for every organisation of the file, their text escaped as everything else is.
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, assert, beforeAll, it } from "vitest"
import { Server, ServerConfig } from "../src/index.js"

let dir: string
let server: Server.RunningServer

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mailroom-viewer-scheduled-"))
  const config = ServerConfig.parse(
    {
      port: 0,
      serviceDomain: "mailroom.test",
      organizations: [
        { id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"], apiKeys: ["mr_test_acme"] },
        { id: "org_globex", slug: "globex", verifiedDomains: ["globex.example"], apiKeys: ["mr_test_globex"] }
      ],
      storage: { kind: "local", dir: "storage", signingSecret: "viewer-scheduled" },
      provider: { kind: "outbox", dir: "outbox" }
    },
    { baseDir: dir, source: "test config" }
  )
  server = await Server.start(config, { log: () => {} })
})
afterAll(async () => {
  await server?.close()
  if (dir !== undefined) await rm(dir, { recursive: true, force: true })
})

const schedule = async (key: string, from: string, subject: string) => {
  const response = await fetch(`${server.url}/emails`, {
    method: "POST",
    headers: { "x-api-key": key, "content-type": "application/json" },
    body: JSON.stringify({
      from,
      to: ["alice@example.com"],
      subject,
      body: { text: "Hi" },
      scheduled_at: new Date(Date.now() + 3_600_000).toISOString()
    })
  })
  assert.strictEqual(response.status, 202)
  return ((await response.json()) as { message_id: string }).message_id
}

it("lists the scheduled and cancelled messages of every organisation above the outbox's, escaped", async () => {
  const page = async () => (await fetch(server.viewer as string)).text()
  assert.notInclude(await page(), "Scheduled and cancelled", "nothing waits: no such table")
  const waiting = await schedule("mr_test_acme", "billing@acme.example", "Renewal <b>soon</b>")
  const cancelled = await schedule("mr_test_globex", "news@globex.example", "Globex digest")
  await fetch(`${server.url}/emails/${cancelled}/cancel`, {
    method: "POST",
    headers: { "x-api-key": "mr_test_globex" }
  })
  const html = await page()
  assert.include(html, "Scheduled and cancelled")
  const items = [...html.matchAll(/<li data-id="([^"]+)" class="(scheduled|cancelled)">([\s\S]*?)<\/li>/g)]
  const item = (id: string) => items.find(([, itemId]) => itemId === id)?.[3] ?? ""
  assert.include(item(waiting), "Renewal &lt;b&gt;soon&lt;/b&gt;")
  assert.include(item(waiting), '<span class="status">scheduled</span>')
  assert.include(item(waiting), "org_acme")
  assert.include(item(cancelled), '<span class="status">cancelled</span>')
  assert.include(item(cancelled), "org_globex")
})
