// The exported symbols of the packages' public entry points, each with its JSDoc, read through the
// TypeScript compiler's own API (tsgo's, `typescript/unstable/sync`): what the JSDoc test checks.
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { API, SymbolFlags } from "typescript/unstable/sync"
import { root } from "./imports.ts"

export interface ExportedSymbol {
  /** `@mailroom/redis`, `@mailroom/core/adapter`. */
  readonly entry: string
  /** `RedisConnection.layerConfig`: namespaces (`export * as X`) spelt out. */
  readonly name: string
  /** The JSDoc's text and tags (`@deprecated …`), empty when it has none. */
  readonly doc: string
}

interface Manifest {
  readonly name: string
  readonly private?: boolean
  readonly exports?: Record<string, null | string | Record<string, string>>
}

/** Each public package's entry points: `["@mailroom/core/adapter", "packages/core/src/adapter.ts"]`. */
export const entryPoints = (): ReadonlyArray<readonly [string, string]> =>
  readdirSync(join(root, "packages")).flatMap((dir) => {
    const manifest = JSON.parse(readFileSync(join(root, "packages", dir, "package.json"), "utf8")) as Manifest
    if (manifest.private === true) return []
    return Object.entries(manifest.exports ?? {}).flatMap(([subpath, target]) => {
      const source = typeof target === "object" && target !== null ? target["@mailroom/source"] : undefined
      return source === undefined
        ? []
        : [[`${manifest.name}${subpath.slice(1)}`, join("packages", dir, source)] as const]
    })
  })

/** Every symbol the public entry points export, with its documentation. */
export const exportedSymbols = (): ReadonlyArray<ExportedSymbol> => {
  const api = new API({ cwd: root })
  try {
    const config = join(root, "tsconfig.json")
    const project = api.updateSnapshot({ openProjects: [config] }).getProject(config)
    if (project === undefined) throw new Error(`no project for ${config}`)
    const { checker, program } = project
    const found: Array<ExportedSymbol> = []
    const visit = (
      entry: string,
      prefix: string,
      module: ReturnType<typeof checker.getAliasedSymbol>,
      depth: number
    ) => {
      for (const [name, exported] of module.getExports()) {
        if (name === "__esModule" || name === "default") continue
        const target = exported.flags & SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported
        if (target.flags & SymbolFlags.ValueModule && depth < 2) {
          visit(entry, `${prefix}${name}.`, target, depth + 1)
          continue
        }
        const tags = target.getJsDocTags(checker).map((tag) => `@${tag.name}`)
        found.push({
          entry,
          name: `${prefix}${name}`,
          doc: [target.getDocumentationComment(checker), ...tags].join(" ").trim()
        })
      }
    }
    for (const [entry, file] of entryPoints()) {
      const source = program.getSourceFile(join(root, file))
      const module = source === undefined ? undefined : checker.getSymbolAtLocation(source)
      if (module === undefined) throw new Error(`${entry}: ${file} is not in the project`)
      visit(entry, "", module, 0)
    }
    return found
  } finally {
    api.close()
  }
}
