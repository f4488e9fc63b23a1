// What the benchmarks against a running server share: the built server (bin.js) on a config of its
// own in a fresh folder, a script of the bench run as a server of its own, and autocannon's load.
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import autocannon from "autocannon"
import { SMTPServer } from "smtp-server"

const bin = new URL("../packages/server/dist/bin.js", import.meta.url).pathname

export interface Running {
  readonly url: string
  readonly child: ChildProcess
  /** Stops the process, then removes its folder. */
  readonly stop: () => Promise<void>
}

/** The organisation, storage and outbox every bench server has: the embedded defaults. */
export const embedded = {
  serviceDomain: "mailroom.test",
  organizations: [{ id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"], apiKeys: ["mr_bench"] }],
  storage: { kind: "local", dir: ".mailroom/storage", signingSecret: "bench-secret" },
  provider: { kind: "outbox", dir: ".mailroom/outbox" }
}

const listening = (child: ChildProcess, pattern: RegExp) =>
  new Promise<string>((resolve, reject) => {
    let output = ""
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      const found = pattern.exec(output)?.[1]
      if (found === undefined) return
      child.stdout?.off("data", onData)
      // Whatever it prints next (a line per request) is read and dropped.
      child.stdout?.resume()
      resolve(found)
    }
    child.stdout?.on("data", onData)
    child.once("exit", () => reject(new Error(`the server exited: ${output}`)))
  })

/**
 * SIGTERM, then its exit awaited: a server stopping still logs, and one left behind when the bench
 * exits finds its output closed.
 */
export const stopChild = async (child: ChildProcess): Promise<void> => {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((resolve) => child.once("exit", resolve))
  child.kill()
  await exited
}

const stopping = (child: ChildProcess, dir: string) => async () => {
  await stopChild(child)
  await rm(dir, { recursive: true, force: true })
}

/** The built server on `config`, in a folder of its own (the config's paths are relative to it), once ready. */
export const startServer = async (config: object, env: NodeJS.ProcessEnv = {}): Promise<Running> => {
  const dir = await mkdtemp(join(tmpdir(), "mailroom-bench-"))
  const file = join(dir, "mailroom.config.json")
  await writeFile(file, JSON.stringify(config))
  const child = spawn(process.execPath, [bin], {
    cwd: dir,
    env: { ...process.env, ...env, MAILROOM_CONFIG: file, PORT: "0" },
    stdio: ["ignore", "pipe", "inherit"]
  })
  const url = await listening(child, /listening on (http:\/\/\S+)/)
  // Listening comes before the layers are built: wait until it is ready.
  while ((await fetch(`${url}/readyz`)).status !== 200) await new Promise((resolve) => setTimeout(resolve, 50))
  return { url, child, stop: stopping(child, dir) }
}

/** A script of the bench (`./outbox-floor.ts`) as a server of its own, in a fresh folder; it prints its URL. */
export const startScript = async (script: string, args: ReadonlyArray<string> = []): Promise<Running> => {
  const dir = await mkdtemp(join(tmpdir(), "mailroom-bench-"))
  const child = spawn(process.execPath, [new URL(script, import.meta.url).pathname, ...args], {
    cwd: dir,
    stdio: ["ignore", "pipe", "inherit"]
  })
  const url = await listening(child, /(http:\/\/\S+)/)
  return { url, child, stop: stopping(child, dir) }
}

/** Requests per second of `connections` at once sending `body` to `url` for `seconds`; any answer but 2xx fails it. */
export const load = (
  url: string,
  body: string,
  connections: number,
  seconds: number,
  headers: Record<string, string> = { "content-type": "application/json", "x-api-key": "mr_bench" }
) =>
  new Promise<number>((resolve, reject) =>
    autocannon({ url, method: "POST", headers, body, connections, duration: seconds }, (error, result) => {
      if (error) return reject(error)
      if (result.non2xx > 0 || result.errors > 0) {
        return reject(new Error(`${url}: ${result.non2xx} answers other than 2xx, ${result.errors} errors`))
      }
      resolve(result.requests.total / result.duration)
    })
  )

/** smtp-server as the tests run it, on 127.0.0.1: no STARTTLS, no login, every message read to its end and taken. */
export const startSmtpSink = async (): Promise<{ readonly port: number; readonly close: () => Promise<void> }> => {
  const server = new SMTPServer({
    authOptional: true,
    hideSTARTTLS: true,
    disableReverseLookup: true,
    logger: false,
    onData: (stream, _session, callback) => {
      stream.resume()
      stream.once("end", () => callback())
    }
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
  const address = server.server.address()
  return {
    port: typeof address === "object" && address !== null ? address.port : 0,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}
