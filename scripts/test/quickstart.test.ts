// `npm run quickstart` before `npm start`: it says to start the server first, without the stack of a
// failed fetch, and exits 1.
import { execFile } from "node:child_process"
import { promisify } from "node:util"
import { freePort } from "@mailroom/test-support"
import { assert, describe, it } from "vitest"

const run = promisify(execFile)
const quickstart = new URL("../quickstart.ts", import.meta.url).pathname

describe("scripts/quickstart.ts", () => {
  it("against a server that is not up, says to start it with npm start, and exits 1", async () => {
    const port = await freePort()
    const failed = await run(process.execPath, [quickstart], {
      env: { ...process.env, MAILROOM_URL: `http://127.0.0.1:${port}` }
    }).then(
      () => assert.fail("the quickstart succeeded with no server"),
      (error: { code: number; stdout: string; stderr: string }) => error
    )
    assert.strictEqual(failed.code, 1)
    assert.strictEqual(
      failed.stderr.trim(),
      `No mailroom server answers at http://127.0.0.1:${port} (ECONNREFUSED): start the server first with npm start, in another terminal (or set MAILROOM_URL to where yours listens).`
    )
    assert.notMatch(`${failed.stdout}${failed.stderr}`, /fetch failed|^\s+at /m)
  })
})
