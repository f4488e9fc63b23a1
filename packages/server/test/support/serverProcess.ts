// The `mailroom` command in a process of its own, as a user runs it (the built bin), with its output
// captured so a test can wait for a line, send it signals, and always stop it.
import { spawn } from "node:child_process"
import { existsSync } from "node:fs"

const bin = new URL("../../dist/bin.js", import.meta.url).pathname

export interface ServerProcess {
  /** The base URL from its "listening on" line. */
  readonly url: string
  readonly pid: number
  readonly output: () => { readonly stdout: string; readonly stderr: string }
  /**
   * Resolves once stdout or stderr has a line matching `pattern` written after this call: call it
   * before whatever makes the server write the line.
   */
  readonly waitFor: (pattern: RegExp, timeoutMs?: number) => Promise<string>
  readonly signal: (name: NodeJS.Signals) => void
  /** SIGTERM, then SIGKILL if it has not exited within five seconds. */
  readonly stop: () => Promise<void>
}

export interface StartOptions {
  /** The process's limit on open files (`ulimit -n`), to run it short of file handles. */
  readonly fileLimit?: number
}

export const startServer = async (
  configPath: string,
  env: Readonly<Record<string, string>> = {},
  args: ReadonlyArray<string> = [],
  options: StartOptions = {}
): Promise<ServerProcess> => {
  if (!existsSync(bin)) throw new Error(`${bin} is missing: the test command builds the packages first`)
  const [command, argv] =
    options.fileLimit === undefined
      ? [process.execPath, [bin, ...args]]
      : // exec: the pid signalled is the server's own, not a shell's.
        ["sh", ["-c", `ulimit -n ${options.fileLimit} && exec "$0" "$@"`, process.execPath, bin, ...args]]
  const child = spawn(command, argv, {
    env: { ...process.env, MAILROOM_CONFIG: configPath, PORT: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stdout = ""
  let stderr = ""
  const watchers = new Set<() => void>()
  const collect = (append: (text: string) => void) => (data: Buffer) => {
    append(data.toString())
    for (const watcher of watchers) watcher()
  }
  child.stdout.on(
    "data",
    collect((text) => (stdout += text))
  )
  child.stderr.on(
    "data",
    collect((text) => (stderr += text))
  )
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))

  const waitFor = (pattern: RegExp, timeoutMs = 10_000, fromStart = false) => {
    const outFrom = fromStart ? 0 : stdout.length
    const errFrom = fromStart ? 0 : stderr.length
    return new Promise<string>((resolve, reject) => {
      const check = () => {
        const lines = [...stdout.slice(outFrom).split("\n"), ...stderr.slice(errFrom).split("\n")]
        const match = lines.find((line) => pattern.test(line))
        if (match === undefined) return
        done()
        resolve(match)
      }
      const timer = setTimeout(() => {
        done()
        reject(new Error(`no line matching ${pattern} within ${timeoutMs} ms:\n${stdout}\n${stderr}`))
      }, timeoutMs)
      const gone = () => {
        done()
        reject(new Error(`the server exited before a line matching ${pattern}:\n${stdout}\n${stderr}`))
      }
      const done = () => {
        clearTimeout(timer)
        watchers.delete(check)
        child.off("exit", gone)
      }
      watchers.add(check)
      child.once("exit", gone)
      check()
    })
  }

  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return
    child.kill("SIGTERM")
    const killer = setTimeout(() => child.kill("SIGKILL"), 5000)
    await exited
    clearTimeout(killer)
  }
  try {
    const line = await waitFor(/listening on http:\/\/\S+/, 20_000, true)
    const url = /listening on (http:\/\/\S+)/.exec(line)?.[1] as string
    return {
      url,
      pid: child.pid as number,
      output: () => ({ stdout, stderr }),
      waitFor: (pattern, timeoutMs) => waitFor(pattern, timeoutMs),
      signal: (name) => child.kill(name),
      stop
    }
  } catch (error) {
    await stop()
    throw error
  }
}
