// What the sqlite tests share: a client on a file in a fresh temporary directory, the failure of an
// effect, and a child `node` process running test/fixtures/child.ts against the same file.
import { type ChildProcess, spawn } from "node:child_process"
import { join } from "node:path"
import { scopedTempDir } from "@mailroom/test-support"
import { Effect, Exit, Scope } from "effect"
import { Reactivity } from "effect/reactivity"
import { assert } from "vitest"
import { SqliteClient } from "../src/index.js"

/** A path for a database file in a temporary directory removed with the scope. */
export const tempFile = (name = "test.db") => Effect.map(scopedTempDir("sqlite"), (dir) => join(dir, name))

/** A client of its own (one connection) on `filename`, closed with the scope. */
export const client = (filename: string, options: Partial<SqliteClient.SqliteClientConfig> = {}) =>
  SqliteClient.make({ filename, ...options }).pipe(Effect.provide(Reactivity.layer))

/** The error an effect failed with, or a test failure when it succeeded or died. */
export const failure = <E, R>(effect: Effect.Effect<unknown, E, R>) =>
  Effect.map(Effect.exit(effect), (exit) =>
    Exit.isFailure(exit) && exit.cause.reasons[0]?._tag === "Fail"
      ? (exit.cause.reasons[0].error as E)
      : assert.fail(`expected a failure, got ${String(exit)}`)
  )

/** A second `node` process on the same file: test/fixtures/child.ts, killed with the scope. */
export interface Child {
  /** Resolves with the first line of output that starts with `prefix`. */
  readonly line: (prefix: string) => Effect.Effect<string>
  /** Resolves with the exit code once the process has ended. */
  readonly exited: Effect.Effect<number | null>
  readonly process: ChildProcess
}

export const child = (args: ReadonlyArray<string>, nodeOptions: ReadonlyArray<string> = []) =>
  Effect.gen(function* () {
    const script = new URL("./fixtures/child.ts", import.meta.url).pathname
    const hooks = new URL("./fixtures/sourceImports.ts", import.meta.url).pathname
    const proc = spawn(process.execPath, ["--import", hooks, ...nodeOptions, script, ...args], {
      stdio: ["ignore", "pipe", "pipe"]
    })
    yield* Scope.addFinalizer(
      yield* Effect.scope,
      Effect.sync(() => proc.exitCode === null && proc.kill("SIGKILL"))
    )
    let output = ""
    const waiters: Array<() => void> = []
    const onData = (data: Buffer) => {
      output += data.toString("utf8")
      for (const waiter of waiters.splice(0)) waiter()
    }
    proc.stdout.on("data", onData)
    proc.stderr.on("data", onData)
    const exitedPromise = new Promise<number | null>((resolve) => proc.on("exit", (code) => resolve(code)))
    exitedPromise.then(() => {
      for (const waiter of waiters.splice(0)) waiter()
    })
    const find = (prefix: string) => output.split("\n").find((l) => l.startsWith(prefix))
    const line = (prefix: string): Effect.Effect<string> =>
      Effect.promise(
        () =>
          new Promise<string>((resolve, reject) => {
            const check = () => {
              const found = find(prefix)
              if (found !== undefined) return resolve(found)
              if (proc.exitCode !== null) return reject(new Error(`child exited without "${prefix}":\n${output}`))
              waiters.push(check)
            }
            check()
          })
      )
    return { line, exited: Effect.promise(() => exitedPromise), process: proc } satisfies Child
  })
