// The server loads the adapters its config names and no other: on the embedded defaults no vendor
// SDK, database or Redis client is imported, which is what keeps its start close to a bare Effect
// program's (`pnpm bench` measures that). Every module the process resolves is recorded by a hook;
// the command is a bundle, so a file of it stands for the modules esbuild wrote into it.
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { startServer } from "./support/serverProcess.js"
import { startSesStandIn } from "./support/sesStandIn.js"

const hook = `
import { registerHooks } from "node:module"
import { writeFileSync } from "node:fs"
const seen = new Set()
registerHooks({
  resolve(specifier, context, next) {
    const resolved = next(specifier, context)
    seen.add(resolved.url)
    return resolved
  }
})
process.on("exit", () => {
  // Node's own modules are not resolved through hooks: undici (its fetch) is seen in the load list.
  if (process.moduleLoadList.some((name) => name.includes("undici"))) seen.add("node:internal/undici")
  writeFileSync(process.env.MAILROOM_TEST_LOADED, JSON.stringify([...seen]))
})
`

/** Packages by the path they resolve to: in node_modules, or in this workspace's packages/. */
const heavy: ReadonlyArray<readonly [string, RegExp]> = [
  ["AWS SDK", /\/@aws-sdk\//],
  ["Google Cloud Storage", /\/@google-cloud\//],
  ["google-auth-library", /\/google-auth-library\//],
  ["postmark", /\/node_modules\/postmark\//],
  ["pg", /\/node_modules\/pg\//],
  ["redis", /\/node_modules\/(redis|@redis)\//],
  ["@effect/sql-pg", /\/@effect\/sql-pg\//],
  ["mailparser", /\/mailparser\//],
  // Loaded by the getter of node:http's WebSocket export, which an ESM import of node:http runs.
  ["undici", /^node:internal\/undici$/],
  // A barrel loads every module it re-exports (`effect`'s ~80 more than the server runs): Effect's
  // modules are imported each by its own path (`effect/Effect`, `effect/sql/SqlClient`).
  ...(["", "sql/", "persistence/", "reactivity/"] as const).map(
    (dir) =>
      [
        `the effect${dir === "" ? "" : `/${dir.slice(0, -1)}`} barrel`,
        new RegExp(`/effect/dist/${dir}index\\.js$`)
      ] as const
  ),
  ...(["s3", "gcs", "ses", "postmark", "postgres", "redis"] as const).map(
    (name) => [`@mailroom/${name}`, new RegExp(`/(@mailroom|packages)/${name}/`)] as const
  )
]

const serverDir = new URL("../", import.meta.url)

/**
 * The modules in a file the process loaded: a file of the bundle (dist/bin.js, dist/start/) holds
 * each module under a `// <path>` line, relative to packages/server where the bundle is built.
 */
const modulesIn = async (url: string): Promise<ReadonlyArray<string>> => {
  if (!url.startsWith(new URL("dist/", serverDir).href)) return [url]
  const text = await readFile(new URL(url), "utf8")
  const paths = [...text.matchAll(/^\/\/ (\S+\.(?:[cm]?[jt]s|json))$/gm)].map(
    (match) => new URL(match[1] ?? "", serverDir).href
  )
  return [url, ...paths]
}

describe("what the server loads at start", () => {
  let dir: string
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "mailroom-coldstart-"))
    await writeFile(join(dir, "hook.mjs"), hook)
  })
  afterAll(() => rm(dir, { recursive: true, force: true }))

  const loadedBy = async (name: string, config: Record<string, unknown>, visit?: string) => {
    const path = join(dir, `${name}.json`)
    const loaded = join(dir, `${name}.loaded.json`)
    await writeFile(
      path,
      JSON.stringify({
        serviceDomain: "mailroom.test",
        organizations: [{ id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"], apiKeys: ["mr_test"] }],
        storage: { kind: "local", dir: `${name}-storage`, signingSecret: "cold-start-secret" },
        provider: { kind: "outbox", dir: `${name}-outbox` },
        ...config
      })
    )
    const server = await startServer(path, {
      NODE_OPTIONS: `--import=${join(dir, "hook.mjs")}`,
      MAILROOM_TEST_LOADED: loaded
    })
    assert.strictEqual((await fetch(`${server.url}/openapi.json`)).status, 200)
    if (visit !== undefined) assert.strictEqual((await fetch(`${server.url}${visit}`)).status, 200)
    await server.stop()
    const files = JSON.parse(await readFile(loaded, "utf8")) as ReadonlyArray<string>
    const urls = (await Promise.all(files.map(modulesIn))).flat()
    return Object.assign((pattern: RegExp) => urls.some((url) => pattern.test(url)), {
      files: files.filter((url) => url.startsWith("file:"))
    })
  }

  it("on the embedded defaults: no vendor SDK, database or Redis client", async () => {
    const loaded = await loadedBy("defaults", {})
    assert.isTrue(loaded(/\/(@mailroom|packages)\/local\//), "the hook saw nothing: the test could not fail")
    // The ~330 modules of the start (Effect's, ours) read from a bundle's few files, not one by one.
    assert.isBelow(loaded.files.length, 30, `the start read ${loaded.files.length} files: not the bundle`)
    assert.deepStrictEqual(
      heavy.filter(([, pattern]) => loaded(pattern)).map(([name]) => name),
      []
    )
  })

  // Its pages, assets, inbox API and index: the modules a start that serves no viewer page never runs.
  const viewerModules = /\/internal\/(viewer\/viewer|inbox\/api)\.[jt]s$/

  it("the outbox viewer's modules load with its first page, not at start", async () => {
    assert.isFalse((await loadedBy("viewer-unvisited", {}))(viewerModules), "loaded at start")
    const visited = await loadedBy("viewer-visited", {}, "/_mailroom/outbox/")
    assert.isTrue(visited(viewerModules), "the page was answered without them: the test could not fail")
  })

  it("the command writes Node's compile cache for the next start, in the temporary directory", async () => {
    const temporary = join(dir, "tmp")
    await mkdir(temporary)
    const path = join(dir, "cache.json")
    await writeFile(
      path,
      JSON.stringify({
        serviceDomain: "mailroom.test",
        organizations: [],
        storage: { kind: "local", dir: "cache-storage", signingSecret: "cold-start-secret" },
        provider: { kind: "outbox", dir: "cache-outbox" },
        viewer: { enabled: false }
      })
    )
    const server = await startServer(path, { TMPDIR: temporary })
    await server.stop()
    const cached = await readdir(join(temporary, "node-compile-cache"), { recursive: true })
    assert.isAbove(cached.length, 1, "nothing was written to the compile cache")
  })

  it("with SES named: the SES adapter and its SDK, and still nothing else", async () => {
    // Start-up asks SES once (the provider's verify): a stand-in answers it.
    const ses = await startSesStandIn({ maxSendRate: 1, acceptPerSecond: 1 })
    const loaded = await loadedBy("ses", {
      provider: {
        kind: "ses",
        region: "us-east-1",
        endpoint: ses.url,
        accessKeyId: "AKIDCOLD",
        secretAccessKey: "cold-secret"
      }
    }).finally(() => ses.close())
    assert.isTrue(loaded(/\/(@mailroom|packages)\/ses\//), "the SES adapter was not loaded")
    assert.isTrue(loaded(/\/@aws-sdk\/client-sesv2\//), "the SES SDK was not loaded")
    assert.deepStrictEqual(
      heavy
        .filter(([name, pattern]) => name !== "AWS SDK" && name !== "@mailroom/ses" && loaded(pattern))
        .map(([name]) => name),
      []
    )
  })
})
