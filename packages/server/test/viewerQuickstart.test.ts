// The quick start, as a developer runs it: `npm start` (the built bin with --quickstart, on the committed
// mailroom.config.json in a copy of its own), then `npm run quickstart`, then the viewer URL it prints,
// in Chromium. And the same server on 0.0.0.0 without a viewer token answers 404 where the viewer was.
import { execFile } from "node:child_process"
import { copyFile, mkdtemp, readdir, readFile, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { simpleParser } from "mailparser"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { launchChromium, screenshot } from "./support/browser.js"
import { type ServerProcess, startServer } from "./support/serverProcess.js"

const root = new URL("../../../", import.meta.url).pathname
const quickstart = (url: string) =>
  promisify(execFile)(process.execPath, [join(root, "scripts/quickstart.ts")], {
    env: { ...process.env, MAILROOM_URL: url },
    timeout: 20_000
  })

/** Resolves once the server's stdout so far matches `pattern` (its start-up text may still be arriving). */
const printed = async (server: ServerProcess, pattern: RegExp) => {
  const deadline = Date.now() + 10_000
  while (!pattern.test(server.output().stdout)) {
    if (Date.now() > deadline) assert.fail(`no ${pattern} in:\n${server.output().stdout}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return server.output().stdout
}

describe("the quick start's viewer URL", () => {
  let dir: string
  let configPath: string
  const servers: Array<ServerProcess> = []
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "mailroom-quickstart-viewer-"))
    configPath = join(dir, "mailroom.config.json")
    await copyFile(join(root, "mailroom.config.json"), configPath)
  })
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.stop()))
    await rm(dir, { recursive: true, force: true })
  })

  it("shows the quick start's message with its attachment, in Chromium", async () => {
    const server = await startServer(configPath, {}, ["--quickstart"])
    servers.push(server)
    const stdout = await printed(server, /OpenAPI: /)
    const listUrl = /outbox viewer: (http:\/\/\S+)/.exec(stdout)?.[1]
    assert.strictEqual(listUrl, `${server.url}/_mailroom/outbox/`, stdout)
    assert.include(stdout, `See them in your browser, live: ${listUrl}`)

    const run = await quickstart(server.url)
    const messageUrl = /See it in your browser: (http:\/\/\S+)/.exec(run.stdout)?.[1]
    assert.isDefined(messageUrl, run.stdout)
    const emls = (await readdir(join(dir, ".mailroom/outbox"))).filter((f) => f.endsWith(".eml"))
    assert.lengthOf(emls, 1)
    const sent = await simpleParser(await readFile(join(dir, ".mailroom/outbox", emls[0] as string)))
    const attached = sent.attachments[0]?.content as Buffer
    assert.match(attached.toString(), /^Hello from mailroom at \S+Z\n$/)

    const browser = await launchChromium()
    try {
      const page = await (await browser.newContext({ acceptDownloads: true })).newPage()
      await page.goto(messageUrl as string)
      assert.strictEqual(await page.locator("#subject").textContent(), "Hello from mailroom ✉")
      await page.frameLocator("#html-part").getByText("The attachment says").waitFor()
      // Before the download's click scrolls the page: a scrolled full-page shot can miss the iframe's paint.
      await screenshot(page, "quickstart-message.png")
      await page.locator(".tabs a", { hasText: "Attachments" }).click()
      const link = page.locator("#attachments a", { hasText: "hello.txt" })
      assert.include(await page.locator("#attachments tbody tr").textContent(), "text/plain")
      const [download] = await Promise.all([page.waitForEvent("download"), link.click()])
      assert.strictEqual(download.suggestedFilename(), "hello.txt")
      assert.isTrue((await readFile(await download.path())).equals(attached))

      await page.goto(listUrl as string)
      const row = page.locator("#messages li[data-id]", { hasText: "Hello from mailroom ✉" })
      assert.strictEqual(await row.locator(".attachments").textContent(), "📎 1")
      assert.strictEqual(await row.locator(".org").textContent(), "org_acme")
      await screenshot(page, "quickstart-list.png")
    } finally {
      await browser.close()
    }
  })

  it("answers 404 in its place on 0.0.0.0 without a viewer token, and the quick start says so", async () => {
    const server = await startServer(configPath, { HOST: "0.0.0.0" }, ["--quickstart"])
    servers.push(server)
    const port = new URL(server.url).port
    const stdout = await printed(server, /OpenAPI: /)
    assert.include(stdout, "note: the outbox viewer is off: the server listens on 0.0.0.0")
    assert.notInclude(stdout, "outbox viewer: http")
    const answer = await fetch(`http://127.0.0.1:${port}/_mailroom/outbox/`)
    assert.strictEqual(answer.status, 404)
    assert.deepStrictEqual(await answer.json(), { message: "no route for GET /_mailroom/outbox/" })
    const run = await quickstart(`http://127.0.0.1:${port}`)
    assert.include(run.stdout, "The outbox viewer is not served here")
    assert.notInclude(run.stdout, "See it in your browser")
  })
})
