// The layers of DESIGN section 1, read from the imports: core without an import cycle at run time and
// without a module that reaches for its adapter toolkit; every adapter on core alone; HTTP on core.
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "vitest"
import { cyclesAmong, importsOf, resolveRelative, root, sourcesUnder } from "../lib/imports.ts"

const adapters = ["ses", "postmark", "resend", "smtp", "s3", "gcs", "local", "redis", "postgres", "sql", "sqlite"]

/** The mailroom packages a file imports (`@mailroom/core/adapter` as `@mailroom/core`). */
const mailroomImports = (file: string) =>
  importsOf(readFileSync(join(root, file), "utf8")).flatMap(({ specifier }) =>
    specifier.startsWith("@mailroom/") ? [specifier.split("/").slice(0, 2).join("/")] : []
  )

/** Where a package's files import a mailroom package other than `allowed`, as "file: package". */
const strayImports = (files: ReadonlyArray<string>, allowed: ReadonlyArray<string>) =>
  files.flatMap((file) => mailroomImports(file).flatMap((name) => (allowed.includes(name) ? [] : [`${file}: ${name}`])))

describe("the layers, read from the imports", () => {
  it("core has no import cycle at run time", () => {
    // Type-only imports are left out: they are gone once compiled, and an internal module naming its
    // public module's types (as effect-smol's internal/effect.ts does Effect.ts's) is no cycle that runs.
    const cycles = cyclesAmong(sourcesUnder("packages/core/src"), (i) => !i.typeOnly)
    assert.deepStrictEqual(
      cycles.map((cycle) => cycle.map((file) => file.replace("packages/core/src/", "")).join(" > ")),
      []
    )
  })

  it("no module of core imports its entry points for adapters and tests (adapter.ts, testing/)", () => {
    const entries = ["packages/core/src/adapter.ts", "packages/core/src/index.ts"]
    const offending = sourcesUnder("packages/core/src")
      .filter((file) => !file.startsWith("packages/core/src/testing/") && !entries.includes(file))
      .flatMap((file) =>
        importsOf(readFileSync(join(root, file), "utf8")).flatMap(({ specifier }) => {
          const target = resolveRelative(file, specifier)
          return target !== undefined && (entries.includes(target) || target.startsWith("packages/core/src/testing/"))
            ? [`${file} imports ${target}`]
            : []
        })
      )
    assert.deepStrictEqual(offending, [])
  })

  it("an adapter's sources import no mailroom package but core", () => {
    const stray = adapters.flatMap((name) => strayImports(sourcesUnder(`packages/${name}/src`), ["@mailroom/core"]))
    assert.deepStrictEqual(stray, [])
  })

  it("an adapter's tests import core and test-support, and SQL's the SQLite driver it runs on", () => {
    const stray = adapters.flatMap((name) =>
      strayImports(sourcesUnder(`packages/${name}/test`), [
        "@mailroom/core",
        "@mailroom/test-support",
        // @mailroom/sql runs its suites on SQLite, its real peer, through the project's driver.
        ...(name === "sql" ? ["@mailroom/sqlite"] : [])
      ])
    )
    assert.deepStrictEqual(stray, [])
  })

  it("an adapter's manifest depends on no mailroom package but core; @mailroom/http on core only", () => {
    const offending = [...adapters, "http"].flatMap((name) => {
      const manifest = JSON.parse(readFileSync(join(root, "packages", name, "package.json"), "utf8")) as Record<
        string,
        Record<string, string> | undefined
      >
      return ["dependencies", "peerDependencies"].flatMap((field) =>
        Object.keys(manifest[field] ?? {})
          .filter((dependency) => dependency.startsWith("@mailroom/") && dependency !== "@mailroom/core")
          .map((dependency) => `${name} ${field}: ${dependency}`)
      )
    })
    assert.deepStrictEqual(offending, [])
    assert.deepStrictEqual(strayImports(sourcesUnder("packages/http/src"), ["@mailroom/core"]), [])
  })
})
