// The outbox viewer in a real browser (headless Chromium): mail sent through the API appears live,
// its HTML runs no script and loads nothing, its attachment downloads byte for byte, search and delete
// work, and nothing from a message can become markup on the viewer's pages.
import { randomBytes } from "node:crypto"
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises"
import { createServer, type Server as HttpServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { deflateSync } from "node:zlib"
import type { Browser, BrowserContext, Page } from "playwright-core"
import { afterAll, afterEach, assert, beforeAll, describe, it } from "vitest"
import { Server, ServerConfig } from "../src/index.js"
import { launchChromium, screenshot } from "./support/browser.js"

const organizations = [
  { id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"], apiKeys: ["mr_test_acme"] },
  { id: "org_globex", slug: "globex", verifiedDomains: ["globex.example"], apiKeys: ["mr_test_globex"] }
]

describe("the outbox viewer, in Chromium", () => {
  let dir: string
  let server: Server.RunningServer
  let viewer: string
  let browser: Browser
  let context: BrowserContext
  let page: Page
  // Anything a message's HTML manages to reach over the network lands here.
  let listener: HttpServer
  let listenerUrl: string
  const reached: Array<string> = []

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "mailroom-viewer-"))
    const config = ServerConfig.parse(
      {
        port: 0,
        serviceDomain: "mailroom.test",
        organizations,
        storage: { kind: "local", dir: "storage", signingSecret: "viewer-test" },
        provider: { kind: "outbox", dir: "outbox", suppressedRecipients: ["gone@example.com"] }
      },
      { baseDir: dir, source: "test config" }
    )
    server = await Server.start(config, { log: () => {} })
    assert.isDefined(server.viewer)
    viewer = server.viewer as string
    listener = createServer((req, res) => {
      reached.push(req.url ?? "")
      res.setHeader("access-control-allow-origin", "*")
      res.end("ok")
    })
    await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve))
    listenerUrl = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`
    browser = await launchChromium()
    // One page for every test: a new one costs seconds on a loaded machine. Each test navigates first.
    context = await browser.newContext({ acceptDownloads: true })
    page = await context.newPage()
  })
  afterAll(async () => {
    await browser?.close()
    listener?.close()
    await server?.close()
    await rm(dir, { recursive: true, force: true })
  })
  afterEach(async () => {
    // Each test starts from an empty outbox.
    await fetch(`${viewer}messages`, { method: "DELETE", headers: { "x-mailroom-viewer": "1" } })
  })

  const api = async (path: string, body: unknown, key = "mr_test_acme") => {
    const response = await fetch(`${server.url}${path}`, {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: JSON.stringify(body)
    })
    const json = (await response.json()) as Record<string, unknown>
    assert.strictEqual(response.status, 201, JSON.stringify(json))
    return json
  }
  const upload = async (filename: string, contentType: string, content: Buffer) => {
    const { url, key } = (await api("/attachments/presign", { filename, content_type: contentType })) as {
      url: string
      key: string
    }
    const put = await fetch(url, {
      method: "PUT",
      headers: { "content-type": contentType },
      body: new Uint8Array(content)
    })
    assert.strictEqual(put.status, 200)
    return key
  }
  const send = async (email: Record<string, unknown>, key = "mr_test_acme") =>
    String((await api("/emails", { from: "hello@acme.example", to: ["alice@example.com"], ...email }, key)).message_id)
  const outboxFiles = async () => (await readdir(join(dir, "outbox")).catch(() => [])).filter((f) => f.endsWith(".eml"))
  const row = (text: string) => page.locator("#messages li[data-id]").filter({ hasText: text })
  const subjects = () => page.locator("#messages li[data-id] .subject").allInnerTexts()
  const openList = async (query = "") => {
    await page.goto(`${viewer}${query === "" ? "" : `?q=${encodeURIComponent(query)}`}`)
    await page.locator('#live[data-state="live"]').waitFor()
  }

  const pngOf = (width: number, height: number) => {
    // A valid PNG of one colour, made here so the preview test needs no fixture file.
    const crc = (bytes: Buffer) => {
      let c = ~0
      for (const byte of bytes) {
        c ^= byte
        for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0xedb88320 : c >>> 1
      }
      return ~c >>> 0
    }
    const chunk = (type: string, data: Buffer) => {
      const body = Buffer.concat([Buffer.from(type, "latin1"), data])
      const length = Buffer.alloc(4)
      length.writeUInt32BE(data.length)
      const sum = Buffer.alloc(4)
      sum.writeUInt32BE(crc(body))
      return Buffer.concat([length, body, sum])
    }
    const header = Buffer.alloc(13)
    header.writeUInt32BE(width, 0)
    header.writeUInt32BE(height, 4)
    header.set([8, 2, 0, 0, 0], 8)
    const rowBytes = Buffer.concat([Buffer.from([0]), Buffer.alloc(width * 3, 0x40)])
    const pixels = deflateSync(Buffer.concat(Array.from({ length: height }, () => rowBytes)))
    return Buffer.concat([
      Buffer.from("89504e470d0a1a0a", "hex"),
      chunk("IHDR", header),
      chunk("IDAT", pixels),
      chunk("IEND", Buffer.alloc(0))
    ])
  }

  it("shows a message sent through the API in the open list, without a reload", async () => {
    await openList()
    assert.include(await page.locator("#messages").textContent(), "No messages yet")
    // A reload would lose this.
    await page.evaluate(() => Object.assign(window, { stillTheSamePage: true }))
    const report = await upload("report.pdf", "application/pdf", Buffer.from("%PDF-1.7 report"))
    await send({
      subject: "Welcome aboard",
      cc: ["carol@example.com"],
      body: { text: "Hi" },
      attachments: [{ filename: "report.pdf", key: report }]
    })
    await send(
      { from: "news@globex.example", to: ["bob@example.com"], subject: "Globex news", body: { text: "News" } },
      "mr_test_globex"
    )
    await row("Globex news").waitFor()
    await row("Welcome aboard").waitFor()
    assert.isTrue(await page.evaluate(() => (window as unknown as { stillTheSamePage?: boolean }).stillTheSamePage))
    const welcome = row("Welcome aboard")
    assert.strictEqual(await welcome.locator(".from").textContent(), "hello@acme.example")
    assert.strictEqual(await welcome.locator(".to").textContent(), "to alice@example.com, carol@example.com")
    assert.strictEqual(await welcome.locator(".org").textContent(), "org_acme")
    assert.strictEqual(await welcome.locator(".attachments").textContent(), "📎 1")
    assert.isNotEmpty(await welcome.locator("time").textContent())
    assert.include(await welcome.getAttribute("class"), "unread")
    // Newest first.
    assert.deepStrictEqual(await subjects(), ["Globex news", "Welcome aboard"])
    await screenshot(page, "viewer-list.png")
  })

  it("opens a message beside the list: its HTML sandboxed, running no script and reaching no network, with text, links, events, headers and source", async () => {
    const markup =
      '<p id="greeting">Hello <b>Alice</b></p>' +
      '<script>document.getElementById("greeting").textContent = "script ran"; ' +
      `parent.document.title = "script ran"; fetch("${listenerUrl}/script")</script>` +
      `<img src="${listenerUrl}/pixel.png" alt="">` +
      '<a href="http://localhost:3000/confirm">Confirm</a> <a href="/account">Account</a> ' +
      '<a href="https://acme.example/help">Help</a>'
    const id = await send({
      subject: "Your account",
      cc: ["gone@example.com"],
      body: { html: markup, text: "Hello Alice, plain." }
    })
    await openList()
    await page.evaluate(() => Object.assign(window, { stillTheSamePage: true }))
    await row("Your account").locator("a").click()
    await page.waitForURL(`${viewer}messages/${id}`)
    assert.strictEqual(await page.locator("#subject").textContent(), "Your account")
    // Opened in the pane beside the list, without a page load, and marked read there.
    assert.isTrue(await page.evaluate(() => (window as unknown as { stillTheSamePage?: boolean }).stillTheSamePage))
    await page.waitForFunction(
      (id) => document.querySelector(`#messages li[data-id="${id}"]`)?.className === "read selected",
      id
    )
    assert.strictEqual(await page.title(), "Your account · Outbox · mailroom")

    const frame = page.frameLocator("#html-part")
    await frame.locator("#greeting").waitFor()
    assert.strictEqual(await frame.locator("#greeting").textContent(), "Hello Alice")
    // The same HTML at phone width beside it.
    await page.frameLocator("#html-phone").locator("#greeting").waitFor()
    const desktopBox = await page.locator("#html-part").boundingBox()
    const phoneBox = await page.locator("#html-phone").boundingBox()
    assert.isAbove(desktopBox?.width ?? 0, 400)
    assert.approximately(phoneBox?.width ?? 0, 377, 2)
    assert.approximately(desktopBox?.y ?? 0, phoneBox?.y ?? 1, 1, "side by side")
    for (const f of page.frames().filter((f) => f.url().endsWith(`/messages/${id}/html`)))
      await f.waitForLoadState("load")
    assert.deepStrictEqual(reached, [], "the message's HTML reached the network")
    assert.strictEqual(await page.title(), "Your account · Outbox · mailroom")

    const tab = (name: string) => page.locator(".tabs a", { hasText: name }).click()
    await tab("Text")
    assert.strictEqual(await page.locator("#text-part").textContent(), "Hello Alice, plain.")
    assert.isFalse(await page.locator("#html-part").isVisible(), "one tab at a time")
    assert.strictEqual(await page.locator("ul.warnings").count(), 0)
    await tab("Links")
    const links = await page.locator("#links tbody tr").allInnerTexts()
    const linkFor = (url: string) => links.find((l) => l.includes(url)) ?? ""
    assert.include(linkFor("http://localhost:3000/confirm"), "points at localhost")
    assert.include(linkFor("/account"), "is relative")
    assert.include(linkFor("https://acme.example/help"), "ok")
    assert.include(linkFor(`${listenerUrl}/pixel.png`), "a remote image")
    await tab("Events")
    const events = await page.locator("#events tbody tr").allInnerTexts()
    assert.isTrue(
      events.some((e) => e.startsWith("delivered\talice@example.com")),
      events.join("\n")
    )
    assert.isTrue(
      events.some((e) => e.startsWith("rejected\tgone@example.com")),
      events.join("\n")
    )
    await tab("Headers")
    const organizationHeader = page.locator("#headers tr", { hasText: "X-Mailroom-Organization" }).locator("td")
    assert.strictEqual(await organizationHeader.textContent(), "org_acme")
    await tab("Source")
    assert.include(await page.locator("#raw").textContent(), "Content-Type: multipart/alternative")
    await tab("HTML")
    await screenshot(page, "viewer-message.png")

    // Asked for, remote images load (and only they: the script still does not run).
    const pixel = page.waitForRequest(`${listenerUrl}/pixel.png`)
    await page.locator("#remote-images").click()
    await pixel
    assert.strictEqual(await page.locator("#remote-images").textContent(), "Block remote images")
    assert.include(reached, "/pixel.png")
    assert.notInclude(reached, "/script")

    // The same markup outside the viewer runs and reaches the listener: the checks above can fail.
    const control = await context.newPage()
    await control.setContent(markup)
    await control.locator("#greeting", { hasText: "script ran" }).waitFor()
    await control.close()
    assert.include(reached, "/script")
  })

  it("downloads an attachment with its own bytes and content type, and previews an image", async () => {
    const bytes = randomBytes(50_000)
    const key = await upload("Relevé (août) 'v2'.pdf", "application/pdf", bytes)
    const png = pngOf(40, 30)
    const image = await upload("chart.png", "image/png", png)
    const id = await send({
      subject: "Your statement",
      body: { text: "Attached." },
      attachments: [
        { filename: "Relevé (août) 'v2'.pdf", key },
        { filename: "chart.png", key: image }
      ]
    })
    await page.goto(`${viewer}messages/${id}`)
    await page.locator(".tabs a", { hasText: "Attachments (2)" }).click()
    const preview = page.locator(".previews-images img")
    await preview.waitFor()
    assert.strictEqual(await preview.getAttribute("alt"), "chart.png")
    // decode() waits for the image to load: the element is in the page before its bytes arrive.
    const drawn = await preview.evaluate((img: HTMLImageElement) => img.decode().then(() => img.naturalWidth))
    assert.strictEqual(drawn, 40, "the image drew")
    const link = page.locator("#attachments a", { hasText: "Relevé (août) 'v2'.pdf" })
    assert.include(await page.locator("#attachments tbody").textContent(), "application/pdf")
    const [download] = await Promise.all([page.waitForEvent("download"), link.click()])
    assert.strictEqual(download.suggestedFilename(), "Relevé (août) 'v2'.pdf")
    assert.isTrue(Buffer.from(await readFile(await download.path())).equals(bytes))
    const answer = await page.request.get(new URL((await link.getAttribute("href")) as string, viewer).href)
    assert.strictEqual(answer.headers()["content-type"], "application/pdf")
    // Inline only as a raster image: a PDF asked for inline is still a download.
    const pdfInline = await page.request.get(`${viewer}messages/${id}/attachments/0?inline=1`)
    assert.match(pdfInline.headers()["content-disposition"] ?? "", /^attachment;/)
    // The message's .eml downloads too.
    await page.locator(".tabs a", { hasText: "Source" }).click()
    const [eml] = await Promise.all([
      page.waitForEvent("download"),
      page.locator("a", { hasText: "Download the .eml" }).click()
    ])
    assert.strictEqual(eml.suggestedFilename(), `${id}.eml`)
    assert.isTrue(
      Buffer.from(await readFile(await eml.path())).equals(await readFile(join(dir, "outbox", `${id}.eml`)))
    )
  })

  it("warns when the text part or the HTML part is missing", async () => {
    const htmlOnly = await send({ subject: "Only HTML", body: { html: "<p>Hi</p>" } })
    const textOnly = await send({ subject: "Only text", body: { text: "Hi" } })
    await page.goto(`${viewer}messages/${htmlOnly}`)
    assert.include(await page.locator("ul.warnings").textContent(), "No text part")
    assert.notInclude(await page.locator("ul.warnings").textContent(), "No HTML part")
    await page.goto(`${viewer}messages/${textOnly}`)
    assert.include(await page.locator("ul.warnings").textContent(), "No HTML part")
    assert.notInclude(await page.locator("ul.warnings").textContent(), "No text part")
  })

  it("shows markup from a message as text, on the list and on the message page", async () => {
    const subject = `<img src=x onerror="document.title='xss'"><b>bold</b>`
    const id = await send({ subject, from_name: "<script>document.title='xss'</script>", body: { text: "x" } })
    await openList()
    await row("bold").waitFor()
    assert.include(await row("bold").textContent(), subject)
    assert.strictEqual(await page.locator("#messages img, #messages b, #messages script").count(), 0)
    await page.goto(`${viewer}messages/${id}`)
    assert.strictEqual(await page.locator("#subject").textContent(), subject)
    assert.include(await page.locator("dl.meta").textContent(), "<script>document.title='xss'</script>")
    assert.strictEqual(await page.locator("#view img, #view b, #messages img, #messages b").count(), 0)
    assert.strictEqual(await page.title(), `${subject} · Outbox · mailroom`)
  })

  it("searches from, to, subject, text and organisation, as the search box is typed in", async () => {
    await send({ subject: "Invoice 42", to: ["bob@example.com"], body: { text: "x" } })
    await send({ subject: "Welcome", bcc: ["dora@example.com"], body: { text: "Your coupon is SPRING-2026." } })
    await send({ from: "news@globex.example", subject: "Globex weekly", body: { text: "x" } }, "mr_test_globex")
    const searchFor = async (query: string, expected: ReadonlyArray<string>) => {
      await page.locator("#search").fill(query)
      const want = [...expected].sort().join("\n")
      await page
        .waitForFunction(
          (want) =>
            [...document.querySelectorAll("#messages li[data-id] .subject")]
              .map((cell) => cell.textContent)
              .sort()
              .join("\n") === want,
          want,
          { timeout: 10_000 }
        )
        .catch(async () => assert.fail(`search ${query}: shown ${(await subjects()).join(", ")}, expected ${want}`))
    }
    await openList()
    await searchFor("bob@", ["Invoice 42"])
    await searchFor("DORA", ["Welcome"])
    await searchFor("invoice", ["Invoice 42"])
    await searchFor("spring-2026", ["Welcome"])
    await searchFor("news@globex", ["Globex weekly"])
    await searchFor("org_globex", ["Globex weekly"])
    await searchFor("nobody", [])
    assert.include(await page.locator("#messages").textContent(), "No message matches")
    assert.strictEqual(new URL(page.url()).searchParams.get("q"), "nobody")
    await searchFor("", ["Invoice 42", "Welcome", "Globex weekly"])
    // The search is a plain link too.
    await openList("globex")
    assert.deepStrictEqual(await subjects(), ["Globex weekly"])
  })

  it("moves between messages with the keyboard, and marks them read and unread", async () => {
    await send({ subject: "First", body: { text: "1" } })
    await send({ subject: "Second", body: { text: "2" } })
    await send({ subject: "Third", body: { text: "3" } })
    await openList()
    await row("First").waitFor()
    await page.keyboard.press("j")
    await page.locator("#subject", { hasText: "Third" }).waitFor()
    await page.keyboard.press("j")
    await page.locator("#subject", { hasText: "Second" }).waitFor()
    await page.keyboard.press("ArrowDown")
    await page.locator("#subject", { hasText: "First" }).waitFor()
    await page.keyboard.press("k")
    await page.locator("#subject", { hasText: "Second" }).waitFor()
    assert.include(await row("Second").getAttribute("class"), "read")
    await page.keyboard.press("u")
    await page.locator("button[data-toggle-read]", { hasText: "Mark read" }).waitFor()
    await page.waitForFunction(() => document.querySelector("#messages li.selected")?.classList.contains("unread"))
    // The mark is the server's: a fresh list shows it.
    await openList()
    assert.deepStrictEqual(
      await page.locator("#messages li[data-id]").evaluateAll((items) => items.map((i) => i.className)),
      ["read", "unread", "read"]
    )
    await page.keyboard.press("/")
    assert.isTrue(await page.locator("#search").evaluate((input) => input === document.activeElement))
  })

  it("deletes one message, then every message, from the page", async () => {
    const first = await send({ subject: "Delete me", body: { text: "x" } })
    await send({ subject: "Keep me a while", body: { text: "x" } })
    page.on("dialog", (dialog) => void dialog.accept())
    await page.goto(`${viewer}messages/${first}`)
    await page.locator("#view button", { hasText: "Delete" }).click()
    await page.waitForURL(viewer)
    await row("Keep me a while").waitFor()
    assert.strictEqual(await row("Delete me").count(), 0)
    assert.notInclude(await outboxFiles(), `${first}.eml`)
    const gone = await page.goto(`${viewer}messages/${first}`)
    assert.strictEqual(gone?.status(), 404)
    assert.strictEqual(await page.locator("h1").textContent(), "This message is not in the outbox")
    await page.goto(viewer)
    assert.lengthOf(await outboxFiles(), 1)
    await page.locator("button", { hasText: "Delete all" }).click()
    await page.locator("#messages li.empty").waitFor()
    assert.lengthOf(await outboxFiles(), 0)
  })

  it("refuses a delete that does not come from its own page", async () => {
    const id = await send({ subject: "Stay", body: { text: "x" } })
    const attempt = (headers: Record<string, string>) =>
      fetch(`${viewer}messages/${id}`, { method: "DELETE", headers }).then((r) => r.status)
    assert.strictEqual(await attempt({}), 403)
    assert.strictEqual(await attempt({ "x-mailroom-viewer": "1", origin: "http://evil.example" }), 403)
    assert.strictEqual(await attempt({ "x-mailroom-viewer": "1", "sec-fetch-site": "cross-site" }), 403)
    assert.include(await outboxFiles(), `${id}.eml`)
    // A page of another origin, in the browser, cannot do it either.
    await page.goto(`${listenerUrl}/elsewhere`)
    const status = await page.evaluate(
      (url) =>
        fetch(url, { method: "DELETE", headers: { "x-mailroom-viewer": "1" } }).then(
          (r) => r.status,
          () => "blocked"
        ),
      `${viewer}messages/${id}`
    )
    assert.strictEqual(status, "blocked")
    assert.include(await outboxFiles(), `${id}.eml`)
  })
})
