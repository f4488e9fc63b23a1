// Every TypeScript block of the root README and of each package's README, type-checked as a project
// of the user's would compile it: each block its own ES module, strict, Node's types, the ES2023 library.
// A block that is not meant to compile says so right above it, `<!-- not compiled: why -->`; one that
// assumes names from around it declares them, unseen by readers, with `<!-- given: declarations -->`.
import { existsSync } from "node:fs"
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { compileBlocks } from "../lib/compileBlocks.ts"
import { root } from "../lib/imports.ts"

const typescriptLanguages = new Set(["ts", "typescript", "mts"])

interface Block {
  readonly origin: string
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
      origin: readme,
      line: text.slice(0, match.index).split("\n").length + 1,
      code: match[2] ?? "",
      given: comment?.[1] === "given" ? (comment[2] ?? "").trim() : "",
      skipped: comment?.[1] === "not compiled" ? (comment[2] ?? "").trim() : undefined
    })
  }
  return blocks
}

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
    const { problems, output } = await compileBlocks(work, compiled)
    assert.deepStrictEqual(problems, [], output.slice(0, 4000))
    // Nothing else failed either (a package's own source under these options).
    assert.strictEqual(output.trim(), "")
  }, 120_000)

  it("each one that is not compiled says why", () => {
    for (const block of blocks.filter((b) => b.skipped !== undefined)) {
      assert.isAbove(block.skipped?.length ?? 0, 10, `${block.origin}:${block.line}: say why it is not compiled`)
    }
  })
})
