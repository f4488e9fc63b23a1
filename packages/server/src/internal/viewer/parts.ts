// Which body parts a message really has. mailparser fills in a text part converted from the HTML when
// there is none, so the viewer reads the MIME structure itself to say what a recipient would get.
const header = (head: string, name: string) =>
  new RegExp(`^${name}:[ \\t]*(.*)$`, "im").exec(head.replace(/\r?\n[ \t]+/g, " "))?.[1]

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

interface Leaf {
  readonly type: string
  readonly attachment: boolean
}

const leaves = (entity: string, depth: number): ReadonlyArray<Leaf> => {
  const end = /\r?\n\r?\n/.exec(entity)
  const head = end === null ? entity : entity.slice(0, end.index)
  const body = end === null ? "" : entity.slice(end.index + end[0].length)
  const contentType = header(head, "content-type") ?? "text/plain"
  const type = (contentType.split(";")[0] ?? "").trim().toLowerCase()
  const attachment = /^\s*attachment/i.test(header(head, "content-disposition") ?? "")
  const boundary = /boundary\s*=\s*(?:"([^"]+)"|([^\s;]+))/i.exec(contentType)
  if (!type.startsWith("multipart/") || boundary === null || depth > 20) return [{ type, attachment }]
  const delimiter = new RegExp(
    `(?:^|\\r?\\n)--${escapeRegExp(boundary[1] ?? boundary[2] ?? "")}(--)?[ \\t]*(?:\\r?\\n|$)`
  )
  const pieces: Array<string> = []
  let rest = body
  for (let match = delimiter.exec(rest); match !== null; match = delimiter.exec(rest)) {
    pieces.push(rest.slice(0, match.index))
    rest = rest.slice(match.index + match[0].length)
    if (match[1] === "--") break
  }
  // The first piece is the preamble, before the first delimiter.
  return pieces.slice(1).flatMap((piece) => leaves(piece, depth + 1))
}

/** Whether the message has a text/plain and a text/html body part (not attachments). */
export const bodyParts = (raw: Buffer): { readonly text: boolean; readonly html: boolean } => {
  const found = leaves(raw.toString("latin1"), 0).filter((leaf) => !leaf.attachment)
  return { text: found.some((l) => l.type === "text/plain"), html: found.some((l) => l.type === "text/html") }
}
