// What the client costs a browser or edge bundle, and that its runtime code needs neither Node nor
// Effect: the wire types come from @mailroom/core as types only.
import { readdir, readFile } from "node:fs/promises"
import { fileURLToPath } from "node:url"
import { build, type Rolldown } from "vite"
import { assert, describe, it } from "vitest"

const src = fileURLToPath(new URL("../src/", import.meta.url))

describe("the client's runtime code", () => {
  it("imports only its own modules: anything else (effect, @mailroom/core, node:) as types only", async () => {
    const files = (await readdir(src, { recursive: true })).filter((f) => f.endsWith(".ts"))
    assert.includeMembers(files, ["index.ts", "MailroomClient.ts"])
    const outside: Array<string> = []
    for (const file of files) {
      const text = await readFile(`${src}${file}`, "utf8")
      // Every import or re-export statement, with its specifier.
      for (const [statement, specifier] of text.matchAll(/^(?:import|export)\b[^;]*?\bfrom\s+"([^"]+)"/gm)) {
        if (!specifier?.startsWith(".") && !/^(?:import|export) type\b/.test(statement)) {
          outside.push(`${file}: ${statement.split("\n")[0]}`)
        }
      }
      for (const [call] of text.matchAll(/\b(?:import|require)\(\s*["'][^"']+["']\s*\)/g))
        outside.push(`${file}: ${call}`)
    }
    assert.deepStrictEqual(outside, [])
  })

  it("bundles for a browser or edge runtime into one small module", async () => {
    const result = (await build({
      configFile: false,
      logLevel: "silent",
      build: {
        write: false,
        minify: true,
        lib: { entry: `${src}index.ts`, formats: ["es"], fileName: "client" }
      }
    })) as Rolldown.RolldownOutput | ReadonlyArray<Rolldown.RolldownOutput>
    const output = (Array.isArray(result) ? result[0] : result) as Rolldown.RolldownOutput
    const chunks = output.output.filter((o) => o.type === "chunk")
    assert.strictEqual(chunks.length, 1)
    const code = (chunks[0] as Rolldown.OutputChunk).code
    assert.notMatch(code, /\bimport\s*[{("'*]|\brequire\(/, "the bundle still imports a module")
    // 16 kB until the testing calls (mailroom.testing, about 1.5 kB) joined it; 18 kB until redirects,
    // header values and path segments were checked before sending (about 0.4 kB).
    assert.isBelow(new TextEncoder().encode(code).length, 19_000, "the minified client grew past 19 kB")
  })
})
