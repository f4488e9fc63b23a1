// What a send writes to the message log: the recipients left once suppressed ones are dropped, the
// record accepted before the provider is called, and the outcome the provider's answer makes of it.
import * as Exit from "effect/Exit"
import type { OutboundAttachment, SendResult } from "../EmailProvider.js"
import type { NewMessage, Outcome } from "../MessageLog.js"
import type { ObjectInfo } from "../ObjectStore.js"
import type { ProviderError } from "../ProviderError.js"
import type { InProcessSendRequest } from "../Wire.js"
import { normalizeAddress } from "./address.js"
import { sanitizeFilename } from "./filename.js"
import { storedType } from "./sendAttachments.js"

type Request = InProcessSendRequest

export interface Addressed {
  readonly to: ReadonlyArray<string>
  readonly cc: ReadonlyArray<string>
  readonly bcc: ReadonlyArray<string>
  /** The recipients dropped, as the request gave them, each once. */
  readonly suppressed: ReadonlyArray<string>
}

/** The request's recipients without the suppressed ones (`suppressed` holds normalised addresses). */
export const withoutSuppressed = (request: Request, suppressed: ReadonlySet<string>): Addressed => {
  const dropped = new Set<string>()
  const keep = (list: ReadonlyArray<string> | undefined) =>
    (list ?? []).filter((address) => {
      if (!suppressed.has(normalizeAddress(address))) return true
      dropped.add(address)
      return false
    })
  return { to: keep(request.to), cc: keep(request.cc), bcc: keep(request.bcc), suppressed: [...dropped] }
}

const none: ReadonlyArray<string> = Object.freeze([])

/** Every recipient of the request: what `withoutSuppressed` answers when none is suppressed, without its copies. */
export const allAddressed = (request: Request): Addressed => ({
  to: request.to,
  cc: request.cc ?? none,
  bcc: request.bcc ?? none,
  suppressed: none
})

/** An attachment as its record keeps it: what was sent, or (scheduled) what `head` found. */
export interface AttachmentFacts {
  readonly filename: string
  readonly contentType: string
  readonly size: number
  readonly contentId?: string
}

/** The facts of an attachment that was loaded to be sent. */
export const loadedAttachment = (a: OutboundAttachment): AttachmentFacts => ({
  filename: a.filename,
  contentType: a.contentType,
  size: a.content.byteLength,
  ...(a.contentId === undefined ? {} : { contentId: a.contentId })
})

/** The facts of a stored file of a scheduled message, as `head` found it; it is read when the message leaves. */
export const storedAttachment = (
  a: Request["attachments"] extends ReadonlyArray<infer A> | undefined ? A : never,
  info: ObjectInfo | undefined
): AttachmentFacts => ({
  filename: sanitizeFilename(a.filename),
  contentType: a.content_type ?? storedType(info?.contentType ?? ""),
  size: info?.size ?? 0,
  ...(a.content_id === undefined ? {} : { contentId: a.content_id })
})

const kinds = ["to", "cc", "bcc"] as const

const utf8Length = (s: string | undefined) => (s === undefined ? 0 : Buffer.byteLength(s, "utf8"))

/** The record of a message about to be sent: every recipient of the request, suppressed ones as such. */
export const newMessage = (options: {
  readonly id: string
  readonly organizationId: string
  readonly createdAt: string
  readonly request: Request
  readonly addressed: Addressed
  readonly attachments: ReadonlyArray<AttachmentFacts>
  readonly idempotencyKey: string | undefined
  readonly scheduledAt?: string
  readonly stored?: string
}): NewMessage => {
  const { request, addressed } = options
  const state = options.scheduledAt === undefined ? ("sending" as const) : ("scheduled" as const)
  const dropped = addressed.suppressed.length === 0 ? undefined : new Set(addressed.suppressed)
  const recipients: Array<NewMessage["recipients"][number]> = []
  for (const kind of kinds) {
    for (const email of request[kind] ?? none) {
      recipients.push({ email, kind, state: dropped?.has(email) === true ? "suppressed" : state })
    }
  }
  return {
    id: options.id,
    organizationId: options.organizationId,
    createdAt: options.createdAt,
    from: request.from,
    ...(request.from_name === undefined ? {} : { fromName: request.from_name }),
    subject: request.subject,
    recipients,
    tags: request.tags ?? [],
    attachments: options.attachments.map((a, i) => {
      const key = request.attachments?.[i]?.key
      return {
        filename: a.filename,
        content_type: a.contentType,
        size: a.size,
        ...(key === undefined ? {} : { key }),
        ...(a.contentId === undefined ? {} : { content_id: a.contentId })
      }
    }),
    htmlBytes: utf8Length(request.body.html),
    textBytes: utf8Length(request.body.text),
    ...(options.idempotencyKey === undefined ? {} : { idempotencyKey: options.idempotencyKey }),
    ...(options.scheduledAt === undefined ? {} : { scheduledAt: options.scheduledAt }),
    ...(options.stored === undefined ? {} : { request: options.stored })
  }
}

/** The reason a failure is recorded with: the provider's message, then what the other providers of a failover answered. */
const reasonText = (error: ProviderError): string =>
  error.failover === undefined || error.failover.length === 0
    ? error.reason.message
    : `${error.reason.message} (before it: ${error.failover.map((e) => `${e.provider}: ${e.reason.message}`).join("; ")})`

/**
 * What the provider's answer makes of the record. Only a failure that certainly sent nothing is
 * `Failed`; a possible send, an interruption or a defect while the provider was answering is `Unknown`.
 * The provider recorded is the one that answered: a failover's result and errors name it.
 */
export const outcomeOf = (
  provider: string,
  exit: Exit.Exit<SendResult, ProviderError>,
  progress?: { readonly called: boolean }
): Outcome => {
  if (Exit.isSuccess(exit)) {
    return { _tag: "Sent", provider: exit.value.provider ?? provider, providerMessageId: exit.value.messageId }
  }
  const error = Exit.findErrorOption(exit)
  if (error._tag === "None") {
    // Cut short (a shutdown's grace is over): nothing went out unless the provider had been called.
    return progress?.called === false
      ? { _tag: "Failed", provider, reason: "the send was stopped before the message reached the provider" }
      : { _tag: "Unknown", provider, reason: "the send was interrupted while the provider was answering" }
  }
  const { reason } = error.value
  return reason._tag === "Unavailable" && reason.possiblySent
    ? { _tag: "Unknown", provider: error.value.provider, reason: reasonText(error.value) }
    : { _tag: "Failed", provider: error.value.provider, reason: reasonText(error.value) }
}
