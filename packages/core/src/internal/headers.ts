// Header values adapters write: the extension a recipient's system sees, RFC 2047 encoded-words
// where a parser would otherwise decode text, and RFC 6266 download names.

// What no reader sees: zero-width and other default-ignorable characters, and bidi controls.
const invisible = /[\p{Default_Ignorable_Code_Point}\u202A-\u202E\u2066-\u2069]/gu

/** The name as a reader takes it in: full-width and other compatibility forms folded, invisible characters gone. */
const shown = (filename: string) => filename.normalize("NFKC").replace(invisible, "")

const extensionOf = (name: string) => {
  // Windows drops trailing dots and spaces.
  const trimmed = name.replace(/[.\s]+$/u, "")
  const dot = trimmed.lastIndexOf(".")
  return dot >= 0 ? trimmed.slice(dot + 1).toLowerCase() : ""
}

/**
 * The extension a recipient's system will see, lower-case and without the dot: `"exe"` for
 * `"Setup.EXE"`, `"setup.exe."`, `"setup.exe "`, `"setup.ｅｘｅ"` (full-width) and `"setup.ex\u200Be"`
 * (a zero-width space). See `attachmentExtensions` for every reading of a name.
 */
export const attachmentExtension = (filename: string): string => extensionOf(shown(filename))

/**
 * Every extension a name can be read with, the one a mail client shows first: besides
 * `attachmentExtension`, the name cut at `:` (`evil.exe:stream` is an NTFS stream of `evil.exe`) and at
 * `;` (`evil.exe;.pdf`, which a parser of unquoted parameters ends at `evil.exe`). What
 * `Limits.forbiddenExtensions` is checked against: a name is refused when any reading is forbidden.
 */
export const attachmentExtensions = (filename: string): ReadonlyArray<string> => {
  const name = shown(filename)
  const upTo = (mark: string) => (name.includes(mark) ? name.slice(0, name.indexOf(mark)) : name)
  const readings = [name, upTo(":"), upTo(";")]
  return [...new Set(readings.map(extensionOf))].filter((extension) => extension !== "")
}

// What MIME parsers (mailparser's libmime among them) decode as an RFC 2047 encoded-word, in a
// header or, as many mail clients do, in a file name parameter.
const encodedWordLike = /=\?[^?]+\?[BbQq]\?[^?]*\?=/

// "=?UTF-8?B?" and "?=" leave 63 of the 75 characters RFC 2047 allows to base64, which holds 45 bytes.
const maxBytesPerWord = 45

/**
 * Header text (a subject, a display name, a file name) that a recipient's parser must read back
 * exactly: unchanged, unless some of it would be decoded as an encoded-word (`=?utf-8?q?x?=` shows
 * as `x`), in which case all of it is written as UTF-8 encoded-words, which decode to the original.
 * Adapters that write text the vendor does not encode itself call this on each such value.
 */
export const headerText = (text: string): string => (encodedWordLike.test(text) ? encodedWords(text) : text)

/** RFC 2047 base64 encoded-words, at most 75 characters each, never splitting a character. */
export const encodedWords = (text: string): string => {
  const words: Array<string> = []
  let word = ""
  let bytes = 0
  for (const character of text) {
    const size = Buffer.byteLength(character, "utf8")
    if (bytes + size > maxBytesPerWord && word !== "") {
      words.push(word)
      word = ""
      bytes = 0
    }
    word += character
    bytes += size
  }
  if (word !== "") words.push(word)
  return words.map((w) => `=?UTF-8?B?${Buffer.from(w, "utf8").toString("base64")}?=`).join(" ")
}

/**
 * A `Content-Disposition` value for a file name (RFC 6266), `attachment` unless `kind` says `inline`:
 * an ASCII fallback in `filename` and the exact name, UTF-8 percent-encoded, in `filename*`.
 */
export const contentDisposition = (filename: string, kind: "attachment" | "inline" = "attachment"): string => {
  // The fallback is what `curl -OJ` and other readers of `filename=` alone save under: `é` decomposes
  // to `e` and a combining mark, which is dropped; each run of what is still not ASCII becomes one `_`.
  const fallback = filename
    .normalize("NFKD")
    .replace(/\p{M}/gu, "")
    .replace(/[^\x20-\x7e]+/gu, "_")
    .replace(/["\\%]/g, "_")
  const exact = encodeURIComponent(filename).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
  return `${kind}; filename="${fallback}"; filename*=UTF-8''${exact}`
}
