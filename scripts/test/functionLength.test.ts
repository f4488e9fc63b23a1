// The house rule "no function over 80 lines", read from the compiler's syntax tree: a function's own
// lines, those of the functions it writes inside (the closures of a `make`, a suite's cases) counted
// where they stand, as each is read on its own. The assertion lists every function over it.
import { readdirSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "vitest"
import { functionSpans } from "../lib/functions.ts"
import { root } from "../lib/imports.ts"

const maxLines = 80

describe("function length", () => {
  it(`no function of the packages' sources says more than ${maxLines} lines itself`, () => {
    const dirs = readdirSync(join(root, "packages")).map((name) => `packages/${name}/src`)
    const spans = functionSpans(dirs)
    assert.isAtLeast(spans.length, 1000, "fewer functions than the sources hold: the reader missed some")
    const long = spans
      .filter((span) => span.ownLines > maxLines)
      .map((span) => `${span.file}:${span.line} ${span.name}: ${span.ownLines} lines`)
    assert.deepStrictEqual(long, [])
  }, 120_000)
})
