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
  const walk = (value: unknown, path: Array<PropertyKey>) => {
    // Bytes an in-process caller attaches are one value, not an object of fields.
    if (typeof value !== "object" || value === null || ArrayBuffer.isView(value)) return
    const where = path.length === 0 ? "request" : formatPath(path)
    if (path.length > maxDepth) {
      problems.push(`${where}: nests deeper than ${maxDepth} levels`)
      return
    }
    if (Array.isArray(value)) {
      if (value.length > maxItems) problems.push(`${where}: must contain at most ${maxItems} items`)
      else
        value.forEach((item, i) => {
          walk(item, [...path, i])
        })
      return
    }
    const keys = Object.keys(value)
    if (keys.length > maxFields) problems.push(`${where}: has ${keys.length} fields, more than any object of the API`)
    else for (const key of keys) walk((value as Record<string, unknown>)[key], [...path, key])
  }
  walk(input, [])
  return problems
}
