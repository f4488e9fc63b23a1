// The attachments of a send: the checks that need no store, the lookups that report every problem at
// once, and the load of a valid message with one store round trip per file, within a memory budget.
import * as Clock from "effect/Clock"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Scope from "effect/Scope"
import * as Semaphore from "effect/Semaphore"
import type { Limits, OutboundAttachment } from "../EmailProvider.js"
import { Unavailable, ValidationError } from "../MailroomError.js"
import type { ObjectInfo, ObjectStore, ObjectStoreError } from "../ObjectStore.js"
import type { Principal } from "../Organizations.js"
import type { InProcessSendRequest } from "../Wire.js"
import * as AttachmentKey from "./attachmentKey.js"
import { sanitizeFilename } from "./filename.js"
import { attachmentExtensions } from "./headers.js"
import { isOwnKey } from "./tenancy.js"

type Request = InProcessSendRequest

export interface Budget {
  /** Bytes sends may hold in memory at once for their attachments, as the provider holds them (`heldFor`). */
  readonly bytes: number
  /** How long a send waits, in all, for room in the budget. */
  readonly wait: Duration.Duration
}

const base64Length = (bytes: number) => 4 * Math.ceil(bytes / 3)

/** What a provider holds per attachment byte unless it says (`Limits.heldPerAttachmentByte`): the byte and its base64. */
export const defaultHeldPerAttachmentByte = 1 + 4 / 3

/**
 * What a file of `bytes` costs a send in memory through a provider with `limits`: what it declares
 * (1 when it streams the file out), else the file's bytes and their base64 in the message or request
 * it builds, about 2.33 times the file.
 */
export const heldFor = (limits: Limits, bytes: number): number =>
  limits.heldPerAttachmentByte === undefined
    ? bytes + base64Length(bytes)
    : Math.ceil(bytes * Math.max(1, limits.heldPerAttachmentByte))
const encoder = new TextEncoder()
/** Counted, not encoded: a body is measured on every send with attachments. */
const utf8Length = (s: string | undefined) => (s === undefined ? 0 : Buffer.byteLength(s, "utf8"))

/** An attachment's bytes as given in process: a string is UTF-8. */
const contentOf = (content: Uint8Array | string): Uint8Array =>
  typeof content === "string" ? encoder.encode(content) : content

/**
 * A multipart type makes a MIME composer (nodemailer's) write the file as a container of parts, which
 * mail clients read as an empty one: the file is lost, and its boundary is the caller's to choose.
 */
const isContainer = (contentType: string) => /^\s*multipart\//i.test(contentType)

/** The type a stored file is sent with when the send names none: never a container (`isContainer`). */
export const storedType = (contentType: string) =>
  contentType === "" || isContainer(contentType) ? "application/octet-stream" : contentType

const notUploaded = (i: number) => `attachments[${i}].key: no file has been uploaded under this key`
const tooLarge = (size: number, max: number) =>
  `attachments: the message is ${size} bytes with attachments base64-encoded; the provider accepts at most ${max}`

/** A stored file whose bytes were not read, because the send will fail anyway. */
class Unread extends Data.TaggedError("Unread")<{ readonly info: ObjectInfo }> {}

