// A module that hand-writes what a library does opens with one line naming what it replaces, the
// test that holds them equal and the bench line that justifies it; this keeps those names true.
import { existsSync, readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { assert, describe, it } from "vitest"
import { root, sourcesUnder } from "../lib/imports.ts"

const fence =
  /^\/\/ Fast path: replaces (.+?); held equal by (\S+\.test\.ts) \("([^"]+)"\); justified by `pnpm bench (\w+)`/

// The suites of bench/index.ts: `["name", "title", module]`, the title on its line or the next.
const suites = [...readFileSync(join(root, "bench/index.ts"), "utf8").matchAll(/\[\s*"(\w+)",\s*["']/g)].map(
  ([, s]) => s
)

describe("the fast paths", () => {
  const fenced = ["core", "gcs", "local", "s3", "ses"].flatMap((name) =>
    sourcesUnder(`packages/${name}/src`).filter((file) =>
      readFileSync(join(root, file), "utf8").startsWith("// Fast path")
    )
  )

  it("are the ones that earned their place: the S3 signer and its hash, GCS's signer, the id tag's HMAC, SES's streamed body", () => {
    assert.deepStrictEqual(fenced, [
      "packages/core/src/internal/hmac.ts",
      "packages/gcs/src/internal/signing.ts",
      "packages/s3/src/internal/presigner.ts",
      "packages/s3/src/internal/sha256.ts",
      "packages/ses/src/internal/streamedBody.ts"
    ])
  })

  it("each names the test that holds it equal to the library (with a case it has) and a bench suite", () => {
    for (const file of fenced) {
      const match = fence.exec(readFileSync(join(root, file), "utf8"))
      assert.isNotNull(
        match,
        `${file}: "// Fast path: replaces …; held equal by x.test.ts ("case"); justified by \`pnpm bench y\`"`
      )
      const [, , test, testCase, suite] = match as RegExpExecArray
      const testFile = join(root, dirname(dirname(dirname(file))), "test", test as string)
      assert.isTrue(existsSync(testFile), `${file}: no ${testFile}`)
      assert.include(readFileSync(testFile, "utf8"), testCase as string, `${file}: ${test} has no such case`)
      assert.include(suites, suite, `${file}: no bench suite ${suite}`)
    }
  })
})
