// The outbox viewer of the built `mailroom` command costs nothing while nobody looks: it watches the
// outbox directory only while one of its pages is open (its live feed), seen from outside the process
// in the kernel's list of its inotify watches, and it still shows new messages live while it does.
import { readdirSync, readFileSync, readlinkSync } from "node:fs"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { type ServerProcess, startServer } from "./support/serverProcess.js"

/** The inotify watches the process holds: one line per watch in the fdinfo of its inotify handles. */
const watches = (pid: number) =>
  readdirSync(`/proc/${pid}/fd`)
    .filter((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`) === "anon_inode:inotify"
      } catch {
        return false
      }
    })
    .flatMap((fd) => readFileSync(`/proc/${pid}/fdinfo/${fd}`, "utf8").split("\n"))
    .filter((line) => line.startsWith("inotify wd:")).length

const eventually = async (condition: () => boolean, what: string) => {
  const deadline = Date.now() + 10_000
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** The viewer's live feed, as its page opens it, with each event read as it comes. */
const openFeed = async (url: string) => {
  const controller = new AbortController()
  const response = await fetch(`${url}/_mailroom/outbox/events`, { signal: controller.signal })
  assert.strictEqual(response.status, 200)
  const reader = (response.body as ReadableStream<Uint8Array>).getReader()
  const decoder = new TextDecoder()
  let text = ""
  /** Resolves once the feed has said `event: change` after what was read so far. */
  const nextChange = async () => {
    const from = text.length
    while (!text.slice(from).includes("event: change")) {
      const { value, done } = await reader.read()
      if (done) throw new Error("the feed ended")
      text += decoder.decode(value)
    }
  }
  return { nextChange, close: () => controller.abort() }
}

describe("the outbox viewer's watch", () => {
  let dir: string
  let server: ServerProcess
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "mailroom-viewer-watch-"))
    const config = join(dir, "mailroom.config.json")
    await writeFile(
      config,
      JSON.stringify({
        serviceDomain: "mailroom.test",
        organizations: [{ id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"], apiKeys: ["mr_test_acme"] }],
        storage: { kind: "local", dir: "storage", signingSecret: "viewer-secret" },
        provider: { kind: "outbox", dir: "outbox" }
      })
    )
    server = await startServer(config)
  }, 30_000)
  afterAll(async () => {
    await server?.stop()
    await rm(dir, { recursive: true, force: true })
  })

  const send = (subject: string) =>
    fetch(`${server.url}/emails`, {
      method: "POST",
      headers: { "x-api-key": "mr_test_acme", "content-type": "application/json" },
      body: JSON.stringify({ from: "hi@acme.example", to: ["alice@example.com"], subject, body: { text: "Hi" } })
    })

  it("watches nothing while no page is open, the outbox while one is, and stops when it closes", async () => {
    assert.strictEqual((await send("Before anyone looks")).status, 201)
    assert.strictEqual(watches(server.pid), 0, "nobody looks, yet the outbox is watched")

    const feed = await openFeed(server.url)
    await eventually(() => watches(server.pid) === 1, "the open page's outbox is watched")
    const sent = feed.nextChange()
    assert.strictEqual((await send("While the page is open")).status, 201)
    await sent
    const rows = await (await fetch(`${server.url}/_mailroom/outbox/rows`)).text()
    assert.include(rows, "While the page is open")
    assert.include(rows, "Before anyone looks")

    feed.close()
    await eventually(() => watches(server.pid) === 0, "the watch ends with the last page")
    assert.strictEqual((await send("After the page closed")).status, 201)
    assert.include(await (await fetch(`${server.url}/_mailroom/outbox/rows`)).text(), "After the page closed")
  })
})
