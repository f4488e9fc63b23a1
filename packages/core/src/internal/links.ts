// The links of a message as its reader meets them: each `<a href>` of the HTML with the text it shows,
// then each http(s) URL of the text part. Hand-written rather than an HTML parser, so that core keeps
// no parser dependency for a test helper: one forward pass with indexOf, linear in the input.

/** A link of a message: its URL, the text a reader sees, and the part it is in. */
export interface Link {
  readonly url: string
  /** What the reader sees: the anchor's text (or its image's alt); the URL itself in the text part. */
  readonly text: string
  readonly source: "html" | "text"
}

const named: Readonly<Record<string, string>> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " " }

/** The character references a URL or a link's text may hold. */
const decode = (text: string): string =>
  text.replace(/&(#x[0-9a-f]{1,6}|#[0-9]{1,7}|[a-z]{2,6});/gi, (whole, entity: string) => {
    if (entity.startsWith("#")) {
      const code =
        entity[1] === "x" || entity[1] === "X" ? Number.parseInt(entity.slice(2), 16) : Number(entity.slice(1))
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole
    }
    return named[entity.toLowerCase()] ?? whole
  })

/** The value of `name` among a tag's attributes, or undefined. */
const attribute = (tag: string, name: string): string | undefined => {
  const match = new RegExp(`\\s${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)'|([^\\s"'>]+))`, "i").exec(tag)
  return match === null ? undefined : decode(match[1] ?? match[2] ?? match[3] ?? "")
}

/** A link's visible text: its markup removed (an image's alt kept), entities decoded, spaces collapsed. */
const visible = (inner: string): string =>
  decode(inner.replace(/<img\b[^>]*>/gi, (img) => ` ${attribute(img, "alt") ?? ""} `).replace(/<[^>]*>/g, ""))
    .replace(/\s+/g, " ")
    .trim()

const htmlLinks = (html: string): Array<Link> => {
  const found: Array<Link> = []
  const lower = html.toLowerCase()
  let at = lower.indexOf("<a")
  while (at !== -1) {
    const close = lower.indexOf(">", at)
    if (close === -1) break
    const next = lower[at + 2]
    // `<a` followed by a space or `>` only: not `<abbr>` or `<area>`.
    if (next === " " || next === "\t" || next === "\n" || next === "\r" || next === ">") {
      const href = attribute(html.slice(at + 2, close), "href")
      const end = lower.indexOf("</a", close)
      const inner = html.slice(close + 1, end === -1 ? html.length : end)
      if (href !== undefined) found.push({ url: href.trim(), text: visible(inner), source: "html" })
      at = lower.indexOf("<a", end === -1 ? html.length : end)
    } else at = lower.indexOf("<a", close)
  }
  return found
}

const textLinks = (text: string): Array<Link> =>
  [...text.matchAll(/\bhttps?:\/\/[^\s<>"'()[\]{}]+/gi)].map((match) => {
    const url = match[0].replace(/[.,;:!?]+$/, "")
    return { url, text: url, source: "text" as const }
  })

/** Every link of the HTML in document order, then every URL of the text part. */
export const linksOf = (html: string | undefined, text: string | undefined): ReadonlyArray<Link> => [
  ...(html === undefined ? [] : htmlLinks(html)),
  ...(text === undefined ? [] : textLinks(text))
]