export const make = (options: { readonly store: ObjectStore; readonly limits: Limits; readonly budget: Budget }) => {
  const { store, limits, budget } = options
  const inFlight = Semaphore.makeUnsafe(budget.bytes)
  const forbiddenExtensions = new Set(limits.forbiddenExtensions.map((e) => e.toLowerCase()))
  const overBudget = new Unavailable({
    message: "too many large messages are being sent at once; nothing was sent, try again shortly",
    retryAfter: Duration.seconds(5)
  })

  /** The problems found without the store: recipients over the limit, forbidden extensions, other organisations' keys. */
  const staticProblems = (principal: Principal, request: Request) => {
    const errors: Array<string> = []
    const attachments = request.attachments ?? []
    const recipients = request.to.length + (request.cc?.length ?? 0) + (request.bcc?.length ?? 0)
    if (recipients > limits.maxRecipients) {
      errors.push(
        `to: the message has ${recipients} recipients across to, cc and bcc; the provider accepts at most ${limits.maxRecipients}`
      )
    }
    const owned = attachments.map((a) => a.key === undefined || isOwnKey(principal, a.key))
    attachments.forEach((a, i) => {
      // The name as given and as it is sent (cleaned), each read as any mail client or file system may.
      const extension = [
        ...attachmentExtensions(a.filename),
        ...attachmentExtensions(sanitizeFilename(a.filename))
      ].find((e) => forbiddenExtensions.has(e))
      if (extension !== undefined) {
        errors.push(`attachments[${i}].filename: .${extension} files are not accepted by the provider`)
      }
      if (a.content_type !== undefined && isContainer(a.content_type)) {
        errors.push(
          `attachments[${i}].content_type: ${a.content_type} is a container of parts, not a file's type; give the file's own type, or application/octet-stream`
        )
      }
      if (owned[i]) return
      // Under the caller's own prefix, the key's shape is wrong: saying so reveals nothing of another organisation.
      errors.push(
        a.key?.startsWith(AttachmentKey.prefixOf(principal.orgId))
          ? `attachments[${i}].key: is not a key POST /attachments/presign issues (attachments/{organization}/{time}_{id}-{file name})`
          : `attachments[${i}].key: is not an attachment of this organization`
      )
    })
    return { errors, owned }
  }

  /**
   * Every validation problem of a request that fails anyway, in the order they have always been
   * reported: sizes come from `head`, since no byte of this message will be sent (now). Answers what
   * `head` said of each file, for a request without problems (a scheduled one).
   */
  const report = (request: Request, problems: ReturnType<typeof staticProblems>) =>
    Effect.gen(function* () {
      const { errors, owned } = problems
      const attachments = request.attachments ?? []
      // Only the caller's own keys are looked up: another organisation's key reveals nothing.
      const infos = yield* Effect.forEach(
        attachments,
        (a, i): Effect.Effect<ObjectInfo | undefined, ObjectStoreError> =>
          a.content !== undefined
            ? Effect.succeed({ size: contentOf(a.content).byteLength, contentType: "" })
            : owned[i] && a.key !== undefined
              ? store.head(a.key).pipe(Effect.catchTag("ObjectNotFound", () => Effect.succeed(undefined)))
              : Effect.succeed(undefined),
        { concurrency: 8 }
      )
      let size = utf8Length(request.body.html) + utf8Length(request.body.text)
      infos.forEach((info, i) => {
        if (info !== undefined) size += base64Length(info.size)
        else if (owned[i]) errors.push(notUploaded(i))
      })
      if (size > limits.maxMessageBytes) errors.push(tooLarge(size, limits.maxMessageBytes))
      if (errors.length > 0) return yield* new ValidationError({ errors })
      return infos
    })

  /**
   * The attachments of a request that passed `staticProblems`, holding their bytes in the budget
   * until the scope closes. A stored file is read once: its size and type arrive with the GET's
   * headers, and its bytes are read only when the message still fits and the budget has room.
   */
  const load = (request: Request) =>
    Effect.gen(function* () {
      const attachments = request.attachments ?? []
      if (attachments.length === 0) return []
      const scope = yield* Effect.scope
      const deadline = (yield* Clock.currentTimeMillis) + Duration.toMillis(budget.wait)
      let held = 0
      // A send larger than the whole budget waits until it has the budget to itself.
      const hold = (bytes: number): Effect.Effect<void, Unavailable> => {
        const permits = Math.min(bytes, budget.bytes - held)
        if (permits <= 0) return Effect.void
        held += permits
        // Room now (nearly always): taken at once, with no timer raced against the wait.
        return Effect.uninterruptibleMask((restore) =>
          Effect.flatMap(inFlight.takeIfAvailable(permits), (taken) =>
            taken
              ? Scope.addFinalizer(scope, inFlight.release(permits))
              : restore(
                  Effect.flatMap(Clock.currentTimeMillis, (millis) =>
                    inFlight.takeScoped(permits).pipe(
                      Effect.timeoutOrElse({
                        duration: Duration.millis(Math.max(0, deadline - millis)),
                        orElse: () => Effect.fail(overBudget)
                      }),
                      Effect.asVoid,
                      Scope.provide(scope)
                    )
                  )
                )
          )
        )
      }

      const given = attachments.map((a) => (a.content === undefined ? undefined : contentOf(a.content)))
      let size = utf8Length(request.body.html) + utf8Length(request.body.text)
      for (const content of given) if (content !== undefined) size += base64Length(content.byteLength)
      yield* hold(given.reduce((sum, c) => sum + (c === undefined ? 0 : heldFor(limits, c.byteLength)), 0))
      const allowance = limits.maxMessageBytes - size
      // The largest file whose base64 still fits beside the rest of the message.
      const maxBytes = allowance < 0 ? -1 : 3 * Math.floor(allowance / 4)
      let doomed = allowance < 0
      const results = yield* Effect.forEach(
        attachments,
        (a, i) => {
          const content = given[i]
          if (content !== undefined) {
            return Effect.succeed({ info: { size: content.byteLength, contentType: "" }, content })
          }
          return store
            .read(a.key ?? "", {
              maxBytes,
              beforeContent: (info): Effect.Effect<void, Unread | Unavailable> => {
                size += base64Length(info.size)
                if (doomed || size > limits.maxMessageBytes) {
                  doomed = true
                  return Effect.fail(new Unread({ info }))
                }
                return hold(heldFor(limits, info.size))
              }
            })
            .pipe(
              Effect.catchTags({
                ObjectNotFound: () =>
                  Effect.sync(() => {
                    doomed = true
                    return undefined
                  }),
                ObjectTooLarge: (error) =>
                  Effect.sync(() => {
                    size += base64Length(error.info.size)
                    doomed = true
                    return new Unread({ info: error.info })
                  }),
                Unread: Effect.succeed
              })
            )
        },
        // One file is read in this fiber: forking one to read it alone costs more than the read.
        { concurrency: attachments.length === 1 ? 1 : 4 }
      )
      const errors: Array<string> = []
      results.forEach((result, i) => {
        if (result === undefined) errors.push(notUploaded(i))
      })
      if (size > limits.maxMessageBytes) errors.push(tooLarge(size, limits.maxMessageBytes))
      if (errors.length > 0) return yield* new ValidationError({ errors })
      return results.map((result, i): OutboundAttachment => {
        const a = attachments[i]
        // Without errors, every file was read: an unread or missing one always adds one.
        const loaded = result as { readonly info: ObjectInfo; readonly content: Uint8Array }
        return {
          // The rule presign names keys with: one segment, no control or bidi characters, bounded.
          filename: sanitizeFilename(a?.filename ?? ""),
          contentType: a?.content_type ?? storedType(loaded.info.contentType),
          content: loaded.content,
          ...(a?.content_id === undefined ? {} : { contentId: a.content_id })
        }
      })
    })

  return { staticProblems, report, load }
}
