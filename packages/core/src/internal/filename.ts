// File names as they go into storage keys: one path segment, NFC, no control, bidi-override or
// direction-mark characters, no leading dots, at most 200 UTF-8 bytes with the extension kept.
const maxBytes = 200
const maxExtensionBytes = 32
// Made on first use: creating a Segmenter loads ICU's break rules (~20 ms), and only names over the
// limit need one.
let segmenter: Intl.Segmenter | undefined

// Counted, not encoded: TextEncoder would allocate a buffer per call, on every attachment of every send.
// Both count a lone surrogate as U+FFFD's 3 bytes (and none is left once the name is cleaned).
const byteLength = (s: string) => Buffer.byteLength(s, "utf8")

/** Cuts at a grapheme boundary so an emoji or an accented letter is never split. */
const truncate = (s: string, limit: number): string => {
  let out = ""
  segmenter ??= new Intl.Segmenter("en", { granularity: "grapheme" })
  for (const { segment } of segmenter.segment(s)) {
    if (byteLength(out + segment) > limit) break
    out += segment
  }
  return out
}

/**
 * A name every rule below leaves as it is: no character removed or replaced, no separator, no `..`,
 * no dot or space at either end. Under 67 UTF-16 units it is also under 200 UTF-8 bytes.
 */
const untouched = /^(?![.\s])[^\p{Cc}\p{Cs}\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069<>:"|?*/\\]+(?<![.\s])$/u
const untouchedMaxLength = Math.floor(maxBytes / 3)

export const sanitizeFilename = (raw: string): string => {
  // Most names are clean already: one scan answers them, where the passes below cost ten times more
  // (issue 33); whatever the scan lets through, they would have returned unchanged.
  if (raw.length <= untouchedMaxLength && !raw.includes("..") && untouched.test(raw) && raw.normalize("NFC") === raw) {
    return raw
  }
  const cleaned = raw
    .normalize("NFC")
    // control characters, lone surrogates, the bidi overrides that make `gpj.exe` look like `exe.jpg`,
    // and the direction marks (ALM, LRM, RLM) browsers save as `_`: after an extension, `report.pdf_`
    .replace(/[\p{Cc}\p{Cs}\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/gu, "")
    // characters that are not portable in file names on disk stores
    .replace(/[<>:"|?*]/g, "_")
  // One segment: drop path parts that are empty, `.` or `..`, and join the rest.
  const joined = cleaned
    .split(/[/\\]+/)
    .map((part) => part.trim())
    .filter((part) => part !== "" && part !== "." && part !== "..")
    .join("_")
    .replace(/\.{2,}/g, ".")
    .replace(/^[.\s]+/, "")
    .replace(/[.\s]+$/, "")
  const name = joined === "" ? "file" : joined
  if (byteLength(name) <= maxBytes) return name
  const dot = name.lastIndexOf(".")
  const extension = dot > 0 ? name.slice(dot) : ""
  if (extension !== "" && byteLength(extension) <= maxExtensionBytes) {
    return truncate(name.slice(0, dot), maxBytes - byteLength(extension)) + extension
  }
  return truncate(name, maxBytes)
}
