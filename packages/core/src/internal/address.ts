// Email address rules: addr-spec only (no display names), ASCII dot-atom local part, a domain that
// may be internationalised, at most 254 characters, never a control character.
import { domainToASCII } from "node:url"

const localPart = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/
const asciiLabel = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/
const control = /\p{Cc}/u

// Every send checks its sender's and recipients' domains, and they repeat from one send to the next;
// the IDNA conversion is the costly part of an address check, so its answers are remembered, boundedly.
const known = new Map<string, string | undefined>()
const maxKnown = 4096

/** The domain in its ASCII (punycode) form, lower-cased; undefined when it is not a valid host name. */
export const asciiDomain = (domain: string): string | undefined => {
  if (known.has(domain)) return known.get(domain)
  const ascii = toAsciiDomain(domain)
  if (known.size >= maxKnown) known.clear()
  known.set(domain, ascii)
  return ascii
}

const toAsciiDomain = (domain: string): string | undefined => {
  if (domain === "" || control.test(domain) || /[\s@/\\[\]]/.test(domain)) return undefined
  const ascii = domainToASCII(domain)
  if (ascii === "" || ascii.length > 253) return undefined
  const labels = ascii.split(".")
  if (labels.length < 2 || !labels.every((label) => asciiLabel.test(label))) return undefined
  // A top-level domain is never all digits: this also refuses bare IPv4 addresses.
  if (/^[0-9]+$/.test(labels[labels.length - 1] ?? "")) return undefined
  return ascii
}

export const isEmailAddress = (value: string): boolean => {
  if (value.length > 254 || control.test(value)) return false
  const at = value.lastIndexOf("@")
  if (at <= 0) return false
  const local = value.slice(0, at)
  return local.length <= 64 && localPart.test(local) && asciiDomain(value.slice(at + 1)) !== undefined
}

/** The ASCII domain of a valid address. */
export const domainOf = (address: string): string => asciiDomain(address.slice(address.lastIndexOf("@") + 1)) ?? ""

/**
 * The form addresses are compared in: the local part as given (RFC 5321 lets a server tell cases
 * apart there), the domain in lower-case ASCII (punycode), so `Bob@Bücher.Example` and
 * `Bob@xn--bcher-kva.example` are one address and `bob@...` another.
 */
export const normalizeAddress = (email: string): string => {
  const at = email.lastIndexOf("@")
  if (at <= 0) return email
  const domain = email.slice(at + 1)
  return `${email.slice(0, at)}@${asciiDomain(domain) ?? domain.toLowerCase()}`
}
