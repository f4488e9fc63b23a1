// HTML built with a tagged template that escapes every value it is given, so text from a message
// (a subject, an address, a header) can only ever be text on the viewer's pages.
export class Html {
  constructor(readonly value: string) {}
  toString() {
    return this.value
  }
}

const entities: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }

export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => entities[c] ?? c)

const render = (value: unknown): string => {
  if (value instanceof Html) return value.value
  if (Array.isArray(value)) return value.map(render).join("")
  if (value === undefined || value === null || value === false) return ""
  return escapeHtml(String(value))
}

/** `html\`<p>${text}</p>\``: each value is escaped unless it is itself `Html`; arrays are joined. */
export const html = (strings: TemplateStringsArray, ...values: ReadonlyArray<unknown>): Html =>
  new Html(strings.reduce((out, part, i) => out + render(values[i - 1]) + part))
