// What a store finds on disk when it starts: the unfinished uploads of a process that was killed
// (kill -9, a crash, a power cut) are removed, the objects stay.
import { spawn } from "node:child_process"
import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { ObjectStore } from "@mailroom/core"
import { Effect } from "effect"
import { afterEach, assert, beforeAll, beforeEach, describe, it } from "vitest"
import { DiskObjectStore } from "../src/index.js"

const options = (dir: string) => ({ dir, publicUrl: "http://127.0.0.1:3000", signingSecret: "startup-secret" })
const key = "attachments/org_test/1-kept.txt"

/** The pid of a process that has exited: what a server killed mid-upload leaves in .part names. */
let deadPid: number
beforeAll(async () => {
  const child = spawn(process.execPath, ["-e", ""])
  deadPid = child.pid as number
  await new Promise((resolve) => child.once("exit", resolve))
})

describe("DiskObjectStore at start-up", () => {
  let dir: string
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "mailroom-startup-"))
    // A completed object, then what a process killed mid-upload leaves in the temporary folder.
    const store = await Effect.runPromise(DiskObjectStore.make(options(dir)))
    await Effect.runPromise(store.put(key, new TextEncoder().encode("kept"), "text/plain"))
    await mkdir(path.join(dir, ".tmp"), { recursive: true })
    await writeFile(
      path.join(dir, ".tmp", `${deadPid}.0b7e9a1c-killed-upload.part`),
      '{"contentType":"text/plain"}\nhalf'
    )
  })
  afterEach(() => rm(dir, { recursive: true, force: true }))

  const partFiles = async () => (await readdir(path.join(dir, ".tmp"))).filter((name) => name.endsWith(".part"))
  const readKept = (store: ObjectStore.ObjectStore) =>
    Effect.runPromise(store.get(key)).then((bytes) => new TextDecoder().decode(bytes))

  it("make removes the stale .part files and leaves the objects", async () => {
    assert.deepStrictEqual(await partFiles(), [`${deadPid}.0b7e9a1c-killed-upload.part`])
    const store = await Effect.runPromise(DiskObjectStore.make(options(dir)))
    assert.deepStrictEqual(await partFiles(), [])
    assert.strictEqual(await readKept(store), "kept")
  })

  it("building the layer (as the server does) removes them too", async () => {
    const store = await Effect.runPromise(
      Effect.provide(
        Effect.map(ObjectStore.ObjectStore, (store) => store),
        DiskObjectStore.layer(options(dir))
      )
    )
    assert.deepStrictEqual(await partFiles(), [])
    assert.strictEqual(await readKept(store), "kept")
  })

  it("another live process's upload in progress is kept; an old name or one a day old is removed", async () => {
    const tmp = path.join(dir, ".tmp")
    // This test's own process stands for another server writing to the same directory.
    const live = `${process.pid}.5c1f-in-progress.part`
    const ancient = `${process.pid}.77aa-abandoned.part`
    const unnamed = "0d9f2c4e-written-by-an-earlier-version.part"
    for (const name of [live, ancient, unnamed]) await writeFile(path.join(tmp, name), "x")
    const twoDaysAgo = new Date(Date.now() - 2 * 24 * 60 * 60 * 1000)
    await utimes(path.join(tmp, ancient), twoDaysAgo, twoDaysAgo)
    await Effect.runPromise(DiskObjectStore.make(options(dir)))
    assert.deepStrictEqual(await partFiles(), [live])
  })
})
