// Builds the `mailroom` command as an ESM bundle (dist/bin.js, chunks in dist/start/): a start reads a
// dozen files, not ~330 modules (issue 33). The library entry points stay tsc's output.
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { readFile, writeFile } from "node:fs/promises"
import { dirname, join, relative } from "node:path"
import * as esbuild from "esbuild"

const root = join(import.meta.dirname, "..")
const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
  readonly dependencies: Record<string, string>
}

/** The directory and name of the package a file belongs to (the nearest package.json with a name). */
const packageOf = (file: string): { readonly dir: string; readonly name: string } => {
  for (let dir = dirname(file); dir !== dirname(dir); dir = dirname(dir)) {
    const path = join(dir, "package.json")
    if (!existsSync(path)) continue
    const name = (JSON.parse(readFileSync(path, "utf8")) as { name?: string }).name
    if (name !== undefined) return { dir, name }
  }
  throw new Error(`${file}: in no package`)
}

// Bundled modules that read `import.meta.url` for nothing a chunk's URL breaks: a require() of Node's
// own modules (@effect/platform-node), a directory the server never asks for (@google-cloud/storage).
const harmlessImportMetaUrl = [
  /@effect\/platform-node\/dist\/internal\/http\.js$/,
  /@google-cloud\/storage\/build\/esm\/src\/util\.js$/
]

/**
 * A bundled module finds files beside itself through `import.meta.url`, which in a chunk is the
 * chunk's URL: in a package the server depends on (@mailroom/postgres's migrations), it is made the
 * module's own URL in its installed package again; anywhere else the build stops.
 */
const importMetaUrl: esbuild.Plugin = {
  name: "import-meta-url",
  setup(build) {
    build.onLoad({ filter: /\.[cm]?js$/ }, async ({ path }) => {
      const contents = await readFile(path, "utf8")
      if (!contents.includes("import.meta.url") || harmlessImportMetaUrl.some((pattern) => pattern.test(path))) {
        return undefined
      }
      const { dir, name } = packageOf(path)
      if (manifest.dependencies[name] === undefined) {
        throw new Error(`${path} reads import.meta.url and ${name} is not a dependency of @mailroom/server`)
      }
      const url = `new URL(${JSON.stringify(relative(dir, path))}, import.meta.resolve(${JSON.stringify(`${name}/package.json`)})).href`
      return { contents: contents.replaceAll("import.meta.url", url), loader: "js" }
    })
  }
}

// Kept external, loaded from node_modules: the server's own dependencies that no start on the
// embedded defaults loads (the viewer's parsers), and pg's optional native binding. Everything else
// is bundled, the adapters' vendor SDKs too, each in the lazy chunk of the adapter that imports it:
// an external import resolves from the server's directory, where a strict install (pnpm) holds only
// the server's own dependencies, and a package importing `effect` must share the bundle's copy.
const external = ["mailparser", "htmlparser2", "pg-native"]

const result = await esbuild.build({
  absWorkingDir: root,
  entryPoints: { bin: "src/bin.ts" },
  outdir: "dist",
  entryNames: "[name]",
  // Each `await import(...)` of the sources (an adapter, the viewer, a telemetry exporter) is a chunk
  // of its own, read only when the config names it.
  chunkNames: "start/[name]-[hash]",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node22.19",
  // The CommonJS packages bundled (nodemailer, the vendor SDKs) call require() for Node's modules,
  // which an ES module has not got.
  banner: {
    js: 'import { createRequire as __mailroomCreateRequire } from "node:module"; const require = __mailroomCreateRequire(import.meta.url);'
  },
  external,
  plugins: [importMetaUrl],
  // Their licences are in one file instead (below).
  legalComments: "none",
  metafile: true,
  logLevel: "warning"
})

/** Each bundled third-party package's name, version, licence and licence text: what its licence asks a copy to carry. */
const notices = (inputs: ReadonlyArray<string>): string => {
  const dirs = new Set(
    inputs.filter((input) => input.includes("node_modules/")).map((input) => packageOf(join(root, input)).dir)
  )
  return [...dirs]
    .map((dir) => {
      const { name, version, license } = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as Record<
        string,
        string
      >
      const file = readdirSync(dir).find((entry) => /^(licen[cs]e|copying|notice)(\.|$)/i.test(entry))
      const text =
        file === undefined ? `(no licence file; package.json says ${license})` : readFileSync(join(dir, file), "utf8")
      return { heading: `${name}@${version} (${license})`, text: text.trim() }
    })
    .sort((a, b) => a.heading.localeCompare(b.heading))
    .map(({ heading, text }) => `${heading}\n${"-".repeat(heading.length)}\n\n${text}\n`)
    .join("\n")
}

await writeFile(
  join(root, "dist/start/THIRD-PARTY-LICENSES.txt"),
  `The mailroom command's bundle (dist/bin.js, dist/start/) contains these packages.\n\n${notices(Object.keys(result.metafile.inputs))}`
)
const bytes = Object.values(result.metafile.outputs).reduce((sum, output) => sum + output.bytes, 0)
console.error(`bundled the mailroom command: ${Object.keys(result.metafile.outputs).length} files, ${bytes} bytes`)
