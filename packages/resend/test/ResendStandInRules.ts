// What Resend's API answers to a request, for the stand-in: authentication, the checks of `POST /emails`
// in the order Resend documents them, the account's domains and quota, and Idempotency-Key replays.
import type { IncomingHttpHeaders } from "node:http"

export interface Account {
  readonly apiKey: string
  readonly sendingKeys: ReadonlyArray<string>
  readonly domains: ReadonlyArray<string>
  readonly ownerEmail: string
  readonly dailyQuota: number
}

export interface Answer {
  readonly status: number
  readonly body?: unknown
  readonly headers?: Readonly<Record<string, string>>
}

export interface State {
  /** Messages accepted so far (the stand-in's day). */
  readonly accepted: () => number
  /** The first request made with an Idempotency-Key: its body and its answer. */
  readonly remembered: (key: string) => { readonly body: string; readonly answer: Answer } | undefined
  readonly accept: (fields: Record<string, unknown>, key: string | undefined, body: string) => Answer
}

/** "Max 40mb per email": refused only over 40 MiB, the lenient reading, while the adapter declares the strict one. */
export const maxRequestBytes = 40 * 1024 * 1024

/** The file types Resend does not send (its knowledge base, "What attachment types are not supported?"). */
export const forbiddenExtensions = new Set(
  (
    "adp app asp bas bat cer chm cmd com cpl crt csh der exe fxp gadget hlp hta inf ins isp its js jse ksh lib " +
    "lnk mad maf mag mam maq mar mas mat mau mav maw mda mdb mde mdt mdw mdz msc msh msh1 msh2 mshxml msh1xml " +
    "msh2xml msi msp mst ops pcd pif plg prf prg reg scf scr sct shb shs sys ps1 ps1xml ps2 ps2xml psc1 psc2 " +
    "tmp url vb vbe vbs vps vsmacros vss vst vsw vxd ws wsc wsf wsh xnk"
  ).split(" ")
)

const error = (statusCode: number, name: string, message: string): Answer => ({
  status: statusCode,
  body: { statusCode, name, message }
})

const invalid = (message: string) => error(422, "validation_error", message)

// --- addresses ------------------------------------------------------------------------------------

const addrSpec = /^[^\s@<>",;()[\]\\]+@[^\s@<>",;()[\]\\]+\.[^\s@<>",;()[\]\\]+$/u

export interface Mailbox {
  readonly address: string
  /** As written, quotes and escapes removed; encoded-words are left for the recipient's parser. */
  readonly name?: string
}

/** `address`, `Name <address>` or `"Name" <address>` (quoted-pairs read); undefined when it is none. */
export const parseMailbox = (raw: string): Mailbox | undefined => {
  const text = raw.trim()
  const named = /^(.*?)\s*<([^<>]+)>$/su.exec(text)
  if (named === null) return addrSpec.test(text) ? { address: text } : undefined
  const [, phrase = "", address = ""] = named
  if (!addrSpec.test(address)) return undefined
  if (!phrase.startsWith('"'))
    return phrase === "" ? { address } : /["\\]/.test(phrase) ? undefined : { address, name: phrase }
  const quoted = /^"((?:[^"\\]|\\.)*)"$/su.exec(phrase)
  return quoted?.[1] === undefined ? undefined : { address, name: quoted[1].replace(/\\(.)/gsu, "$1") }
}

const domainOf = (address: string) => address.slice(address.lastIndexOf("@") + 1).toLowerCase()

/** A recipient field's addresses (a string or a list of them), or the 422 naming the field. */
const recipients = (field: string, value: unknown): Array<string> | Answer => {
  if (value === undefined) return []
  const list = typeof value === "string" ? [value] : value
  if (!Array.isArray(list) || !list.every((a) => typeof a === "string" && parseMailbox(a) !== undefined)) {
    return invalid(`Invalid \`${field}\` field. The email address needs to follow the \`email@example.com\` format.`)
  }
  return list.map((a) => (parseMailbox(a) as Mailbox).address)
}

const isAnswer = (u: unknown): u is Answer => typeof u === "object" && u !== null && "status" in u

// --- the API ---------------------------------------------------------------------------------------

const bearer = (headers: IncomingHttpHeaders) => /^Bearer +(\S+)$/.exec(headers.authorization ?? "")?.[1]

/** The key's refusal on this route, or undefined for a key that may call it. */
const authenticate = (account: Account, headers: IncomingHttpHeaders, sending: boolean): Answer | undefined => {
  const key = bearer(headers)
  if (key === undefined) return error(401, "missing_api_key", "Missing API key in the authorization header.")
  const sendingOnly = account.sendingKeys.includes(key)
  // "The sending endpoints return this [401] for a key that doesn't exist"; the others answer 400.
  if (key !== account.apiKey && !sendingOnly)
    return error(sending ? 401 : 400, "validation_error", "API key is invalid")
  if (sendingOnly && !sending) {
    return error(401, "restricted_api_key", "This API key is restricted to only send emails.")
  }
  return undefined
}

const tagCharacters = /^[A-Za-z0-9_-]{1,256}$/

