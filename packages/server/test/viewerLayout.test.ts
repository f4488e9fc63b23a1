// The viewer's layout in Chromium from a 360 px phone to a wide desktop, with a screenshot of each
// (test-artifacts/): nothing overflows sideways, the list keeps whole lines, the header holds on one
// row, two panes side by side on a desktop and one at a time on a phone, an HTML preview that grows
// with the window, and the favicon.
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Browser, Page } from "playwright-core"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { Server, ServerConfig } from "../src/index.js"
import { launchChromium, screenshot } from "./support/browser.js"

describe("the outbox viewer's layout, in Chromium", () => {
  let dir: string
  let server: Server.RunningServer
  let viewer: string
  let browser: Browser
  let messageId: string

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "mailroom-viewer-layout-"))
    const config = ServerConfig.parse(
      {
        port: 0,
        serviceDomain: "mailroom.test",
        organizations: [{ id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"], apiKeys: ["mr_test_acme"] }],
        storage: { kind: "local", dir: "storage", signingSecret: "layout-test" },
        provider: { kind: "outbox", dir: "outbox" }
      },
      { baseDir: dir, source: "test config" }
    )
    server = await Server.start(config, { log: () => {} })
    viewer = server.viewer as string
    const send = async (subject: string, to: ReadonlyArray<string>, html: string) => {
      const response = await fetch(`${server.url}/emails`, {
        method: "POST",
        headers: { "x-api-key": "mr_test_acme", "content-type": "application/json" },
        body: JSON.stringify({
          from: "notifications-and-account-updates@acme.example",
          from_name: "Acme Notifications",
          to,
          subject,
          body: { html, text: "Hello" }
        })
      })
      return ((await response.json()) as { message_id: string }).message_id
    }
    await send("Short", ["alice@example.com"], "<p>Hi</p>")
    await send(
      "Your monthly statement for the account ending in 4242 is ready, with every transaction since the last one",
      ["a-very-long-recipient-address-for-testing@subdomain.example.com", "second@example.com"],
      "<p>Statement</p>"
    )
    messageId = await send(
      "Welcome to Acme: confirm your address to finish setting up your workspace",
      ["alice@example.com"],
      `<table width="600" style="font-family:sans-serif"><tr><td><h1>Welcome</h1><p>${"Lorem ipsum dolor sit amet. ".repeat(40)}</p><a href="https://acme.example/confirm">Confirm</a></td></tr></table>`
    )
    browser = await launchChromium()
  })
  afterAll(async () => {
    await browser?.close()
    await server?.close()
    await rm(dir, { recursive: true, force: true })
  })

  const open = async (width: number, path: string, height = 800): Promise<Page> => {
    const page = await (await browser.newContext({ viewport: { width, height } })).newPage()
    await page.goto(`${viewer}${path}`)
    await page.locator('#live[data-state="live"]').waitFor()
    return page
  }
  const overflow = (page: Page) =>
    page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)
  const box = async (page: Page, selector: string) => {
    const found = await page.locator(selector).first().boundingBox()
    if (found === null) throw new Error(`${selector} is not shown`)
    return found
  }

  for (const width of [360, 375, 1280]) {
    it(`the list at ${width} px: whole lines, nothing sideways, the header on its rows`, async () => {
      const page = await open(width, "")
      assert.strictEqual(await overflow(page), 0, "the page scrolls sideways")
      const lineHeight = await page
        .locator("#messages li[data-id] .subject")
        .first()
        .evaluate((el) => Number.parseFloat(getComputedStyle(el).lineHeight))
      for (const subject of await page.locator("#messages li[data-id] .subject").all()) {
        const { height, width: shown } = (await subject.boundingBox()) ?? { height: 0, width: 0 }
        assert.isAtMost(height, lineHeight * 1.5, "a subject wraps instead of ending in an ellipsis")
        assert.isAtLeast(shown, Math.min(width, 400) - 80, "a subject is squeezed")
      }
      const bar = await box(page, ".bar")
      assert.isAtMost(bar.height, width < 560 ? 110 : 60, "the header breaks onto more rows than it has")
      assert.isFalse((await page.locator("#view").isVisible()) && width < 900, "a phone shows one pane")
      await screenshot(page, `viewer-list-${width}.png`)
      await page.context().close()
    })

    it(`a message at ${width} px: the pane${width < 900 ? " alone" : "s side by side"}, previews within the window`, async () => {
      const page = await open(width, `messages/${messageId}`)
      await page.frameLocator("#html-part").getByText("Welcome").first().waitFor()
      assert.strictEqual(await overflow(page), 0, "the page scrolls sideways")
      const view = await box(page, "#view")
      if (width >= 900) {
        const list = await box(page, ".list")
        assert.isAtMost(list.x + list.width, view.x + 1, "the list and the message side by side")
        assert.approximately(list.y, view.y, 1)
        const title = await box(page, "#subject")
        const actions = await box(page, ".actions")
        assert.approximately(title.y, actions.y, 12, "the title and its actions on one row")
        const desktop = await box(page, "#html-part")
        const phone = await box(page, "#html-phone")
        assert.approximately(desktop.y, phone.y, 1, "desktop and phone side by side")
        assert.isAbove(desktop.width, phone.width)
      } else {
        assert.isFalse(await page.locator(".list").isVisible(), "a phone shows one pane")
        assert.isTrue(await page.locator(".back a").isVisible(), "a way back to the list")
      }
      for (const frame of ["#html-part", "#html-phone"]) {
        const { x, width: shown } = await box(page, frame)
        assert.isAtMost(x + shown, width + 0.5, `${frame} runs past the window`)
      }
      await screenshot(page, `viewer-message-${width}.png`)
      // The preview grows with the window: no fixed height.
      const before = (await box(page, "#html-part")).height
      await page.setViewportSize({ width, height: 1100 })
      const after = (await box(page, "#html-part")).height
      assert.isAbove(after, before + 200)
      await page.context().close()
    })
  }

  it("has a favicon, served by the viewer", async () => {
    const page = await open(1280, "")
    const href = await page.locator('link[rel="icon"]').getAttribute("href")
    const icon = await page.request.get(new URL(href ?? "", viewer).href)
    assert.strictEqual(icon.status(), 200)
    assert.strictEqual(icon.headers()["content-type"], "image/svg+xml")
    assert.match(await icon.text(), /^<svg /)
    await page.context().close()
  })
})
