// JSON bodies parsed at a bounded cost: nesting is measured on the raw bytes before JSON.parse
// builds anything, so a megabyte of `[[[[...` is refused without a million nested arrays.

/** Deepest nesting any body of the API needs is 4 (`attachments[0].filename`); this leaves room. */
export const maxDepth = 32

const quote = 0x22
const backslash = 0x5c
const openBracket = 0x5b
const openBrace = 0x7b
const closeBracket = 0x5d
const closeBrace = 0x7d

/** Whether arrays and objects nest deeper than `limit` anywhere in `bytes` (strings skipped). */
export const nestsDeeperThan = (bytes: Uint8Array, limit: number): boolean => {
  let depth = 0
  let inString = false
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i]
    if (inString) {
      if (byte === backslash) i++
      else if (byte === quote) inString = false
    } else if (byte === quote) inString = true
    else if (byte === openBracket || byte === openBrace) {
      if (++depth > limit) return true
    } else if (byte === closeBracket || byte === closeBrace) depth--
  }
  return false
}
