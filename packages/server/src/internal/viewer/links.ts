// The links and images of a message's HTML part, each with what is wrong with its URL as a recipient's
// mail client would meet it: nothing here fetches anything, it only reads the syntax.
import { createRequire } from "node:module"
import type * as Htmlparser2 from "htmlparser2"

// Loaded when a message page first asks for it, not when the server starts.
let htmlparser2: typeof Htmlparser2 | undefined
const parserModule = () => {
  htmlparser2 ??= createRequire(import.meta.url)("htmlparser2") as typeof Htmlparser2
  return htmlparser2
}

export interface Reference {
  readonly kind: "link" | "image"
  readonly url: string
  /** Empty when nothing is wrong. */
  readonly problems: ReadonlyArray<string>
}

/** Longest address SMTP carries (RFC 5321's path, less its angle brackets). */
const maxAddressLength = 254
/** Past this a URL is reported, not checked further: every check below stays cheap whatever a message holds. */
const maxUrlLength = 8192
const notInAddress = /[@\s<>(),;:"[\]]/

/**
 * `local@domain` with a dot inside the domain. Written with indexOf, not one regular expression:
 * `a@` and 100,000 dots made the pattern it replaces backtrack for most of a minute.
 */
const isMailbox = (address: string) => {
  if (address.length > maxAddressLength) return false
  const at = address.indexOf("@")
  if (at <= 0) return false
  const local = address.slice(0, at)
  const domain = address.slice(at + 1)
  const dot = domain.indexOf(".", 1)
  return !notInAddress.test(local) && !notInAddress.test(domain) && dot !== -1 && dot < domain.length - 1
}

/** The addresses of a `mailto:` URL, or undefined when its %-escapes are not UTF-8 (`%E0%A4%A`). */
const mailtoAddresses = (pathname: string): ReadonlyArray<string> | undefined => {
  try {
    return decodeURIComponent(pathname)
      .split(",")
      .filter((a) => a !== "")
  } catch {
    return undefined
  }
}

/** Hosts a recipient cannot reach: this machine, a private network, a name without a domain. */
const unreachableHost = (host: string) =>
  host === "localhost" ||
  host.endsWith(".localhost") ||
  host === "[::1]" ||
  /^(127|10)\.\d+\.\d+\.\d+$/.test(host) ||
  /^192\.168\.\d+\.\d+$/.test(host) ||
  /^172\.(1[6-9]|2\d|3[01])\.\d+\.\d+$/.test(host) ||
  (!host.includes(".") && !host.startsWith("["))

const check = (kind: Reference["kind"], value: string): ReadonlyArray<string> => {
  const problems: Array<string> = []
  const url = value.trim()
  if (url !== value) problems.push("has spaces around it")
  if (url === "") return [...problems, "is empty"]
  if (kind === "link" && url.startsWith("#")) return problems
  if (url.length > maxUrlLength) {
    return [
      ...problems,
      `is ${url.length.toLocaleString("en")} characters long: clients and servers cut URLs that long`
    ]
  }
  if (/\s/.test(url)) problems.push("contains spaces: encode them as %20")
  if (!URL.canParse(url)) {
    return [
      ...problems,
      /^[a-z][a-z0-9+.-]*:/i.test(url)
        ? "is not a valid URL"
        : "is relative: a mail client has no page to resolve it against; write the full https:// URL"
    ]
  }
  const parsed = new URL(url)
  switch (parsed.protocol) {
    case "https:":
      break
    case "http:":
      problems.push("is not https: clients may warn, and the reader's network can read or change it")
      break
    case "mailto:": {
      const to = mailtoAddresses(parsed.pathname)
      if (to === undefined) return [...problems, "has a %-escape that is not UTF-8: clients cannot read the address"]
      if (kind === "link" && to.some((address) => !isMailbox(address.trim()))) {
        problems.push("names an address that is not valid")
      }
      return problems
    }
    case "tel:":
      return kind === "link" ? problems : [...problems, `${parsed.protocol} is not an image`]
    case "cid:":
    case "data:":
      if (kind === "image") return problems
      problems.push(`a ${parsed.protocol} link: mail clients block it`)
      return problems
    case "javascript:":
      return [...problems, "a javascript: URL: mail clients remove it, and it never runs"]
    default:
      return [...problems, `a ${parsed.protocol} URL: recipients' mail clients will not open it`]
  }
  if (unreachableHost(parsed.hostname)) problems.push(`points at ${parsed.hostname}, which recipients cannot reach`)
  if (kind === "image") problems.push("a remote image: loaded when the message is opened, and blocked by many clients")
  return problems
}

/** In document order, once per distinct kind and URL; images inlined as `data:` are left out. */
export const references = (html: string): ReadonlyArray<Reference> => {
  const found: Array<Reference> = []
  const seen = new Set<string>()
  const add = (kind: Reference["kind"], url: string) => {
    if (kind === "image" && url.trim().startsWith("data:")) return
    const key = `${kind} ${url}`
    if (seen.has(key)) return
    seen.add(key)
    found.push({ kind, url, problems: check(kind, url) })
  }
  const parser = new (parserModule().Parser)(
    {
      onopentag(name, attributes) {
        if ((name === "a" || name === "area") && attributes.href !== undefined) add("link", attributes.href)
        if (name === "img" && attributes.src !== undefined) add("image", attributes.src)
        // Table and body backgrounds are the other way mail loads an image.
        if (attributes.background !== undefined) add("image", attributes.background)
      }
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true }
  )
  parser.write(html)
  parser.end()
  return found
}
