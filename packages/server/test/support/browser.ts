// Headless Chromium (Debian's `chromium`) driven by playwright-core, for the outbox viewer's tests, and
// where they keep their screenshots (test-artifacts/, not committed).
import { existsSync } from "node:fs"
import { mkdir } from "node:fs/promises"
import { join } from "node:path"
import { type Browser, chromium, type Page } from "playwright-core"

const executablePath = process.env.MAILROOM_CHROMIUM ?? "/usr/bin/chromium"

export const artifacts = new URL("../../../../test-artifacts/", import.meta.url).pathname

/**
 * Playwright gives each launch a fresh, empty profile (--user-data-dir). Without the background
 * networking flags Chromium keeps trying to reach Google's hosts, which an offline machine refuses.
 */
export const launchChromium = (): Promise<Browser> => {
  if (!existsSync(executablePath)) {
    throw new Error(
      `Chromium is not installed at ${executablePath}: apt-get install -y --no-install-recommends chromium fonts-dejavu-core (or set MAILROOM_CHROMIUM)`
    )
  }
  return chromium.launch({
    executablePath,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync"
    ]
  })
}

export const screenshot = async (page: Page, name: string) => {
  await mkdir(artifacts, { recursive: true })
  await page.screenshot({ path: join(artifacts, name), fullPage: true })
}
