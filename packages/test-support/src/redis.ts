// A real redis-server (Debian's `redis-server`) on 127.0.0.1 for tests: a free port, a temporary
// directory, nothing persisted.
import { mkdtemp, rm } from "node:fs/promises"
import { createConnection } from "node:net"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { type Peer, spawnPeer } from "./peer.ts"
import { freePort } from "./ports.ts"

export interface RedisServer {
  readonly port: number
  readonly url: string
  /** Stops the server (SIGKILL after five seconds); its data is gone, as nothing is persisted. */
  readonly stop: () => Promise<void>
  /** Starts it again on the same port, empty. */
  readonly start: () => Promise<void>
  /** Stops it for good and removes its directory. */
  readonly dispose: () => Promise<void>
}

/** Resolves once the server answers PING with PONG. */
const answers = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = createConnection({ port, host: "127.0.0.1" })
    let reply = ""
    socket.once("error", () => resolve(false))
    socket.on("data", (data) => {
      reply += data.toString()
      if (reply.includes("\r\n")) {
        socket.destroy()
        resolve(reply.startsWith("+PONG"))
      }
    })
    socket.once("connect", () => socket.write("PING\r\n"))
  })

export const startRedisServer = async (): Promise<RedisServer> => {
  const dir = await mkdtemp(path.join(tmpdir(), "mailroom-redis-"))
  const port = await freePort()
  let peer: Peer | undefined

  const start = async () => {
    peer = await spawnPeer({
      name: "redis-server",
      command: "redis-server",
      args: ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--save", "", "--appendonly", "no"],
      packages: ["redis-server"],
      ready: () => answers(port),
      timeout: 10_000
    })
  }

  const stop = async () => {
    const current = peer
    peer = undefined
    await current?.stop()
  }

  await start()
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    stop,
    start,
    dispose: async () => {
      await stop()
      await rm(dir, { recursive: true, force: true })
    }
  }
}
