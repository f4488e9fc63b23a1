// The imports of the packages' TypeScript, read from the text: what the layering test checks (core
// without an import cycle, an adapter importing core alone). Biome formats every import alike.
import { readdirSync, readFileSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"

export const root = resolve(import.meta.dirname, "../..")

export interface Import {
  readonly specifier: string
  /** `import type`, `export type`, or every name imported with `type`: gone at run time. */
  readonly typeOnly: boolean
}

const statement = /^(?:import|export)\s+(type\s+)?([^;'"]*?)\s*from\s+"([^"]+)"/gm
const bare = /^import\s+"([^"]+)"/gm
const dynamic = /\bimport\(\s*"([^"]+)"\s*\)/g

/** Whether every name of `{ type A, type B }` is a type. */
const allTypes = (clause: string): boolean => {
  const names = /\{([^}]*)\}/.exec(clause)?.[1]
  if (names === undefined || clause.replace(/\{[^}]*\}/, "").replace(/[\s,]/g, "") !== "") return false
  const parts = names
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part !== "")
  return parts.length > 0 && parts.every((part) => part.startsWith("type "))
}

/** The text without its comments (which may hold quotes, or the word import). */
const withoutComments = (text: string): string => text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "")

/** The imports and re-exports of a module's text. */
export const importsOf = (source: string): ReadonlyArray<Import> => {
  const text = withoutComments(source)
  return [
    ...[...text.matchAll(statement)].map(([, type, clause, specifier]) => ({
      specifier: specifier as string,
      typeOnly: type !== undefined || allTypes(clause ?? "")
    })),
    ...[...text.matchAll(bare)].map(([, specifier]) => ({ specifier: specifier as string, typeOnly: false })),
    ...[...text.matchAll(dynamic)].map(([, specifier]) => ({ specifier: specifier as string, typeOnly: false }))
  ]
}

/** The `.ts` files under `dir`, recursively, as paths relative to the repository. */
export const sourcesUnder = (dir: string): ReadonlyArray<string> =>
  readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts"))
    .map((entry) => relative(root, join(entry.parentPath, entry.name)))
    .sort()

/** A relative specifier's file (`./x.js` is `./x.ts`), or undefined for a package. */
export const resolveRelative = (from: string, specifier: string): string | undefined =>
  specifier.startsWith(".")
    ? relative(root, resolve(root, dirname(from), specifier.replace(/\.js$/, ".ts")))
    : undefined

/** The modules `files` import, keeping only the imports `follow` keeps and the targets among `files`. */
const graphOf = (files: ReadonlyArray<string>, follow: (i: Import) => boolean) =>
  new Map(
    files.map((file) => [
      file,
      importsOf(readFileSync(join(root, file), "utf8"))
        .filter(follow)
        .flatMap(({ specifier }) => resolveRelative(file, specifier) ?? [])
        .filter((target) => files.includes(target))
    ])
  )

/** The shortest path from `start` back to itself through `edges`, `start` at both ends. */
const shortestCycle = (edges: ReadonlyMap<string, ReadonlyArray<string>>, start: string): ReadonlyArray<string> => {
  const parent = new Map<string, string>()
  const queue = [start]
  while (queue.length > 0) {
    const at = queue.shift() as string
    for (const next of edges.get(at) ?? []) {
      if (next === start) {
        const path = [start]
        for (let step: string | undefined = at; step !== undefined && step !== start; step = parent.get(step)) {
          path.splice(1, 0, step)
        }
        return [...path, start]
      }
      if (next !== start && !parent.has(next)) {
        parent.set(next, at)
        queue.push(next)
      }
    }
  }
  return [start, start]
}

/**
 * The import cycles among `files`, following only the imports `follow` keeps: one shortest cycle
 * (the first file repeated at its end) through each group of modules that import each other.
 */
export const cyclesAmong = (
  files: ReadonlyArray<string>,
  follow: (i: Import) => boolean
): ReadonlyArray<ReadonlyArray<string>> => {
  const edges = graphOf(files, follow)
  // Tarjan's strongly connected components.
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: Array<string> = []
  const groups: Array<ReadonlyArray<string>> = []
  const visit = (file: string) => {
    index.set(file, index.size)
    low.set(file, index.get(file) as number)
    stack.push(file)
    for (const next of edges.get(file) ?? []) {
      if (!index.has(next)) {
        visit(next)
        low.set(file, Math.min(low.get(file) as number, low.get(next) as number))
      } else if (stack.includes(next)) {
        low.set(file, Math.min(low.get(file) as number, index.get(next) as number))
      }
    }
    if (low.get(file) === index.get(file)) {
      const group: Array<string> = []
      for (let member = stack.pop(); member !== undefined; member = stack.pop()) {
        group.push(member)
        if (member === file) break
      }
      if (group.length > 1 || (edges.get(file) ?? []).includes(file)) groups.push(group)
    }
  }
  for (const file of files) if (!index.has(file)) visit(file)
  return groups.map((group) => {
    const start = [...group].sort()[0] as string
    const inGroup = new Map([...edges].map(([file, targets]) => [file, targets.filter((t) => group.includes(t))]))
    return shortestCycle(inGroup, start)
  })
}
