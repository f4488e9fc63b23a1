// A real server from a Debian package as a child process of the test: started, awaited until it
// answers, stopped (and killed if the test process dies first). effect-smol's container services are
// the model: acquire and release as one, `scopedPeer` for an Effect scope. Redis and aiosmtpd run on
// it; PostgreSQL (pg_ctl starts a daemon that is no child of ours) and radosgw (rgw.sh starts a
// cluster of daemons with its own watchdog) are daemons, which this does not manage.
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync } from "node:fs"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"

export interface PeerOptions {
  /** What is started, for messages: `"redis-server"`. */
  readonly name: string
  /** The executable (a path, or a name looked up on PATH) and its arguments. */
  readonly command: string
  readonly args: ReadonlyArray<string>
  /** The Debian packages that provide it, named in the error when the executable is missing. */
  readonly packages: ReadonlyArray<string>
  /**
   * When it is ready: a pattern its output (stdout and stderr) matches, or a probe polled until it
   * answers true (a PING, a connection).
   */
  readonly ready: RegExp | (() => Promise<boolean>)
  /** How long it may take to be ready before the start fails with its output. Default 20 seconds. */
  readonly timeout?: number
}

export interface Peer {
  readonly pid: number
  /** Everything it wrote so far, stdout and stderr interleaved: for a failing test's message. */
  readonly output: () => string
  /** SIGTERM, SIGKILL after five seconds; resolves once it has exited. Stopping twice is a no-op. */
  readonly stop: () => Promise<void>
}

const hasExited = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null

/** Waits for `ready`, or fails with the peer's output when it exits, cannot be run, or takes too long. */
const untilReady = (child: ChildProcess, options: PeerOptions, output: () => string): Promise<void> =>
  new Promise<void>((resolve, reject) => {
    const timeout = options.timeout ?? 20_000
    let settled = false
    const settle = (error?: Error) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      child.stdout?.off("data", onOutput)
      child.stderr?.off("data", onOutput)
      if (error === undefined) resolve()
      else reject(error)
    }
    const timer = setTimeout(
      () => settle(new Error(`${options.name} was not ready within ${timeout} ms:\n${output()}`)),
      timeout
    )
    const onOutput = () => {
      if (options.ready instanceof RegExp && options.ready.test(output())) settle()
    }
    child.stdout?.on("data", onOutput)
    child.stderr?.on("data", onOutput)
    child.once("error", (error) => settle(new Error(`${options.name} could not be started: ${error.message}`)))
    child.once("exit", (code, signal) =>
      settle(new Error(`${options.name} exited (${code ?? signal}) before it was ready:\n${output()}`))
    )
    const probe = options.ready
    if (typeof probe === "function") {
      const poll = async (): Promise<void> => {
        while (!settled) {
          if (await probe().catch(() => false)) return settle()
          await new Promise((next) => setTimeout(next, 25))
        }
      }
      void poll()
    }
  })

/**
 * Starts the peer and resolves once it is ready. A missing executable fails naming the Debian
 * packages to install; the peer is killed if this process exits without stopping it.
 */
export const spawnPeer = async (options: PeerOptions): Promise<Peer> => {
  if (options.command.startsWith("/") && !existsSync(options.command)) {
    throw new Error(
      `${options.name} is not installed (${options.command} is missing): apt-get install -y --no-install-recommends ${options.packages.join(" ")}`
    )
  }
  const child = spawn(options.command, [...options.args], { stdio: ["ignore", "pipe", "pipe"] })
  let written = ""
  const append = (chunk: Buffer) => {
    written += chunk.toString()
  }
  child.stdout?.on("data", append)
  child.stderr?.on("data", append)
  const output = () => written
  const exited = new Promise<void>((resolve) => {
    if (hasExited(child)) resolve()
    else child.once("exit", () => resolve())
    // A child that never started has no exit to wait for.
    child.once("error", () => resolve())
  })
  const kill = () => {
    if (!hasExited(child)) child.kill("SIGKILL")
  }
  process.once("exit", kill)
  const stop = async () => {
    process.off("exit", kill)
    if (!hasExited(child) && child.pid !== undefined) {
      child.kill("SIGTERM")
      const killer = setTimeout(kill, 5000)
      await exited
      clearTimeout(killer)
    }
  }
  try {
    await untilReady(child, options, output)
  } catch (error) {
    await stop()
    const missing = (error as Error).message.includes("ENOENT")
    throw missing
      ? new Error(
          `${options.name} is not installed: apt-get install -y --no-install-recommends ${options.packages.join(" ")}`
        )
      : error
  }
  return { pid: child.pid as number, output, stop }
}

/** The peer for the length of a scope. */
export const scopedPeer = (options: PeerOptions): Effect.Effect<Peer, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.promise(() => spawnPeer(options)),
    (peer) => Effect.promise(() => peer.stop())
  )

/** Whether the process `pid` is still running (a signal 0 reaches it). */
export const isRunning = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}
