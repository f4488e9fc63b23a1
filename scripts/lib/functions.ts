// The functions of the packages' sources and their lengths in lines, from the compiler's own syntax
// tree (tsgo's API): what the length test checks against the house rule of 80 lines.
import { join, relative } from "node:path"
import type { Node } from "typescript/unstable/ast"
import { SyntaxKind } from "typescript/unstable/ast"
import { API } from "typescript/unstable/sync"
import { root, sourcesUnder } from "./imports.ts"

export interface FunctionSpan {
  readonly file: string
  /** The line the function starts on, 1-based. */
  readonly line: number
  readonly lines: number
  /** Its lines less those of the functions written inside it (callbacks, helpers): what it says itself. */
  readonly ownLines: number
  /** What it is: its name, or the name it is assigned to, or `(anonymous)`. */
  readonly name: string
}

const functionKinds = new Set([
  SyntaxKind.FunctionDeclaration,
  SyntaxKind.FunctionExpression,
  SyntaxKind.ArrowFunction,
  SyntaxKind.MethodDeclaration,
  SyntaxKind.GetAccessor,
  SyntaxKind.SetAccessor,
  SyntaxKind.Constructor
])

/** The name a function goes by: its own, or the variable or property it is the value of. */
const nameOf = (node: Node, parent: Node | undefined): string => {
  const own = (node as { readonly name?: { readonly text?: string } }).name?.text
  if (own !== undefined) return own
  const holder = (parent as { readonly name?: { readonly text?: string } } | undefined)?.name?.text
  return holder ?? "(anonymous)"
}

/** Every function of the sources under `dirs` (each `packages/x/src`), with its length. */
export const functionSpans = (dirs: ReadonlyArray<string>): ReadonlyArray<FunctionSpan> => {
  const api = new API({ cwd: root })
  try {
    const config = join(root, "tsconfig.json")
    const project = api.updateSnapshot({ openProjects: [config] }).getProject(config)
    if (project === undefined) throw new Error(`no project for ${config}`)
    const spans: Array<FunctionSpan> = []
    for (const file of dirs.flatMap((dir) => sourcesUnder(dir))) {
      const source = project.program.getSourceFile(join(root, file))
      if (source === undefined) continue
      const text = source.text
      const lineAt = (position: number) => text.slice(0, position).split("\n").length
      // Answers the lines of the outermost functions within `node`, so that each function can tell
      // its own lines from those of the functions it holds.
      const visit = (node: Node, parent: Node | undefined): number => {
        let inner = 0
        node.forEachChild((child) => {
          inner += visit(child, node)
          return undefined
        })
        if (!functionKinds.has(node.kind)) return inner
        // `pos` includes the leading comments and blank lines: the function starts at its first token.
        const start = node.pos + text.slice(node.pos).search(/\S/)
        const first = lineAt(start)
        const lines = lineAt(node.end) - first + 1
        spans.push({
          file: relative(root, join(root, file)),
          line: first,
          lines,
          ownLines: lines - inner,
          name: nameOf(node, parent)
        })
        return lines
      }
      visit(source as unknown as Node, undefined)
    }
    return spans
  } finally {
    api.close()
  }
}
