// A real PostgreSQL for tests (Debian's `postgresql`): a fresh cluster in a temporary directory,
// listening on 127.0.0.1 on a free port, stopped and removed afterwards.
import { execFile, execFileSync } from "node:child_process"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { chown, mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { freePort } from "./ports.ts"

const run = promisify(execFile)

export interface Cluster {
  /** `postgres://postgres@127.0.0.1:{port}/postgres`; the superuser, trusted without a password. */
  readonly url: string
  readonly port: number
  /**
   * Runs SQL through `psql`, outside the code under test, and answers its rows, one array of
   * columns each. Values are interpolated by the caller: keep them to test constants.
   */
  readonly psql: (sql: string) => Promise<ReadonlyArray<ReadonlyArray<string>>>
  /** A fast shutdown: connections are dropped and new ones refused, as in an outage. */
  readonly stop: () => Promise<void>
  /** Starts the same cluster again, on the same port, with its data. */
  readonly start: () => Promise<void>
  /** Freezes every process of the cluster (SIGSTOP): connections stay open but nothing answers. */
  readonly pause: () => void
  /** Thaws what `pause` froze. */
  readonly resume: () => void
  /** Stops the cluster for good and removes its directory. */
  readonly destroy: () => Promise<void>
}

/** The server binaries: MAILROOM_POSTGRES_BIN, else the newest Debian install, else PATH. */
const binDir = (): string => {
  const fromEnv = process.env.MAILROOM_POSTGRES_BIN
  if (fromEnv !== undefined && fromEnv !== "") return fromEnv
  const root = "/usr/lib/postgresql"
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(join(root, v, "bin", "initdb")))
        .sort((a, b) => Number(b) - Number(a))
    : []
  if (versions[0] === undefined) {
    throw new Error(
      "PostgreSQL is not installed: apt-get install -y --no-install-recommends postgresql (or set MAILROOM_POSTGRES_BIN)"
    )
  }
  return join(root, versions[0], "bin")
}

// PostgreSQL refuses to run as root; as root, its commands run as the `postgres` user.
const asRoot = process.getuid?.() === 0
const command = (bin: string, args: ReadonlyArray<string>) =>
  asRoot ? (["runuser", ["-u", "postgres", "--", bin, ...args]] as const) : ([bin, [...args]] as const)

/** Starts a new cluster (about a second). Call `destroy` when done; `scoped` does it for you. */
export const startCluster = async (): Promise<Cluster> => {
  const bin = binDir()
  const dir = await mkdtemp(join(tmpdir(), "mailroom-postgres-"))
  const data = join(dir, "data")
  if (asRoot) {
    const uid = Number(execFileSync("id", ["-u", "postgres"]).toString().trim())
    const gid = Number(execFileSync("id", ["-g", "postgres"]).toString().trim())
    await chown(dir, uid, gid)
  }
  const pgCtl = (...args: ReadonlyArray<string>) => {
    const [file, argv] = command(join(bin, "pg_ctl"), ["-D", data, ...args])
    return run(file, argv)
  }
  let port = 0
  let stopped = true
  const startOn = async (p: number) => {
    // The socket directory is the cluster's own, so no two test clusters share /var/run/postgresql.
    const settings = `-c listen_addresses=127.0.0.1 -p ${p} -k ${dir} -c fsync=off -c synchronous_commit=off -c full_page_writes=off`
    await pgCtl("-l", join(dir, "postgres.log"), "-o", settings, "-w", "-t", "30", "start")
    stopped = false
  }
  // Kills the cluster even if the test process exits without cleaning up.
  const onExit = () => {
    if (stopped) return
    try {
      const pid = Number(readFileSync(join(data, "postmaster.pid"), "utf8").split("\n")[0])
      process.kill(pid, "SIGCONT")
      process.kill(pid, "SIGQUIT")
    } catch {}
  }
  process.once("exit", onExit)
  try {
    const [file, argv] = command(join(bin, "initdb"), ["-D", data, "-U", "postgres", "--auth=trust", "--no-sync"])
    await run(file, argv)
    // Another process may take the port between choosing and binding it: choose again.
    for (let attempt = 1; ; attempt++) {
      port = await freePort()
      try {
        await startOn(port)
        break
      } catch (error) {
        if (attempt >= 3) throw error
      }
    }
  } catch (error) {
    process.off("exit", onExit)
    await rm(dir, { recursive: true, force: true })
    throw error
  }

  const processes = (): ReadonlyArray<number> => {
    const postmaster = Number(readFileSync(join(data, "postmaster.pid"), "utf8").split("\n")[0])
    // The backends are the postmaster's children: field 4 of /proc/{pid}/stat, after the name in parentheses.
    const children = readdirSync("/proc")
      .filter((entry) => /^\d+$/.test(entry))
      .filter((pid) => {
        try {
          const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
          return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === postmaster
        } catch {
          return false
        }
      })
      .map(Number)
    return [postmaster, ...children]
  }
  const signal = (name: NodeJS.Signals) => {
    for (const pid of processes()) {
      try {
        process.kill(pid, name)
      } catch {}
    }
  }
  const cluster: Cluster = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    psql: async (sql) => {
      const { stdout } = await run("psql", [
        "-h",
        "127.0.0.1",
        "-p",
        String(port),
        "-U",
        "postgres",
        "-d",
        "postgres",
        "-X",
        "-q",
        "-A",
        "-t",
        "-F",
        "\t",
        "-v",
        "ON_ERROR_STOP=1",
        "-c",
        sql
      ])
      return stdout
        .split("\n")
        .filter((line) => line !== "")
        .map((line) => line.split("\t"))
    },
    stop: async () => {
      if (stopped) return
      signal("SIGCONT")
      await pgCtl("-m", "fast", "-w", "stop")
      stopped = true
    },
    start: () => (stopped ? startOn(port) : Promise.resolve()),
    pause: () => signal("SIGSTOP"),
    resume: () => signal("SIGCONT"),
    destroy: async () => {
      try {
        if (!stopped) {
          signal("SIGCONT")
          await pgCtl("-m", "immediate", "-w", "stop")
          stopped = true
        }
      } finally {
        process.off("exit", onExit)
        await rm(dir, { recursive: true, force: true })
      }
    }
  }
  return cluster
}

/** A cluster for the length of a scope. */
export const scoped: Effect.Effect<Cluster, never, Scope.Scope> = Effect.acquireRelease(
  Effect.promise(() => startCluster()),
  (cluster) => Effect.promise(() => cluster.destroy())
)
