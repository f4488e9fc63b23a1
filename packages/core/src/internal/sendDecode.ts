// The common send and presign decoded in one pass, without the schema's parser: every field valid
// and a send's attachments (if any) stored files, which is nearly every call. Wire.decode tries them
// first; tests hold them to the schema's answers (test/sendDecode.test.ts, test/presignDecode.test.ts),
// and the rules themselves are text.ts's, which the schema uses too. Measured by `pnpm bench core`.
import type { PresignRequest, SendEmailRequest } from "../Wire.js"
import { isEmailAddress } from "./address.js"
import { maxItems } from "./bounds.js"
import { atMostCharacters, blank, controlExceptTab, lineBreak, mimeType } from "./text.js"

const sendFields: ReadonlySet<string> = new Set([
  "from",
  "from_name",
  "to",
  "cc",
  "bcc",
  "reply_to",
  "subject",
  "body",
  "attachments"
])

const isPlainObject = (value: unknown): value is Readonly<Record<string, unknown>> => {
  if (typeof value !== "object" || value === null) return false
  const prototype = Object.getPrototypeOf(value)
  return prototype === Object.prototype || prototype === null
}

const hasOnly = (value: object, keys: (key: string) => boolean) =>
  Reflect.ownKeys(value).every((key) => typeof key === "string" && keys(key))

/** What `headerText(maxLength, nonEmpty)` accepts. */
const isHeaderText = (value: unknown, maxLength: number, nonEmpty: boolean): value is string =>
  typeof value === "string" &&
  !lineBreak.test(value) &&
  !controlExceptTab.test(value) &&
  atMostCharacters(value, maxLength) &&
  !(nonEmpty && blank(value))

/** What `recipients(atLeastOne)` accepts, copied. */
const addressList = (value: unknown, atLeastOne: boolean): Array<string> | undefined => {
  if (!Array.isArray(value) || value.length > maxItems || (atLeastOne && value.length === 0)) return undefined
  const out: Array<string> = []
  for (const item of value) {
    if (typeof item !== "string" || !isEmailAddress(item)) return undefined
    out.push(item)
  }
  return out
}

/** What `StorageKey` accepts. */
const isStorageKey = (value: unknown): value is string =>
  typeof value === "string" && value !== "" && atMostCharacters(value, 1024)

/** What `ContentType` accepts. */
const isContentType = (value: unknown): value is string =>
  typeof value === "string" &&
  !lineBreak.test(value) &&
  !controlExceptTab.test(value) &&
  value.length <= 255 &&
  mimeType.test(value)

const attachmentFields = (key: string) => key === "filename" || key === "key" || key === "content_type"

/**
 * A list of stored files, `{ filename, key, content_type? }`, which both send schemas accept, copied;
 * undefined for anything else (bytes given in process included).
 */
const storedAttachments = (value: unknown): Array<Record<string, string>> | undefined => {
  if (!Array.isArray(value) || value.length > maxItems) return undefined
  const out: Array<Record<string, string>> = []
  for (const item of value) {
    if (!isPlainObject(item) || !hasOnly(item, attachmentFields)) return undefined
    const { filename, key } = item
    if (!isHeaderText(filename, 255, true) || !isStorageKey(key)) return undefined
    if (!Object.hasOwn(item, "content_type")) out.push({ filename, key })
    else if (isContentType(item.content_type)) out.push({ filename, key, content_type: item.content_type })
    else return undefined
  }
  return out
}

/**
 * A send with every field valid and its attachments (if any) stored files, which is nearly every
 * send: checked by the schema's own rules (a test holds the two to the same answers) and copied as
 * the schema copies, in one pass instead of the schema's parser. Anything else is undefined: the
 * schema decodes it, and says what is wrong.
 */
export const commonSend = (input: unknown): SendEmailRequest | undefined => {
  if (!isPlainObject(input) || !hasOnly(input, (key) => sendFields.has(key))) return undefined
  const { from, subject, body } = input
  if (typeof from !== "string" || !isEmailAddress(from) || !isHeaderText(subject, 998, true)) return undefined
  if (!isPlainObject(body) || !hasOnly(body, (key) => key === "html" || key === "text")) return undefined
  const hasHtml = Object.hasOwn(body, "html")
  const hasText = Object.hasOwn(body, "text")
  const { html, text } = body
  if ((hasHtml && typeof html !== "string") || (hasText && typeof text !== "string") || !(html || text)) {
    return undefined
  }
  const out: Record<string, unknown> = { from }
  if (Object.hasOwn(input, "from_name")) {
    if (!isHeaderText(input.from_name, 256, false)) return undefined
    out.from_name = input.from_name
  }
  const to = addressList(input.to, true)
  if (to === undefined) return undefined
  out.to = to
  for (const field of ["cc", "bcc", "reply_to"] as const) {
    if (!Object.hasOwn(input, field)) continue
    const list = addressList(input[field], false)
    if (list === undefined) return undefined
    out[field] = list
  }
  out.subject = subject
  out.body = { ...(hasHtml ? { html } : {}), ...(hasText ? { text } : {}) }
  if (Object.hasOwn(input, "attachments")) {
    const attachments = storedAttachments(input.attachments)
    if (attachments === undefined) return undefined
    out.attachments = attachments
  }
  return out as unknown as SendEmailRequest
}

const presignFields: ReadonlySet<string> = new Set(["filename", "content_type", "org_id", "content_length"])

/** What `WholeNumber` accepts. */
const isWholeNumber = (value: unknown): value is number =>
  typeof value === "number" && Number.isSafeInteger(value) && value >= 0

/** A presign with every field valid, copied as the schema copies; undefined for anything else. */
export const commonPresign = (input: unknown): PresignRequest | undefined => {
  if (!isPlainObject(input) || !hasOnly(input, (key) => presignFields.has(key))) return undefined
  const { filename } = input
  if (typeof filename !== "string" || blank(filename) || !atMostCharacters(filename, 1024)) return undefined
  const out: Record<string, unknown> = { filename }
  if (Object.hasOwn(input, "content_type")) {
    if (!isContentType(input.content_type)) return undefined
    out.content_type = input.content_type
  }
  if (Object.hasOwn(input, "org_id")) {
    if (typeof input.org_id !== "string") return undefined
    out.org_id = input.org_id
  }
  if (Object.hasOwn(input, "content_length")) {
    if (!isWholeNumber(input.content_length)) return undefined
    out.content_length = input.content_length
  }
  return out as unknown as PresignRequest
}
