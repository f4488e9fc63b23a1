// The `mailroom` command as a user runs it: the built bin in its own process.
import type { ChildProcess } from "node:child_process"
import { existsSync } from "node:fs"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { bin, run } from "./process.js"

const config = (overrides: Record<string, unknown> = {}) => ({
  port: 3000,
  serviceDomain: "mailroom.test",
  organizations: [{ id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"], apiKeys: ["mr_test_acme"] }],
  storage: { kind: "local", dir: "storage", signingSecret: "cli-secret" },
  provider: { kind: "outbox", dir: "outbox" },
  ...overrides
})

describe("the mailroom command", () => {
  let dir: string
  beforeAll(async () => {
    assert.isTrue(existsSync(bin), `${bin} is missing: the test command builds the packages first`)
    dir = await mkdtemp(join(tmpdir(), "mailroom-cli-"))
  })
  afterAll(() => rm(dir, { recursive: true, force: true }))

  it("refuses a config with a misspelt field, naming it, and exits 1", async () => {
    const path = join(dir, "typo.json")
    const { serviceDomain, ...rest } = config()
    await writeFile(path, JSON.stringify({ ...rest, serviceDomian: serviceDomain }))
    const { exited, output } = run(path)
    assert.strictEqual(await exited, 1)
    assert.include(output().stderr, "serviceDomian: is not a known field")
    assert.include(output().stderr, "serviceDomain: is required")
  })

  it("SIGTERM lets a request in flight finish, then exits 0", async () => {
    const path = join(dir, "ok.json")
    await writeFile(path, JSON.stringify(config()))
    const { child, exited, listening } = run(path)
    let server: ChildProcess | undefined = child
    try {
      const url = await listening
      const presign = await fetch(`${url}/attachments/presign`, {
        method: "POST",
        headers: { "x-api-key": "mr_test_acme", "content-type": "application/json" },
        body: JSON.stringify({ filename: "slow.bin" })
      })
      const { url: upload } = (await presign.json()) as { url: string }
      // An upload that is still streaming when the signal arrives.
      let sent = 0
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          if (sent === 2) child.kill("SIGTERM")
          if (sent === 10) return controller.close()
          await new Promise((r) => setTimeout(r, 50))
          controller.enqueue(new Uint8Array(1024).fill(sent))
          sent++
        }
      })
      const answer = await fetch(upload, {
        method: "PUT",
        headers: { "content-type": "application/octet-stream" },
        body,
        duplex: "half"
      } as RequestInit)
      assert.strictEqual(answer.status, 200, await answer.text())
      assert.strictEqual(sent, 10)
      assert.strictEqual(await exited, 0)
      server = undefined
      const refused = await fetch(`${url}/openapi.json`).then(
        () => "answered",
        () => "refused"
      )
      assert.strictEqual(refused, "refused")
    } finally {
      server?.kill("SIGKILL")
    }
  })
})
