// The server's default log: the lines of one turn of the event loop reach stdout together, in order,
// and none is lost when the process exits before the turn ends.
import { spawnSync } from "node:child_process"
import { assert, describe, it } from "vitest"

const lines = new URL("../src/internal/lines.ts", import.meta.url).pathname

const run = (script: string) =>
  spawnSync(
    process.execPath,
    ["--input-type=module", "-e", `import { toStdout } from ${JSON.stringify(lines)}\n${script}`],
    {
      encoding: "utf8"
    }
  )

describe("the default log", () => {
  it("lines arrive in order, those of one turn in one write, the last ones even at an exit", () => {
    const written = run(`
      const writes = []
      const write = process.stdout.write.bind(process.stdout)
      process.stdout.write = (text) => (writes.push(text), write(text))
      toStdout("GET /a 200 1.0ms")
      toStdout("GET /b 200 1.0ms")
      setImmediate(() => {
        toStdout("GET /c 201 2.0ms")
        process.on("exit", () => process.stderr.write(String(writes.length)))
        process.exit(0)
      })
    `)
    assert.strictEqual(written.status, 0, written.stderr)
    assert.strictEqual(written.stdout, "GET /a 200 1.0ms\nGET /b 200 1.0ms\nGET /c 201 2.0ms\n")
    assert.strictEqual(written.stderr, "2", "two writes: the first turn's two lines, then the last at exit")
  })
})
