// The built `mailroom` command with its storage and outbox on a real disk of 4 MiB (a tmpfs), filled
// to the last byte: uploads and sends answer 503 with Retry-After and log the cause, /readyz says
// what cannot be written, and everything works again once space is freed.
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type SmallDisk, smallDisk } from "@mailroom/test-support"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { type ServerProcess, startServer } from "./support/serverProcess.js"

const disk = await smallDisk(4 * 1024 * 1024)
const unavailable = "unavailable" in disk ? disk.unavailable : undefined
if (unavailable !== undefined) console.warn(`diskFull.test.ts skipped: ${unavailable}`)

const headers = { "x-api-key": "mr_test_acme", "content-type": "application/json" }
const email = JSON.stringify({
  from: "billing@acme.example",
  to: ["alice@example.com"],
  subject: "Hi",
  body: { text: "Hi" }
})

describe.skipIf(unavailable !== undefined)(`a full disk${unavailable ? ` (skipped: ${unavailable})` : ""}`, () => {
  const mounted = disk as SmallDisk
  let dir: string
  let server: ServerProcess
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "mailroom-full-"))
    const config = join(dir, "mailroom.config.json")
    await writeFile(
      config,
      JSON.stringify({
        port: 0,
        serviceDomain: "mailroom.test",
        organizations: [{ id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"], apiKeys: ["mr_test_acme"] }],
        storage: { kind: "local", dir: join(mounted.path, "storage"), signingSecret: "test-secret" },
        provider: { kind: "outbox", dir: join(mounted.path, "outbox") },
        // Off the full disk: a send whose record cannot be written is refused before the outbox is
        // tried (the database's 503), and this test is about the outbox's own.
        messages: { kind: "sqlite", path: join(dir, "mailroom.db") }
      })
    )
    server = await startServer(config)
  }, 30_000)
  afterAll(async () => {
    await server?.stop()
    await mounted.remove()
    await rm(dir, { recursive: true, force: true })
  })

  const readiness = async () => {
    const response = await fetch(`${server.url}/readyz`)
    return { status: response.status, body: (await response.json()) as { checks: Record<string, string> } }
  }

  const presign = async () => {
    const response = await fetch(`${server.url}/attachments/presign`, {
      method: "POST",
      headers,
      body: JSON.stringify({ filename: "report.pdf", content_type: "application/pdf" })
    })
    return ((await response.json()) as { url: string }).url
  }
  const upload = (url: string) =>
    fetch(url, { method: "PUT", headers: { "content-type": "application/pdf" }, body: new Uint8Array(200 * 1024) })

  it("uploads and sends get 503 with Retry-After and a logged cause; /readyz names what cannot be written", async () => {
    assert.strictEqual((await readiness()).status, 200)
    assert.strictEqual((await fetch(`${server.url}/emails`, { method: "POST", headers, body: email })).status, 201)
    const uploadUrl = await presign()
    await mounted.fill()

    const ready = await readiness()
    assert.strictEqual(ready.status, 503)
    assert.strictEqual(ready.body.checks.storage, "the storage directory cannot be written (ENOSPC)")
    assert.strictEqual(ready.body.checks.outbox, "the outbox directory cannot be written (ENOSPC)")

    const refused = await upload(uploadUrl)
    assert.strictEqual(refused.status, 503)
    assert.strictEqual(refused.headers.get("retry-after"), "60")
    assert.deepStrictEqual(await refused.json(), {
      message: "the store's disk is full (ENOSPC): nothing was stored; try again later"
    })
    const logged = server.waitFor(/outbox: a message could not be written in .*ENOSPC/)
    const send = await fetch(`${server.url}/emails`, { method: "POST", headers, body: email })
    assert.strictEqual(send.status, 503)
    assert.strictEqual(send.headers.get("retry-after"), "60")
    assert.deepStrictEqual(await send.json(), {
      error: "the email provider is unavailable; nothing was sent",
      may_have_been_sent: false
    })
    await logged
    const { stdout, stderr } = server.output()
    assert.match(stdout + stderr, /storage: PUT \/_mailroom\/storage\/\S+ failed: Error: ENOSPC/)

    await mounted.free()
    assert.deepStrictEqual(await readiness(), {
      status: 200,
      body: { ready: true, checks: { storage: "ok", outbox: "ok", provider: "ok", messages: "ok" } } as never
    })
    assert.strictEqual((await upload(uploadUrl)).status, 200)
    assert.strictEqual((await fetch(`${server.url}/emails`, { method: "POST", headers, body: email })).status, 201)
  })
})
