// What a store finds on disk when it starts: the unfinished uploads of a process that was killed
// (kill -9, a crash, a power cut) are removed, the objects stay.
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { ObjectStore } from "@mailroom/core"
import { Effect } from "effect"
import { afterEach, assert, beforeEach, describe, it } from "vitest"
import { DiskObjectStore } from "../src/index.js"

const options = (dir: string) => ({ dir, publicUrl: "http://127.0.0.1:3000", signingSecret: "startup-secret" })
const key = "attachments/org_test/1-kept.txt"

describe("DiskObjectStore at start-up", () => {
  let dir: string
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "mailroom-startup-"))
    // A completed object, then what a process killed mid-upload leaves in the temporary folder.
    await Effect.runPromise(DiskObjectStore.make(options(dir)).put(key, new TextEncoder().encode("kept"), "text/plain"))
    await mkdir(path.join(dir, ".tmp"), { recursive: true })
    await writeFile(path.join(dir, ".tmp", "0b7e9a1c-killed-upload.part"), '{"contentType":"text/plain"}\nhalf')
  })
  afterEach(() => rm(dir, { recursive: true, force: true }))

  const partFiles = async () => (await readdir(path.join(dir, ".tmp"))).filter((name) => name.endsWith(".part"))
  const readKept = (store: ObjectStore.ObjectStore) =>
    Effect.runPromise(store.get(key)).then((bytes) => new TextDecoder().decode(bytes))

  it("make removes the stale .part files and leaves the objects", async () => {
    assert.deepStrictEqual(await partFiles(), ["0b7e9a1c-killed-upload.part"])
    const store = DiskObjectStore.make(options(dir))
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
})