/** The checks of the message's own fields, in the order the API reference lists them. */
const checkFields = (fields: Record<string, unknown>): Answer | undefined => {
  for (const field of ["from", "to", "subject"]) {
    if (fields[field] === undefined) return error(422, "missing_required_field", `Missing \`${field}\` field.`)
  }
  if (typeof fields.from !== "string" || parseMailbox(fields.from) === undefined) {
    return invalid(
      "Invalid `from` field. The email address needs to follow the `email@example.com` or `Name <email@example.com>` format"
    )
  }
  if (typeof fields.subject !== "string") return invalid("The `subject` field must be a `string`.")
  for (const field of ["html", "text"]) {
    if (fields[field] !== undefined && typeof fields[field] !== "string") {
      return invalid(`The \`${field}\` field must be a \`string\`.`)
    }
  }
  if (fields.html === undefined && fields.text === undefined && fields.template === undefined) {
    return error(422, "missing_required_field", "Missing `html` or `text` field.")
  }
  const { headers, tags = [] } = fields
  if (headers !== undefined && (typeof headers !== "object" || headers === null || Array.isArray(headers))) {
    return invalid("The `headers` field must be an `object`.")
  }
  if (Object.values(headers ?? {}).some((value) => typeof value !== "string")) {
    return invalid("The `headers` values must be strings.")
  }
  const validTag = (t: unknown) => {
    const { name, value } = (t ?? {}) as Record<string, unknown>
    return (
      typeof name === "string" && typeof value === "string" && tagCharacters.test(name) && tagCharacters.test(value)
    )
  }
  if (!Array.isArray(tags) || !tags.every(validTag)) {
    return invalid("Tags may contain only ASCII letters, numbers, underscores or dashes, at most 256 characters.")
  }
  return checkAttachments(fields.attachments ?? [])
}

const checkAttachments = (attachments: unknown): Answer | undefined => {
  if (!Array.isArray(attachments)) return invalid("The `attachments` field must be an `array`.")
  for (const attachment of attachments as Array<Record<string, unknown>>) {
    const { content, path, filename } = attachment ?? {}
    if (content === undefined && path === undefined) {
      return error(422, "invalid_attachment", "Attachment must have either a `content` or `path`.")
    }
    // Canonical base64 only: what decodes and encodes back to the same text.
    if (typeof content !== "string" || Buffer.from(content, "base64").toString("base64") !== content) {
      return invalid("The attachment `content` must be a base64 string.")
    }
    const name = typeof filename === "string" ? filename : ""
    const extension = name.includes(".") ? name.slice(name.lastIndexOf(".") + 1).toLowerCase() : ""
    if (forbiddenExtensions.has(extension)) {
      return invalid(`Attachments of type .${extension} are not supported.`)
    }
  }
  return undefined
}

/** What Resend answers `request`, given the account and what it has accepted so far. */
export const answerTo = (
  account: Account,
  request: { method: string; path: string; headers: IncomingHttpHeaders; body: string | undefined },
  state: State
): Answer => {
  const path = request.path.split("?")[0]
  if (path === "/domains" && request.method === "GET") {
    const refused = authenticate(account, request.headers, false)
    if (refused !== undefined) return refused
    const data = account.domains.map((name) => ({ object: "domain", id: randomId(name), name, status: "verified" }))
    return { status: 200, body: { object: "list", has_more: false, data } }
  }
  if (path !== "/emails") return error(404, "not_found", "The requested endpoint does not exist.")
  if (request.method !== "POST")
    return error(405, "method_not_allowed", "Method is not allowed for the requested path.")
  const refused = authenticate(account, request.headers, true)
  if (refused !== undefined) return refused
  const key = request.headers["idempotency-key"]
  if (typeof key === "string" && (key.length < 1 || key.length > 256)) {
    return error(400, "invalid_idempotency_key", "The key must be between 1-256 chars.")
  }
  // Over the limit the body is not kept; Resend does not document this answer's body.
  if (request.body === undefined) return { status: 413 }
  let fields: Record<string, unknown>
  try {
    const parsed: unknown = JSON.parse(request.body)
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error("not an object")
    fields = parsed as Record<string, unknown>
  } catch {
    return error(400, "validation_error", "We found an error with one or more fields in the request.")
  }
  const problem = checkFields(fields)
  if (problem !== undefined) return problem
  const lists: Record<string, Array<string>> = {}
  for (const field of ["to", "cc", "bcc", "reply_to"]) {
    const list = recipients(field, fields[field])
    if (isAnswer(list)) return list
    lists[field] = list
  }
  if ((lists.to ?? []).length > 50) return invalid("The `to` field can have at most 50 recipients.")
  return sendAs(account, fields, lists, { key: typeof key === "string" ? key : undefined, body: request.body }, state)
}

/** The account's checks (domain, testing sender, quota) and the Idempotency-Key, then acceptance. */
const sendAs = (
  account: Account,
  fields: Record<string, unknown>,
  lists: Record<string, Array<string>>,
  request: { readonly key: string | undefined; readonly body: string },
  state: State
): Answer => {
  const sender = (parseMailbox(fields.from as string) as Mailbox).address
  const everyone = [...(lists.to ?? []), ...(lists.cc ?? []), ...(lists.bcc ?? [])]
  if (domainOf(sender) === "resend.dev") {
    if (everyone.some((address) => address.toLowerCase() !== account.ownerEmail.toLowerCase())) {
      return error(
        403,
        "validation_error",
        `You can only send testing emails to your own email address (${account.ownerEmail}). To send emails to other recipients, please verify a domain at resend.com/domains, and change the \`from\` address to an email using this domain.`
      )
    }
  } else if (!account.domains.includes(domainOf(sender))) {
    return error(
      403,
      "validation_error",
      `The ${domainOf(sender)} domain is not verified. Please, add and verify your domain.`
    )
  }
  if (request.key !== undefined) {
    const first = state.remembered(request.key)
    if (first !== undefined) {
      return first.body === request.body
        ? first.answer
        : error(409, "invalid_idempotent_request", "Same idempotency key used with a different request payload.")
    }
  }
  if (state.accepted() >= account.dailyQuota) {
    return error(429, "daily_quota_exceeded", "You have reached your daily email sending quota.")
  }
  return state.accept(fields, request.key, request.body)
}

const randomId = (name: string) => `d_${Buffer.from(name).toString("hex").slice(0, 24)}`
