// A real redis-server (Debian's `redis-server`) on 127.0.0.1 for tests: a free port, a temporary
// directory, nothing persisted.
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtemp, rm } from "node:fs/promises"
import { createConnection } from "node:net"
import { tmpdir } from "node:os"
import * as path from "node:path"
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

const exited = (child: ChildProcess) =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise<void>((resolve) => child.once("exit", () => resolve()))

export const startRedisServer = async (): Promise<RedisServer> => {
  const dir = await mkdtemp(path.join(tmpdir(), "mailroom-redis-"))
  const port = await freePort()
  let child: ChildProcess | undefined
  let output = ""

  const start = async () => {
    output = ""
    const process = spawn(
      "redis-server",
      ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--save", "", "--appendonly", "no"],
      { stdio: ["ignore", "pipe", "pipe"] }
    )
    child = process
    process.stdout?.on("data", (data: Buffer) => (output += data.toString()))
    process.stderr?.on("data", (data: Buffer) => (output += data.toString()))
    const spawnError = new Promise<never>((_, reject) =>
      process.once("error", (error) =>
        reject(new Error(`redis-server could not be started (is it installed?): ${error.message}`))
      )
    )
    const deadline = Date.now() + 10_000
    const ready = (async () => {
      while (!(await answers(port))) {
        if (process.exitCode !== null) throw new Error(`redis-server exited at start:\n${output}`)
        if (Date.now() > deadline)
          throw new Error(`redis-server did not answer on port ${port} within 10 s:\n${output}`)
        await new Promise((resolve) => setTimeout(resolve, 25))
      }
    })()
    await Promise.race([ready, spawnError])
  }

  const stop = async () => {
    const current = child
    if (current === undefined) return
    child = undefined
    if (current.exitCode !== null || current.signalCode !== null) return
    current.kill("SIGTERM")
    const killer = setTimeout(() => current.kill("SIGKILL"), 5000)
    await exited(current)
    clearTimeout(killer)
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
