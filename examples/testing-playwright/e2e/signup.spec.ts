// Sign up on the app in Chromium, await the confirmation mail in the mailroom server's outbox, click
// its link: mailroom.testing needs no glue in a Playwright test.
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { MailroomClient } from "@mailroom/client"
import { Server, ServerConfig } from "@mailroom/server"
import { expect, test } from "@playwright/test"
import { startApp } from "../app.ts"

let dir: string
let mailroom: Server.RunningServer
let app: Awaited<ReturnType<typeof startApp>>

test.beforeAll(async () => {
  // A mailroom server on its embedded defaults, as `npx mailroom` runs it; any running one will do.
  dir = await mkdtemp(join(tmpdir(), "mailroom-e2e-"))
  const config = ServerConfig.parse(
    {
      port: 0,
      serviceDomain: "mailroom.test",
      organizations: [{ id: "org_app", slug: "app", verifiedDomains: ["app.example"], apiKeys: ["mr_test_app"] }],
      storage: { kind: "local", dir: "storage", signingSecret: "e2e" },
      provider: { kind: "outbox", dir: "outbox" }
    },
    { baseDir: dir }
  )
  mailroom = await Server.start(config, { log: () => {} })
  app = await startApp({ mailroomUrl: mailroom.url, apiKey: "mr_test_app" })
})

test.afterAll(async () => {
  await app?.close()
  await mailroom?.close()
  await rm(dir, { recursive: true, force: true })
})

test("signs up and confirms the address from the mail", async ({ page }) => {
  const { testing } = MailroomClient.make({ baseUrl: mailroom.url })
  await page.goto(app.url)
  await page.getByLabel("Email").fill("new-user@example.com")
  await page.getByRole("button", { name: "Sign up" }).click()
  await expect(page.getByRole("heading")).toHaveText("Check your inbox")

  const mail = await testing.awaitEmail({ to: "new-user@example.com", subject: "confirm" })
  const confirm = testing.links(mail).find((link) => link.text === "Confirm your address")
  expect(confirm).toBeDefined()
  await page.goto(confirm?.url ?? "")
  await expect(page.getByRole("heading")).toHaveText("Your address is confirmed")
})
