// A JSON request body carrying files as base64, built as a Blob piece by piece: `fetch` streams a Blob
// out, so a request holds the body's bytes once, never a file's base64 or the whole JSON as one string.
import { randomUUID } from "node:crypto"

/** Where the files go in a JSON body, and the body with them in it. */
export interface JsonFiles {
  /** What to put in the JSON as the base64 string of file `i`: a fresh random id, which no other value holds. */
  readonly placeholder: (i: number) => string
  /**
   * `json` (the body as `JSON.stringify` wrote it, each placeholder once) with every placeholder
   * replaced by its file's base64, as a Blob of the same bytes `JSON.stringify` would have given.
   */
  readonly body: (json: string) => Blob
}

// A multiple of 3, so the pieces' base64 joins into the file's; small enough for V8's young generation.
const pieceBytes = 3 * 16 * 1024

/**
 * The file's base64 as Blobs of one piece each: every string dies as soon as its Blob holds its bytes,
 * young, where a list of the strings would keep them all until the body is built (and old).
 */
const base64Pieces = (file: Uint8Array): Array<Blob> => {
  const pieces: Array<Blob> = []
  for (let offset = 0; offset < file.byteLength; offset += pieceBytes) {
    const length = Math.min(pieceBytes, file.byteLength - offset)
    pieces.push(new Blob([Buffer.from(file.buffer, file.byteOffset + offset, length).toString("base64")]))
  }
  return pieces
}

/**
 * The placeholders and the body builder for `files`. Found quoted: a `"` inside a JSON string is
 * always escaped, so only the value put there (or a key equal to a fresh random id) can match.
 */
export const jsonFiles = (files: ReadonlyArray<Uint8Array>): JsonFiles => {
  const nonce = randomUUID()
  const pattern = new RegExp(`"${nonce}:(\\d+)"`, "g")
  return {
    placeholder: (i) => `${nonce}:${i}`,
    body: (json) => {
      const parts: Array<string | Blob> = []
      const seen = new Set<number>()
      let from = 0
      for (const match of json.matchAll(pattern)) {
        const i = Number(match[1])
        const file = files[i]
        if (file === undefined || seen.has(i)) throw new Error(`jsonFiles: file ${i} is not one placeholder`)
        seen.add(i)
        parts.push(json.slice(from, match.index + 1), ...base64Pieces(file))
        from = match.index + match[0].length - 1
      }
      if (seen.size !== files.length) throw new Error("jsonFiles: the JSON lacks a file's placeholder")
      parts.push(json.slice(from))
      return new Blob(parts)
    }
  }
}
