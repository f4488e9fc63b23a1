// spawnPeer with Node itself as the peer: ready when its output says so or a probe answers, a clear
// error when it exits first, is missing or is slow, and stopped for good.
import { assert, describe, it } from "vitest"
import { isRunning as alive, spawnPeer } from "../src/index.ts"

const node = (script: string) => ({ command: process.execPath, args: ["-e", script], packages: ["nodejs"] })

describe("spawnPeer", () => {
  it("resolves once the output says it is ready, and stop ends the process", async () => {
    const peer = await spawnPeer({
      name: "node",
      ...node(`setTimeout(() => console.log("listening"), 100); setInterval(() => {}, 1000)`),
      ready: /listening/
    })
    assert.isTrue(alive(peer.pid))
    assert.include(peer.output(), "listening")
    await peer.stop()
    assert.isFalse(alive(peer.pid))
    await peer.stop()
  })

  it("resolves once a probe answers true", async () => {
    let asked = 0
    const peer = await spawnPeer({
      name: "node",
      ...node("setInterval(() => {}, 1000)"),
      ready: async () => ++asked >= 3
    })
    assert.strictEqual(asked, 3)
    await peer.stop()
  })

  it("fails with the output when the peer exits before it is ready, or takes too long", async () => {
    const exited = await spawnPeer({
      name: "node",
      ...node(`console.error("no such option"); process.exit(3)`),
      ready: /never/
    }).catch((error: Error) => error.message)
    assert.match(String(exited), /node exited \(3\) before it was ready:\nno such option/)
    const slow = await spawnPeer({
      name: "node",
      ...node(`console.log("starting"); setInterval(() => {}, 1000)`),
      ready: /never/,
      timeout: 300
    }).catch((error: Error) => error.message)
    assert.match(String(slow), /node was not ready within 300 ms:\nstarting/)
  })

  it("names the Debian packages when the executable is missing", async () => {
    for (const command of ["mailroom-no-such-server", "/usr/bin/mailroom-no-such-server"]) {
      const missing = await spawnPeer({
        name: "the server",
        command,
        args: [],
        packages: ["no-such-package"],
        ready: /never/
      }).catch((error: Error) => error.message)
      assert.match(
        String(missing),
        /the server is not installed.*apt-get install -y --no-install-recommends no-such-package/
      )
    }
  })
})
