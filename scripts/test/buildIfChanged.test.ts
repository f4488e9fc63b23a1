// `npm start`'s build step, scripts/build-if-changed.ts, run on a small workspace of its own: it
// builds once, then starts at once while nothing changed, though a package has no build of its own.
import { execFile } from "node:child_process"
import { copyFile, mkdir, readFile, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { promisify } from "node:util"
import { type TempDir, tempDir } from "@mailroom/test-support"
import { afterAll, assert, beforeAll, describe, it } from "vitest"

const run = promisify(execFile)
const script = new URL("../build-if-changed.ts", import.meta.url).pathname

// The root's build, as `pnpm --filter ./packages/* run build` would: each package with a build
// script gets its dist; every build is counted in builds.log.
const rootBuild = `import { appendFileSync, mkdirSync, readdirSync, readFileSync } from "node:fs"
for (const name of readdirSync("packages")) {
  const manifest = JSON.parse(readFileSync(\`packages/\${name}/package.json\`, "utf8"))
  if (manifest.scripts?.build !== undefined) mkdirSync(\`packages/\${name}/dist\`, { recursive: true })
}
appendFileSync("builds.log", "built\\n")
`

const writePackage = async (root: string, name: string, scripts: Record<string, string>) => {
  await mkdir(join(root, "packages", name, "src"), { recursive: true })
  await writeFile(join(root, "packages", name, "package.json"), JSON.stringify({ name, scripts }))
  await writeFile(join(root, "packages", name, "src", "index.ts"), "export const x = 1\n")
}

describe("scripts/build-if-changed.ts", () => {
  let dir: TempDir
  beforeAll(async () => {
    dir = await tempDir("build-if-changed")
    await mkdir(join(dir.path, "scripts"))
    await copyFile(script, join(dir.path, "scripts", "build-if-changed.ts"))
    await writeFile(join(dir.path, "build.mjs"), rootBuild)
    await writeFile(
      join(dir.path, "package.json"),
      JSON.stringify({ name: "workspace", private: true, type: "module", scripts: { build: "node build.mjs" } })
    )
    await writePackage(dir.path, "app", { build: "tsc" })
    // Like @mailroom/test-support: sources, no build, so never a dist.
    await writePackage(dir.path, "support", {})
  })
  afterAll(async () => {
    await dir?.remove()
  })

  const buildIfChanged = () =>
    run(process.execPath, [join(dir.path, "scripts", "build-if-changed.ts")], { cwd: dir.path })
  const builds = async () => (await readFile(join(dir.path, "builds.log"), "utf8")).trim().split("\n").length

  it("builds once, then not again while nothing changed, though a package has no build script", async () => {
    await buildIfChanged()
    assert.strictEqual(await builds(), 1)
    const second = await buildIfChanged()
    assert.strictEqual(second.stderr.trim(), "packages are up to date; not rebuilding")
    assert.strictEqual(await builds(), 1)
  })

  it("builds again when a source changed", async () => {
    await writeFile(join(dir.path, "packages", "app", "src", "index.ts"), "export const x = 2\n")
    await buildIfChanged()
    assert.strictEqual(await builds(), 2)
  })
})
