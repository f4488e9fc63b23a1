// Runs the example's Playwright suite as a user would (`playwright test`), in Chromium, and checks it
// passed: the end-to-end test of issue 31's "Done when".
import { spawn } from "node:child_process"
import { createRequire } from "node:module"
import { fileURLToPath } from "node:url"
import { assert, it } from "vitest"

const example = fileURLToPath(new URL("..", import.meta.url))
const cli = createRequire(import.meta.url).resolve("@playwright/test/cli")

it("the Playwright suite signs up, awaits the mail and follows its link, in Chromium", async () => {
  const child = spawn(process.execPath, [cli, "test"], {
    cwd: example,
    env: { ...process.env, CI: "1", FORCE_COLOR: "0" },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout.on("data", (d: Buffer) => {
    output += d.toString()
  })
  child.stderr.on("data", (d: Buffer) => {
    output += d.toString()
  })
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve))
  assert.strictEqual(code, 0, output)
  assert.match(output, /1 passed/)
}, 120_000)
