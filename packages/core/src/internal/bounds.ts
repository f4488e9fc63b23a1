// A cheap walk over decoded JSON before the schema sees it: a list or an object far larger than any
// the API accepts is refused with one message, instead of one schema issue per element.
import { formatPath } from "./issues.js"

/** Longest list the API accepts anywhere (recipients, attachments); the schemas say so too. */
export const maxItems = 1000
/** No object of the API has this many fields, and every one refuses unknown fields. */
export const maxFields = 64
const maxDepth = 64

/** Problems with the size of `input`, at most one per oversized list or object; empty when it fits. */
export const oversized = (input: unknown): ReadonlyArray<string> => {
  const problems: Array<string> = []
  // One path, extended and restored as the walk goes; it is formatted only for a problem.
  const path: Array<PropertyKey> = []
  const where = () => (path.length === 0 ? "request" : formatPath(path))
  const walk = (value: unknown) => {
    // Bytes an in-process caller attaches are one value, not an object of fields.
    if (typeof value !== "object" || value === null || ArrayBuffer.isView(value)) return
    if (path.length > maxDepth) {
      problems.push(`${where()}: nests deeper than ${maxDepth} levels`)
      return
    }
    if (Array.isArray(value)) {
      if (value.length > maxItems) problems.push(`${where()}: must contain at most ${maxItems} items`)
      else
        for (let i = 0; i < value.length; i++) {
          path.push(i)
          walk(value[i])
          path.pop()
        }
      return
    }
    const keys = Object.keys(value)
    if (keys.length > maxFields) problems.push(`${where()}: has ${keys.length} fields, more than any object of the API`)
    else
      for (const key of keys) {
        path.push(key)
        walk((value as Record<string, unknown>)[key])
        path.pop()
      }
  }
  walk(input)
  return problems
}
