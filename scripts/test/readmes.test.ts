// Every TypeScript block of the root README and of each package's README, type-checked as a project
// of the user's would compile it: each block its own ES module, strict, Node's types, the ES2023 library.
// A block that is not meant to compile says so right above it, `<!-- not compiled: why -->`; one that
// assumes names from around it declares them, unseen by readers, with `<!-- given: declarations -->`.
import { execFile } from "node:child_process"
import { existsSync } from "node:fs"
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { promisify } from "node:util"
import { afterAll, assert, beforeAll, describe, it } from "vitest"

const root = new URL("../..", import.meta.url).pathname.replace(/\/$/, "")
const typescriptLanguages = new Set(["ts", "typescript", "mts"])

interface Block {
  readonly readme: string
  /** The README's line of the block's first line of code. */
  readonly line: number
  readonly code: string
  /** What `<!-- given: ... -->` declares before it. */
  readonly given: string
  /** Why it is not compiled, when `<!-- not compiled: ... -->` says so. */
  readonly skipped: string | undefined
}

/** The fenced blocks of a README in a TypeScript language, each with the comment right above it. */
const blocksOf = (readme: string, text: string): ReadonlyArray<Block> => {
  const blocks: Array<Block> = []
  for (const match of text.matchAll(/^```(\w*)[^\n]*\n([\s\S]*?)^```/gm)) {
    if (!typescriptLanguages.has(match[1] ?? "")) continue
    const before = text.slice(0, match.index).trimEnd()
    const comment = /<!--\s*(not compiled|given):((?:(?!-->)[\s\S])*)-->$/.exec(before)
    blocks.push({
      readme,
      line: text.slice(0, match.index).split("\n").length + 1,
      code: match[2] ?? "",
      given: comment?.[1] === "given" ? (comment[2] ?? "").trim() : "",
      skipped: comment?.[1] === "not compiled" ? (comment[2] ?? "").trim() : undefined
    })
  }
  return blocks
}

/** Where a bare specifier's package is installed: the README's own package first, then the root, then any package. */
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

describe("the README code blocks", () => {
  let work: string
  let blocks: ReadonlyArray<Block>
  beforeAll(async () => {
    const readmes = [
      "README.md",
      ...(await readdir(join(root, "packages")))
        .map((name) => `packages/${name}/README.md`)
        .filter((path) => existsSync(join(root, path)))
    ]
    blocks = (await Promise.all(readmes.map(async (r) => blocksOf(r, await readFile(join(root, r), "utf8"))))).flat()
    work = await mkdtemp(join(tmpdir(), "mailroom-readmes-"))
  })
  afterAll(() => rm(work, { recursive: true, force: true }))

  it("each one that is meant to compile does, in a strict project of its own", async () => {
    const compiled = blocks.filter((b) => b.skipped === undefined)
    assert.isAtLeast(compiled.length, 40, "fewer blocks than the READMEs hold: the parser missed some")
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
      compiled.map(async (block, i) => {
        const near = join(root, dirname(block.readme))
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
    // Each diagnostic at its README and line, the block's given line not counted.
    const problems = [...output.matchAll(/^block(\d+)\.mts\((\d+),\d+\): (error .*)$/gm)].map(
      ([, index, line, what]) => {
        const block = compiled[Number(index)] as Block
        return `${block.readme}:${block.line + Number(line) - 2}: ${what}`
      }
    )
    assert.deepStrictEqual(problems, [], output.slice(0, 4000))
    // Nothing else failed either (a package's own source under these options).
    assert.strictEqual(output.trim(), "")
  }, 120_000)

  it("each one that is not compiled says why", () => {
    for (const block of blocks.filter((b) => b.skipped !== undefined)) {
      assert.isAbove(block.skipped?.length ?? 0, 10, `${block.readme}:${block.line}: say why it is not compiled`)
    }
  })
})
