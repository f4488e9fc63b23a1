// The outbox's custom headers and tags: the header fields it writes for them, and what of them it
// refuses, as the strictest of the vendors would, rather than write a message SES or Postmark would not.
import type { EmailProvider } from "@mailroom/core"
import * as Adapter from "@mailroom/core/adapter"

/** Each tag is written as `X-Mailroom-Tag-{name}: {value}`, the name in the case it was given. */
export const tagHeaderPrefix = "X-Mailroom-Tag-"

/** What SES sets itself and refuses as a custom header; the outbox refuses them too. */
export const forbiddenHeaders = Adapter.structuralHeaders

// RFC 5322: a field name is printable ASCII without ":"; no line may pass 998 characters, so a run
// without whitespace (where no fold can go) must fit one line beside the fold's leading space.
const fieldName = /^[\x21-\x39\x3b-\x7e]+$/
const maxRun = 997

/**
 * The header fields for the message's custom headers (in order, as given) and its tags. The
 * composer folds each at whitespace and encodes non-ASCII text as RFC 2047 encoded-words; ASCII that
 * would read as an encoded-word is encoded first, so a reader sees the value as sent.
 */
export const fieldsOf = (email: EmailProvider.OutboundEmail): Array<{ key: string; value: string }> => [
  ...(email.headers ?? []).map((header) => ({ key: header.name, value: Adapter.headerText(header.value) })),
  ...(email.tags ?? []).map((tag) => ({ key: `${tagHeaderPrefix}${tag.name}`, value: tag.value }))
]

/**
 * The composer writes every header name in its own case (`X-Myapp-Id` for `X-MyApp-ID`); this puts
 * back the case `fields` were given in (custom headers, tags, metadata), so names read as sent.
 */
export const keepCase = (fields: ReadonlyArray<{ readonly key: string }>): ((key: string) => string) => {
  const given = new Map(fields.map(({ key }) => [key.toLowerCase(), key]))
  return (key) => given.get(key.toLowerCase()) ?? key
}

/** What of the message's headers and tags the outbox would not write as sent, or undefined. */
export const refusal = (email: EmailProvider.OutboundEmail, limits: EmailProvider.Limits): string | undefined => {
  const headers = email.headers ?? []
  const tags = email.tags ?? []
  if (limits.maxCustomHeaders !== undefined && headers.length > limits.maxCustomHeaders) {
    return `headers: at most ${limits.maxCustomHeaders} custom headers; the message has ${headers.length}`
  }
  const forbidden = new Set((limits.forbiddenHeaders ?? []).map((name) => name.toLowerCase()))
  for (const { name, value } of headers) {
    if (forbidden.has(name.toLowerCase()))
      return `headers: ${name} is set by the provider and refused as a custom header`
    if (!fieldName.test(name)) return `headers: ${JSON.stringify(name)} is not a header name`
    if (name.toLowerCase().startsWith("x-mailroom-"))
      return `headers: ${name}: X-Mailroom- headers are the outbox's own`
    // The composer leaves out a header whose value is blank: refused rather than lost.
    if (value.trim() === "") return `headers: ${name} has no value`
    if (`${name}: ${value}`.split(/[ \t]+/).some((run) => run.length > maxRun)) {
      return `headers: ${name} holds a run of over ${maxRun} characters without a space, longer than a line may be`
    }
  }
  if (limits.maxTags !== undefined && tags.length > limits.maxTags) {
    return `tags: at most ${limits.maxTags} tags; the message has ${tags.length}`
  }
  const names = new Set<string>()
  for (const { name } of tags) {
    // Header names are compared without case: two such tags would be one header to a reader.
    if (names.has(name.toLowerCase())) return `tags: ${name} is given twice (names are compared without case)`
    names.add(name.toLowerCase())
  }
  return undefined
}
