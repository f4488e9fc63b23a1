// Type-checks blocks of TypeScript as a project of a user's would compile them: each block its own ES
// module, strict, Node's types, the ES2023 library, every workspace package read from its sources.
// The README test and the JSDoc test share it.
import { execFile } from "node:child_process"
import { existsSync } from "node:fs"
import { mkdir, readdir, readFile, symlink, writeFile } from "node:fs/promises"
import { dirname, join } from "node:path"
import { promisify } from "node:util"
import { root } from "./imports.ts"

export interface Block {
  /** Where it is written, for messages: a README, a source file. */
  readonly origin: string
  /** The line of `origin` the block's first line of code is on. */
  readonly line: number
  readonly code: string
  /** Declarations and imports it assumes, kept on the block's first line so line numbers hold. */
  readonly given: string
}

/** Where a bare specifier's package is installed: `near` first, then the root, then any package. */
const packageDir = async (name: string, near: string): Promise<string | undefined> => {
  const packages = (await readdir(join(root, "packages"))).map((p) => join(root, "packages", p))
  for (const dir of [near, root, ...packages]) {
    const candidate = join(dir, "node_modules", name)
    if (existsSync(join(candidate, "package.json"))) return candidate
  }
  return undefined
}

const bareName = (specifier: string) =>
  specifier.startsWith("@") ? specifier.split("/").slice(0, 2).join("/") : (specifier.split("/")[0] as string)

/**
 * Compiles `blocks` in `work` (an empty directory) and answers each error as `origin:line: error …`,
 * and the compiler's whole output (empty when every block compiles).
 */
export const compileBlocks = async (
  work: string,
  blocks: ReadonlyArray<Block>
): Promise<{ readonly problems: ReadonlyArray<string>; readonly output: string }> => {
  // A node_modules as a user's install would have it: every workspace package (read from its
  // sources, through the @mailroom/source condition) and each other package a block imports.
  const linked = new Set<string>()
  const link = async (name: string, target: string | undefined) => {
    if (target === undefined || linked.has(name)) return
    linked.add(name)
    await mkdir(dirname(join(work, "node_modules", name)), { recursive: true })
    await symlink(target, join(work, "node_modules", name))
  }
  for (const name of await readdir(join(root, "packages"))) {
    const manifest = JSON.parse(await readFile(join(root, "packages", name, "package.json"), "utf8")) as {
      name: string
    }
    await link(manifest.name, join(root, "packages", name))
  }
  await link("@types/node", await packageDir("@types/node", root))
  const files = await Promise.all(
    blocks.map(async (block, i) => {
      const near = join(root, dirname(block.origin))
      for (const [, specifier] of `${block.given}\n${block.code}`.matchAll(/from\s+"([^".][^"]*)"/g)) {
        const name = bareName(specifier as string)
        if (!name.startsWith("node:")) await link(name, await packageDir(name, near))
      }
      const file = `block${i}.mts`
      // The given declarations sit on the block's first line, so each line of code keeps its number.
      await writeFile(join(work, file), `${block.given.replace(/\n/g, " ")}\n${block.code}\nexport {}\n`)
      return file
    })
  )
  await writeFile(
    join(work, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "ES2023",
        // DOM for the web types the packages' own declarations name (BodyInit, ReadableStream), as
        // Effect asks of its users; ES2023, so a block needing a newer library must say so.
        lib: ["ES2023", "DOM", "DOM.Iterable"],
        module: "NodeNext",
        moduleResolution: "NodeNext",
        customConditions: ["@mailroom/source"],
        types: ["node"],
        strict: true,
        exactOptionalPropertyTypes: true,
        noEmit: true,
        skipLibCheck: true,
        allowImportingTsExtensions: true
      },
      files
    })
  )
  const output = await promisify(execFile)(join(root, "node_modules", ".bin", "tsc"), ["-p", work], {
    cwd: work
  }).then(
    () => "",
    (error: { stdout: string }) => error.stdout
  )
  // Each diagnostic at its origin and line, the block's given line not counted.
  const problems = [...output.matchAll(/^block(\d+)\.mts\((\d+),\d+\): (error .*)$/gm)].map(([, index, line, what]) => {
    const block = blocks[Number(index)] as Block
    return `${block.origin}:${block.line + Number(line) - 2}: ${what}`
  })
  return { problems, output }
}
