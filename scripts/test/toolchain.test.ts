// scripts/toolchain.sh run twice at once on a machine without the pinned pnpm, as `npm start` and
// `npm run quickstart` do on a fresh clone: both must end with the pinned pnpm, and no two installs
// may ever write into the same directory (the cause of "Text file busy"). npm is a stand-in that
// writes its install slowly, so the two runs overlap every time; the race is the script's, not npm's.
import { execFile } from "node:child_process"
import { chmod, copyFile, mkdir, mkdtemp, readdir, readFile, realpath, rm, symlink, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterAll, assert, beforeAll, describe, it } from "vitest"

const run = promisify(execFile)
const script = new URL("../toolchain.sh", import.meta.url).pathname
const pinned = (
  JSON.parse(await readFile(new URL("../../package.json", import.meta.url), "utf8")) as {
    packageManager: string
  }
).packageManager.split("@")[1] as string

// `npm install --prefix DIR ... NAME@VERSION`: records DIR, then writes NAME's bin over a second.
const fakeNpm = `#!/bin/sh
prefix=""
while [ $# -gt 0 ]; do
  case "$1" in --prefix) prefix="$2"; shift ;; *) spec="$1" ;; esac
  shift
done
echo "$prefix" >> "$MAILROOM_TEST_INSTALLS"
mkdir -p "$prefix/node_modules/.bin"
bin="$prefix/node_modules/.bin/\${spec%@*}"
printf '#!/bin/sh\\n' > "$bin"
sleep 1
printf 'echo %s\\n' "\${spec##*@}" >> "$bin"
chmod +x "$bin"
`

describe("scripts/toolchain.sh", () => {
  let root: string
  let env: NodeJS.ProcessEnv
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "mailroom-toolchain-"))
    await mkdir(join(root, "scripts"))
    await mkdir(join(root, "bin"))
    await copyFile(script, join(root, "scripts", "toolchain.sh"))
    await writeFile(join(root, "package.json"), JSON.stringify({ packageManager: `pnpm@${pinned}` }))
    await writeFile(join(root, "bin", "npm"), fakeNpm)
    await chmod(join(root, "bin", "npm"), 0o755)
    // This Node (24), the stand-in npm and the few system tools the scripts use: no pnpm on the PATH,
    // whatever the machine has installed.
    for (const tool of ["sh", "bash", "dirname", "basename", "mkdir", "rm", "mv", "sleep", "chmod", "cat"]) {
      const found = (await run("sh", ["-c", `command -v ${tool}`])).stdout.trim()
      await symlink(found, join(root, "bin", tool))
    }
    await symlink(await realpath(process.execPath), join(root, "bin", "node"))
    env = {
      PATH: join(root, "bin"),
      HOME: root,
      MAILROOM_TEST_INSTALLS: join(root, "installs.log")
    }
  })
  afterAll(() => rm(root, { recursive: true, force: true }))

  it("run twice at once, both end with the pinned pnpm and no directory is written by two installs", async () => {
    const once = () =>
      run("bash", ["-c", ". scripts/toolchain.sh && pnpm --version"], { cwd: root, env }).then((r) => r.stdout.trim())
    const versions = await Promise.all([once(), once()])
    assert.deepStrictEqual(versions, [pinned, pinned])
    const installs = (await readFile(join(root, "installs.log"), "utf8")).trim().split("\n")
    assert.strictEqual(installs.length, 2, "both runs found no pnpm, so both installed")
    assert.strictEqual(new Set(installs).size, 2, `two installs wrote into one directory: ${installs.join(", ")}`)
    // One install holds the name; nothing half-done or set aside is left beside it.
    assert.deepStrictEqual(await readdir(join(root, ".toolchain")), ["pnpm"])
    assert.deepStrictEqual(await readdir(join(root, ".toolchain", "pnpm")), ["node_modules"])
    // And the next run finds it, installing nothing.
    assert.strictEqual(await once(), pinned)
    assert.strictEqual((await readFile(join(root, "installs.log"), "utf8")).trim().split("\n").length, 2)
  })
})
