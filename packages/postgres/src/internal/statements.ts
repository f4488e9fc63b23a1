// Splits a SQL file into its statements: PostgreSQL's extended protocol, which @effect/sql-pg speaks,
// takes one statement per query, while a migration file (as psql reads it) holds many.

/**
 * The statements of `text`, without comments, split at each `;` that is outside a string literal,
 * a quoted identifier or a comment. Dollar-quoted bodies (`$$ ... $$`) are not understood, so the
 * migration files do not use them.
 */
export const statements = (text: string): ReadonlyArray<string> => {
  const out: Array<string> = []
  let current = ""
  let i = 0
  while (i < text.length) {
    const c = text[i] as string
    const next = text[i + 1]
    if (c === "-" && next === "-") {
      const end = text.indexOf("\n", i)
      i = end === -1 ? text.length : end
    } else if (c === "/" && next === "*") {
      const end = text.indexOf("*/", i + 2)
      i = end === -1 ? text.length : end + 2
      current += " "
    } else if (c === "'" || c === '"') {
      // A doubled quote inside is an escaped one, which this loop reads as two adjacent literals.
      const end = text.indexOf(c, i + 1)
      const stop = end === -1 ? text.length : end + 1
      current += text.slice(i, stop)
      i = stop
    } else if (c === ";") {
      if (current.trim() !== "") out.push(current.trim())
      current = ""
      i++
    } else {
      current += c
      i++
    }
  }
  if (current.trim() !== "") out.push(current.trim())
  return out
}
