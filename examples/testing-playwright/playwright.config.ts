// Playwright on the Chromium the machine has (Debian's, or MAILROOM_CHROMIUM): nothing to download.
import { defineConfig } from "@playwright/test"

export default defineConfig({
  testDir: "e2e",
  workers: 1,
  reporter: "list",
  outputDir: "../../test-artifacts/playwright-example",
  timeout: 60_000,
  use: {
    browserName: "chromium",
    launchOptions: {
      executablePath: process.env.MAILROOM_CHROMIUM ?? "/usr/bin/chromium",
      args: ["--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"]
    }
  }
})
