// `POST /emails/batch`: each item decoded and sent (or scheduled) on its own, a few at a time, and
// answered by its index: the accepted in `data`, the refused in `errors`, naming their fields.
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type { Conflict } from "../MailroomError.js"
import { Unavailable, ValidationError } from "../MailroomError.js"
import type { ObjectStoreError } from "../ObjectStore.js"
import type { Principal } from "../Organizations.js"
import { isProviderError, type ProviderError } from "../ProviderError.js"
import type * as Wire from "../Wire.js"
import { maxBatchItems } from "./wireSchedule.js"

type Request = Wire.InProcessSendRequest
type ItemError = ValidationError | ProviderError | Conflict | ObjectStoreError | Unavailable

/** Which keys an item is sent under: the record's (the caller's Idempotency-Key) and the provider's. */
export interface Keys {
  readonly record?: string
  readonly provider?: string
}

const notABatch = new ValidationError({
  errors: [`request: must be an array of 1 to ${maxBatchItems} send requests`]
})

/** The items of a batch, or the one problem with the whole of it. */
export const itemsOf = (input: unknown): Effect.Effect<ReadonlyArray<unknown>, ValidationError> =>
  Array.isArray(input) && input.length >= 1 && input.length <= maxBatchItems
    ? Effect.succeed(input)
    : Effect.fail(notABatch)

/** The field a provider's refusal is about, so an item's error names it as validation errors do. */
const fieldOf: Partial<Record<ProviderError["reason"]["_tag"], string>> = {
  SenderNotVerified: "from",
  RecipientNotVerified: "to",
  RecipientSuppressed: "to",
  MessageTooLarge: "attachments"
}

/** An item's failure as the messages `{index, errors}` carries. */
const messagesOf = (error: ItemError): ReadonlyArray<string> => {
  if (error._tag === "ValidationError") return error.errors
  if (isProviderError(error)) {
    const { reason } = error
    if (reason._tag === "Unavailable") {
      return [
        reason.possiblySent
          ? "request: the email provider did not confirm the message; it may have been sent, so check before sending it again"
          : "request: the email provider is unavailable; nothing was sent"
      ]
    }
    const field = fieldOf[reason._tag] ?? "request"
    // Core's own refusals name their field already (`from: ... is not on a verified domain`).
    return [reason.message.startsWith(`${field}: `) ? reason.message : `${field}: ${reason.message}`]
  }
  if (error._tag === "ObjectStoreError") return [`attachments: ${error.message}`]
  return [`request: ${error.message}`]
}

/** How long to wait before a send refused for now is worth trying again, when that refusal says. */
const notYet = (error: ItemError): Duration.Duration | "not yet" | undefined => {
  if (error._tag === "Unavailable") return error.retryAfter ?? "not yet"
  if (!isProviderError(error)) return undefined
  const { reason } = error
  if (reason._tag === "RateLimited") return reason.retryAfter ?? Duration.seconds(1)
  if (reason._tag === "Unavailable" && !reason.possiblySent) return reason.retryAfter ?? "not yet"
  if (reason._tag === "SendingPaused" && !reason.permanent) return "not yet"
  return undefined
}

/**
 * A batch none of whose items was taken, because the provider (or a store) refused them for now: the
 * whole batch fails as a single send would (503 with Retry-After), so its Idempotency-Key is released
 * and a retry sends it. Kept as an answer, it would be replayed for 24 hours with nothing ever sent.
 * Undefined when an item may have been sent, or none was refused for now.
 */
const unsentForNow = (exits: ReadonlyArray<Exit.Exit<unknown, ItemError>>): Unavailable | undefined => {
  const errors = exits.map((exit) => Exit.findErrorOption(exit))
  const possiblySent = errors.some(
    (e) =>
      e._tag === "None" ||
      (isProviderError(e.value) && e.value.reason._tag === "Unavailable" && e.value.reason.possiblySent)
  )
  if (possiblySent) return undefined
  for (const error of errors) {
    if (error._tag === "None") continue
    const wait = notYet(error.value)
    if (wait === undefined) continue
    return new Unavailable({
      message: `no message of the batch was sent: ${messagesOf(error.value)
        .map((m) => m.replace(/^request: /, ""))
        .join("; ")}`,
      ...(wait === "not yet" ? {} : { retryAfter: wait })
    })
  }
  return undefined
}

export const make = (options: {
  readonly decode: (input: unknown) => Effect.Effect<Request, ValidationError>
  readonly deliver: (
    principal: Principal,
    request: Request,
    keys: Keys
  ) => Effect.Effect<Wire.SendEmailResponse | Wire.ScheduledEmailResponse, ItemError>
  readonly providerKey: (principal: Principal, key: string) => string
  readonly concurrency: number
}) => {
  const { decode, deliver, concurrency } = options

  /**
   * Every item, `concurrency` at a time (each send takes its rate limiter tokens as a single one does).
   * Under an Idempotency-Key each item reaches the provider under a key of its own, derived from it.
   */
  const run = (
    principal: Principal,
    items: ReadonlyArray<unknown>,
    key: string | undefined
  ): Effect.Effect<Wire.SendBatchResponse, Unavailable> =>
    Effect.flatMap(
      Effect.forEach(
        items,
        (item, index) =>
          Effect.exit(
            Effect.flatMap(decode(item), (request) =>
              deliver(
                principal,
                request,
                key === undefined
                  ? {}
                  : // A space is never part of a key (visible ASCII), so no caller's own key makes the same.
                    { record: key, provider: options.providerKey(principal, `${key} ${index}`) }
              )
            )
          ),
        { concurrency }
      ),
      (exits): Effect.Effect<Wire.SendBatchResponse, Unavailable> => {
        const data: Array<Wire.SendBatchResponse["data"][number]> = []
        const errors: Array<Wire.SendBatchResponse["errors"][number]> = []
        exits.forEach((exit, index) => {
          if (Exit.isSuccess(exit)) {
            const response = exit.value
            data.push({
              index,
              message_id: response.message_id,
              ...("status" in response
                ? { status: "scheduled" as const, scheduled_at: response.scheduled_at }
                : { status: "sent" as const }),
              ...(response.suppressed === undefined ? {} : { suppressed: response.suppressed })
            })
            return
          }
          const error = Exit.findErrorOption(exit)
          errors.push({
            index,
            errors:
              error._tag === "Some" ? messagesOf(error.value) : ["request: internal error; nothing is known to be sent"]
          })
        })
        const notNow = data.length === 0 ? unsentForNow(exits) : undefined
        return notNow === undefined ? Effect.succeed({ data, errors }) : Effect.fail(notNow)
      }
    )

  return { run }
}
