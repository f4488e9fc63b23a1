// startAll with real processes: every peer answered in order, and none left running when one fails.
import { assert, describe, it } from "vitest"
import { isRunning as alive, type Peer, rejection, type Starter, spawnPeer, startAll } from "../src/index.ts"

const idle = (): Promise<Peer> =>
  spawnPeer({
    name: "node",
    command: process.execPath,
    args: ["-e", `console.log("ready"); setInterval(() => {}, 1000)`],
    packages: ["nodejs"],
    ready: /ready/
  })

describe("startAll", () => {
  it("answers every peer in the order given", async () => {
    const [peer, port] = await startAll([
      { start: idle, stop: (p) => p.stop() },
      { start: async () => 4242, stop: () => undefined }
    ])
    try {
      assert.isTrue(alive(peer.pid))
      assert.strictEqual(port, 4242)
    } finally {
      await peer.stop()
    }
  })

  it("stops the peers that started when another fails, and throws that failure", async () => {
    const started: Array<Peer> = []
    const tracked: Starter<Peer> = {
      start: async () => {
        const peer = await idle()
        started.push(peer)
        return peer
      },
      stop: (peer) => peer.stop()
    }
    const taken: Starter<number> = {
      start: () => Promise.reject(new Error("the port is taken")),
      stop: () => undefined
    }
    const failure = await rejection(startAll([tracked, taken, tracked]))
    assert.instanceOf(failure, Error)
    assert.strictEqual((failure as Error).message, "the port is taken")
    assert.lengthOf(started, 2)
    for (const peer of started) assert.isFalse(alive(peer.pid), `pid ${peer.pid} is still running`)
  })
})
