// The `mailroom` command when whoever reads its output goes away (a log collector that dies, `| head`):
// it keeps serving and sending, its log lines dropped, where an EPIPE on stdout used to end it.
import { readdir, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { type TempDir, tempDir } from "@mailroom/test-support"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { run } from "./process.js"

const send = (url: string, n: number) =>
  fetch(`${url}/emails`, {
    method: "POST",
    headers: { "x-api-key": "mr_test_acme", "content-type": "application/json" },
    body: JSON.stringify({
      from: "billing@acme.example",
      to: [`user${n}@example.com`],
      subject: `Receipt ${n}`,
      body: { text: "Thanks." }
    })
  })

describe("the mailroom command with its output closed", () => {
  let temp: TempDir
  let dir: string
  let path: string
  beforeAll(async () => {
    temp = await tempDir("closed-output")
    dir = temp.path
    path = join(dir, "mailroom.config.json")
    await writeFile(
      path,
      JSON.stringify({
        serviceDomain: "mailroom.test",
        organizations: [{ id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"], apiKeys: ["mr_test_acme"] }],
        storage: { kind: "local", dir: join(dir, "storage"), signingSecret: "closed-output-secret" },
        provider: { kind: "outbox", dir: join(dir, "outbox") },
        messages: { kind: "sqlite", path: join(dir, "mailroom.db") }
      })
    )
  })
  afterAll(() => temp.remove())

  it("says once on stderr that stdout is gone, then keeps answering", async () => {
    const { child, exited, listening, output } = run(path)
    try {
      const url = await listening
      child.stdout.destroy()
      for (let n = 0; n < 3; n++) {
        const answer = await send(url, 100 + n)
        assert.strictEqual(answer.status, 201, await answer.text())
      }
      const notice = /stdout cannot be written \(EPIPE\); its lines are dropped from now on/g
      // The line reaches this side of stderr's pipe in its own time: awaited, not assumed.
      await new Promise<void>((resolve) => {
        const check = () => {
          if (!output().stderr.match(notice)) return
          child.stderr.off("data", check)
          resolve()
        }
        child.stderr.on("data", check)
        check()
      })
      const again = await send(url, 103)
      assert.strictEqual(again.status, 201)
      child.kill("SIGTERM")
      assert.strictEqual(await exited, 0)
      assert.lengthOf(output().stderr.match(notice) ?? [], 1, output().stderr)
    } finally {
      child.kill("SIGKILL")
    }
  })

  it("keeps sending when stdout and stderr are gone, and stops cleanly on SIGTERM", async () => {
    const { child, exited, listening } = run(path)
    try {
      const url = await listening
      // The reader goes away: each log line from now on is written to a pipe nobody reads (EPIPE).
      child.stdout.destroy()
      child.stderr.destroy()
      for (let n = 0; n < 5; n++) {
        const answer = await send(url, n)
        const text = await answer.text()
        assert.strictEqual(answer.status, 201, text)
        const { message_id } = JSON.parse(text) as { message_id: string }
        const read = await fetch(`${url}/emails/${message_id}`, { headers: { "x-api-key": "mr_test_acme" } })
        assert.strictEqual(((await read.json()) as { status: string }).status, "delivered")
      }
      const record = await fetch(`${url}/emails?limit=100`, { headers: { "x-api-key": "mr_test_acme" } })
      assert.strictEqual(record.status, 200)
      assert.lengthOf(((await record.json()) as { data: ReadonlyArray<unknown> }).data, 9)
      const written = (await readdir(join(dir, "outbox"))).filter((name) => name.endsWith(".eml"))
      assert.lengthOf(written, 9)
      assert.isNull(child.exitCode, "the server is still running")
      child.kill("SIGTERM")
      assert.strictEqual(await exited, 0)
    } finally {
      child.kill("SIGKILL")
    }
  })
})
