// The `mailroom` command's PORT and HOST, and the durations that become Node.js timers, as an operator
// sets them: an IPv6 loopback listener serves, and a value it cannot use stops it naming the variable.
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { run } from "./process.js"

const config = (sections: Record<string, unknown> = {}) =>
  JSON.stringify({
    serviceDomain: "mailroom.test",
    organizations: [{ id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"], apiKeys: ["mr_test_listen"] }],
    storage: { kind: "local", dir: "storage", signingSecret: "listen-secret-value" },
    provider: { kind: "outbox", dir: "outbox" },
    ...sections
  })

/** True when this machine can listen on IPv6's loopback (a container may have IPv6 turned off). */
const ipv6Loopback = () =>
  new Promise<boolean>((resolve) => {
    const probe = createServer()
    probe.once("error", () => resolve(false))
    probe.listen(0, "::1", () => probe.close(() => resolve(true)))
  })

describe("PORT, HOST and timer durations", () => {
  let dir: string
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "mailroom-listen-"))
  })
  afterAll(() => rm(dir, { recursive: true, force: true }))

  /** Runs the command; answers its exit code ("running" if it served, then stopped) and its output. */
  const attempt = async (name: string, sections: Record<string, unknown>, env: Record<string, string>) => {
    const path = join(dir, `${name}.json`)
    await writeFile(path, config(sections))
    const server = run(path, env)
    const code = await Promise.race([server.exited, server.listening.then(() => "running" as const)])
    if (code === "running") {
      server.child.kill("SIGTERM")
      await server.exited
    }
    const { stdout, stderr } = server.output()
    return { code, output: `${stdout}${stderr}` }
  }

  it("HOST=::1 listens on IPv6's loopback, prints a URL that parses, and serves the viewer there", async (ctx) => {
    if (!(await ipv6Loopback())) ctx.skip()
    const path = join(dir, "ipv6.json")
    await writeFile(path, config())
    const server = run(path, { HOST: "::1" })
    try {
      const url = await server.listening
      assert.match(url, /^http:\/\/\[::1\]:\d+$/)
      const health = await fetch(`${url}/healthz`)
      assert.strictEqual(health.status, 200)
      const viewer = await fetch(`${url}/_mailroom/outbox/`)
      assert.strictEqual(viewer.status, 200)
    } finally {
      server.child.kill("SIGTERM")
      await server.exited
    }
  })

  it("a HOST that is no address and resolves to none is named, without a stack", async () => {
    const { code, output } = await attempt("unresolvable", {}, { HOST: "no-such-host.invalid" })
    assert.strictEqual(code, 1, output)
    assert.include(output, "HOST: no-such-host.invalid is not an address")
    assert.notMatch(output, /^\s+at /m, `a stack trace:\n${output}`)
  })

  it("a PORT that is not written in decimal digits is refused, not read as another port", async () => {
    for (const port of ["0x0", "0e0", "0b0"]) {
      const { code, output } = await attempt(`port-${port}`, {}, { PORT: port })
      assert.strictEqual(code, 1, output)
      assert.include(output, `PORT: "${port}" is not a port number`)
    }
  })

  it("requestTimeout and shutdownGracePeriod beyond a timer's 24 days are named, without a stack", async () => {
    const { code, output } = await attempt(
      "timers",
      { requestTimeout: "99999999999 days", shutdownGracePeriod: "30 days" },
      {}
    )
    assert.strictEqual(code, 1, output)
    assert.include(output, 'requestTimeout: must be at most "24 days"')
    assert.include(output, 'shutdownGracePeriod: must be at most "24 days"')
    assert.notMatch(output, /^\s+at /m, `a stack trace:\n${output}`)
  })
})
