// Object keys as paths under the store's directory: the rules that keep every key inside it, even
// when a key comes from a URL an attacker wrote.
import * as path from "node:path"

const maxKeyBytes = 1024
// Most filesystems refuse a longer name for one directory entry.
const maxSegmentBytes = 255

/** Why the key cannot name an object, or undefined when it can. */
export const problemOf = (key: string): string | undefined => {
  if (typeof key !== "string" || key.length === 0) return "the key is empty"
  // A lone surrogate has no UTF-8 form, so it could not round-trip through a URL or a file name.
  if (/\p{Cs}/u.test(key)) return "the key is not well-formed Unicode"
  if (Buffer.byteLength(key, "utf8") > maxKeyBytes) return `the key is longer than ${maxKeyBytes} UTF-8 bytes`
  if (/\p{Cc}/u.test(key)) return "the key contains a control character"
  if (key.includes("\\")) return "the key contains a backslash"
  for (const segment of key.split("/")) {
    if (segment === "") return 'the key has an empty segment (a leading, trailing or doubled "/")'
    if (segment === "." || segment === "..") return `the key has a "${segment}" segment`
    if (Buffer.byteLength(segment, "utf8") > maxSegmentBytes) {
      return `a segment of the key is longer than ${maxSegmentBytes} UTF-8 bytes`
    }
  }
  return undefined
}

/** The file of a valid key under `root` (an absolute, resolved directory), or undefined. */
export const pathOf = (root: string, key: string): string | undefined => {
  if (problemOf(key) !== undefined) return undefined
  const resolved = path.resolve(root, ...key.split("/"))
  // The rules above already keep the key inside; this holds even if one of them were wrong.
  return resolved.startsWith(root + path.sep) ? resolved : undefined
}

/** A key as it may appear in a message: quoted, control characters escaped, bounded. */
export const quote = (key: string): string => JSON.stringify(key.length > 200 ? `${key.slice(0, 200)}…` : key)
