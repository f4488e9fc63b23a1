// The text rules of the wire schemas as plain predicates, which Wire's schema checks (and the
// requests' other checks) call: one definition of a blank, a line break or a MIME type.

/** Unicode characters, as JSON Schema's minLength and maxLength count them (not UTF-16 units). */
export const atMostCharacters = (s: string, max: number) => {
  if (s.length <= max) return true
  let count = 0
  for (const _ of s) if (++count > max) return false
  return true
}

export const lineBreak = /[\r\n]/
export const controlRange = "\\u0000-\\u0008\\u000A-\\u001F\\u007F-\\u009F"
export const controlExceptTab = new RegExp(`[${controlRange}]`)

export const blank = (s: string) => s.trim() === ""

const mimeToken = "[!#$%&'*+.^_`|~0-9A-Za-z-]+"
export const mimeTypePattern = `^${mimeToken}/${mimeToken}(?:[ \\t]*;[ \\t]*${mimeToken}=(?:${mimeToken}|"[^"\\\\${controlRange}]*"))*$`
export const mimeType = new RegExp(mimeTypePattern)
