// The built `mailroom` command in its own process, as a user (or a process manager) runs it: its
// output collected, its exit awaited, its base URL read from what it prints.
import { spawn } from "node:child_process"

export const bin = new URL("../dist/bin.js", import.meta.url).pathname

export const run = (configPath: string, env: Readonly<Record<string, string>> = {}) => {
  const child = spawn(process.execPath, [bin], {
    env: { ...process.env, MAILROOM_CONFIG: configPath, PORT: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stdout = ""
  let stderr = ""
  child.stdout.on("data", (d: Buffer) => {
    stdout += d.toString()
  })
  child.stderr.on("data", (d: Buffer) => {
    stderr += d.toString()
  })
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  const listening = new Promise<string>((resolve, reject) => {
    child.stdout.on("data", () => {
      const match = /listening on (http:\/\/\S+)/.exec(stdout)
      if (match?.[1] !== undefined) resolve(match[1])
    })
    void exited.then(() => reject(new Error(`exited before listening: ${stderr}`)))
  })
  // A run that is expected to fail never listens; only a caller that awaits this cares.
  listening.catch(() => {})
  return { child, exited, listening, output: () => ({ stdout, stderr }) }
}
