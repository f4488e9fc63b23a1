// Builds the packages only when what the build reads has changed since the last successful build,
// so `npm start` starts at once on the second run. A hash of contents, not mtimes: a checkout or a
// copy that touches files without changing them does not force a build, and an edit always does.
import { spawnSync } from "node:child_process"
import { createHash } from "node:crypto"
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { dirname, join, relative } from "node:path"

const root = join(import.meta.dirname, "..")
const stampFile = join(root, "node_modules", ".cache", "mailroom", "build-stamp")

const filesUnder = (dir: string): Array<string> =>
  existsSync(dir)
    ? readdirSync(dir, { withFileTypes: true, recursive: true })
        .filter((entry) => entry.isFile())
        .map((entry) => join(entry.parentPath, entry.name))
    : []

const packages = readdirSync(join(root, "packages")).map((name) => join(root, "packages", name))

/** Everything a package build reads: sources, build scripts, manifests, compiler settings, the installed versions. */
const inputs = [
  join(root, "tsconfig.base.json"),
  join(root, "pnpm-lock.yaml"),
  ...packages.flatMap((dir) => [
    join(dir, "package.json"),
    join(dir, "tsconfig.build.json"),
    ...filesUnder(join(dir, "src")),
    ...filesUnder(join(dir, "scripts"))
  ])
]
  .filter((file) => existsSync(file))
  .sort()

const fingerprint = (): string => {
  const hash = createHash("sha256")
  for (const file of inputs) hash.update(relative(root, file)).update("\0").update(readFileSync(file)).update("\0")
  return hash.digest("hex")
}

/** Whether `pnpm run build` builds the package: one without a build script (test-support) has no dist. */
const hasBuild = (dir: string): boolean => {
  const manifest = join(dir, "package.json")
  if (!existsSync(manifest)) return false
  const { scripts } = JSON.parse(readFileSync(manifest, "utf8")) as { scripts?: Record<string, string> }
  return scripts?.build !== undefined
}

const current = fingerprint()
const built = packages.every((dir) => !hasBuild(dir) || existsSync(join(dir, "dist")))
const previous = existsSync(stampFile) ? readFileSync(stampFile, "utf8") : ""
if (built && previous === current) {
  console.error("packages are up to date; not rebuilding")
} else {
  const result = spawnSync("pnpm", ["--silent", "run", "build"], { cwd: root, stdio: "inherit" })
  if (result.status !== 0) process.exit(result.status ?? 1)
  mkdirSync(dirname(stampFile), { recursive: true })
  writeFileSync(stampFile, current)
}
