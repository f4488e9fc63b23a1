// The built `mailroom` command with its storage and outbox on a real disk of 4 MiB (a tmpfs), filled
// to the last byte: uploads and sends answer 503 with Retry-After and log the cause, /readyz says
// what cannot be written, and everything works again once space is freed.
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type SmallDisk, smallDisk } from "@mailroom/test-support"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { type ServerProcess, startServer } from "./support/serverProcess.js"

// Whether this machine lets a test mount a small disk at all; each case then mounts its own.
const probe = await smallDisk(4 * 1024 * 1024)
const unavailable = "unavailable" in probe ? probe.unavailable : undefined
if (unavailable !== undefined) console.warn(`diskFull.test.ts skipped: ${unavailable}`)
else await (probe as SmallDisk).remove()

const headers = { "x-api-key": "mr_test_acme", "content-type": "application/json" }
const email = JSON.stringify({
  from: "billing@acme.example",
  to: ["alice@example.com"],
  subject: "Hi",
  body: { text: "Hi" }
})

/** What a send answers and logs when the disk is full, by where its message records live. */
const sendCases = [
  {
    name: "records elsewhere: the outbox cannot write",
    records: (dir: string) => ({ kind: "sqlite", path: join(dir, "mailroom.db") }),
    logged: /outbox: a message could not be written in .*ENOSPC/,
    error: "the email provider is unavailable; nothing was sent"
  },
  {
    name: "records on the same disk: the message cannot be recorded, so it is not sent",
    records: () => undefined,
    logged: /the message database failed \(recording the message\): .*database or disk is full/,
    error: "recording the message: the database's disk is full; nothing was written, try again later"
  }
] as const

for (const sendCase of sendCases)
  describe.skipIf(unavailable !== undefined)(
    `a full disk, ${sendCase.name}${unavailable ? ` (skipped: ${unavailable})` : ""}`,
    () => {
      let mounted: SmallDisk
      let dir: string
      let server: ServerProcess
      beforeAll(async () => {
        mounted = (await smallDisk(4 * 1024 * 1024)) as SmallDisk
        dir = await mkdtemp(join(tmpdir(), "mailroom-full-"))
        const config = join(dir, "mailroom.config.json")
        await writeFile(
          config,
          JSON.stringify({
            port: 0,
            serviceDomain: "mailroom.test",
            organizations: [
              { id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"], apiKeys: ["mr_test_acme"] }
            ],
            storage: { kind: "local", dir: join(mounted.path, "storage"), signingSecret: "test-secret" },
            provider: { kind: "outbox", dir: join(mounted.path, "outbox") },
            ...(sendCase.records(dir) === undefined ? {} : { messages: sendCase.records(dir) })
          })
        )
        server = await startServer(config)
      }, 30_000)
      afterAll(async () => {
        await server?.stop()
        await mounted?.remove()
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
        const logged = server.waitFor(sendCase.logged)
        const send = await fetch(`${server.url}/emails`, { method: "POST", headers, body: email })
        assert.strictEqual(send.status, 503)
        assert.strictEqual(send.headers.get("retry-after"), "60")
        assert.deepStrictEqual(await send.json(), { error: sendCase.error, may_have_been_sent: false })
        await logged
        const { stdout, stderr } = server.output()
        assert.match(stdout + stderr, /storage: PUT \/_mailroom\/storage\/\S+ failed: Error: ENOSPC/)

        await mounted.free()
        assert.deepStrictEqual(await readiness(), {
          status: 200,
          body: {
            ready: true,
            checks: { storage: "ok", outbox: "ok", messages: "ok", queue: "ok", provider: "ok" }
          } as never
        })
        assert.strictEqual((await upload(uploadUrl)).status, 200)
        assert.strictEqual((await fetch(`${server.url}/emails`, { method: "POST", headers, body: email })).status, 201)
      })
    }
  )
