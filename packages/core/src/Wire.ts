// The JSON bodies of the API (SPEC section 2, DESIGN section 3) as Schemas, and their decoding into
// one validation message per problem. The HTTP package and the OpenAPI document use these same schemas.
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { maxIdHex } from "./internal/attachmentKey.js"
import { maxItems, oversized } from "./internal/bounds.js"
import { issueMessages } from "./internal/issues.js"
import { contentIdPattern } from "./internal/sendExtras.js"
import { atMostCharacters, blank, controlExceptTab, lineBreak, mimeType, mimeTypePattern } from "./internal/text.js"
import * as Extras from "./internal/wireExtras.js"
import * as Rules from "./internal/wireRules.js"
import { ScheduledAt } from "./internal/wireSchedule.js"
import { ValidationError } from "./MailroomError.js"

const { fails, headerText, rule } = Rules

/** An addr-spec email address: at most 254 characters, internationalised domains accepted. */
export const EmailAddress = Rules.EmailAddress

/** The sender's address: an `EmailAddress`, whose display name, when one is given, belongs in `from_name`. */
const SenderAddress = Rules.SenderAddress

const notBlank = rule((s: string) => !blank(s), "must not be empty", { minLength: 1, pattern: "\\S" })

/** A MIME type such as `application/pdf` or `text/plain; charset=utf-8`. */
export const ContentType = Schema.String.pipe(
  Schema.check(
    // The MIME type pattern excludes line breaks and control characters, so it says all of this.
    rule((s: string) => !lineBreak.test(s), "must not contain line breaks", {}, true),
    rule((s: string) => !controlExceptTab.test(s), "must not contain control characters", {}),
    rule((s: string) => s.length <= 255, "must be at most 255 characters", { maxLength: 255 }),
    rule((s: string) => mimeType.test(s), "must be a MIME type such as application/pdf", { pattern: mimeTypePattern })
  )
)

const attachmentIdPattern = `^att_[0-9a-f]{1,${maxIdHex}}$`
const attachmentIdRegExp = new RegExp(attachmentIdPattern)

/** `att_` followed by hexadecimal characters: the encoded storage key and its tag. */
export const AttachmentId = Schema.String.pipe(
  Schema.check(
    rule(
      (s: string) => attachmentIdRegExp.test(s),
      `must be att_ followed by 1 to ${maxIdHex} lower-case hexadecimal characters`,
      { pattern: attachmentIdPattern, maxLength: 4 + maxIdHex }
    )
  )
)

const StorageKey = Schema.String.pipe(
  Schema.check(
    rule((s: string) => s !== "", "must not be empty", { minLength: 1 }),
    rule((s: string) => atMostCharacters(s, 1024), "must be at most 1024 characters", { maxLength: 1024 })
  )
)

/** Whole seconds or bytes: a JSON integer, never a fraction or a string. */
const WholeNumber = (message: string) =>
  Schema.Finite.pipe(
    Schema.check(
      rule((n: number) => Number.isSafeInteger(n) && n >= 0, message, {
        type: "integer",
        minimum: 0,
        maximum: Number.MAX_SAFE_INTEGER
      })
    )
  )

/** A list of at most `maxItems`, checked (cheaply, before its items) by `decode` as well. */
const list = <S extends Schema.Top>(item: S, atLeastOne?: string) =>
  Schema.Array(item).pipe(
    Schema.check(
      rule((a: ReadonlyArray<unknown>) => a.length <= maxItems, `must contain at most ${maxItems} items`, {
        maxItems
      }),
      ...(atLeastOne === undefined
        ? []
        : [rule((a: ReadonlyArray<unknown>) => a.length > 0, atLeastOne, { minItems: 1 })])
    )
  )

const recipients = (atLeastOne: boolean) =>
  list(EmailAddress, atLeastOne ? "must contain at least 1 recipient" : undefined)

// --- POST /emails -------------------------------------------------------------------------------

/** A send's body: HTML, text, or both. */
export const EmailBody = Schema.Struct({
  html: Schema.optionalKey(Schema.String),
  text: Schema.optionalKey(Schema.String)
}).pipe(
  Schema.check(
    rule((b: { readonly html?: string; readonly text?: string }) => !!b.html || !!b.text, "must contain html or text", {
      anyOf: [
        { required: ["html"], properties: { html: { minLength: 1 } } },
        { required: ["text"], properties: { text: { minLength: 1 } } }
      ]
    })
  )
)

/** A Content-ID without its angle brackets: the `cid:` the HTML names the inline part by. */
export const ContentId = Schema.String.pipe(
  Schema.check(
    rule(
      (s: string) => contentIdPattern.test(s),
      "must be 1 to 200 letters, digits and the characters . _ - @ + = ! # $ % & ' * / ? ^ ` { | } ~",
      { pattern: contentIdPattern.source }
    )
  )
)

/** An attachment of a send: a stored file named by key. */
export const EmailAttachment = Schema.Struct({
  filename: headerText(255, true),
  key: StorageKey,
  content_type: Schema.optionalKey(ContentType),
  /** Makes the file an inline part that the HTML shows as `<img src="cid:{content_id}">`. */
  content_id: Schema.optionalKey(ContentId)
})
export type EmailAttachment = typeof EmailAttachment.Type

/** A tag of the message: stored with its record, passed to the vendor, carried on its events. */
export const EmailTag = Rules.EmailTag

/** RFC 8058 one-click unsubscribe: `List-Unsubscribe` with these, and `List-Unsubscribe-Post`. */
export const Unsubscribe = Extras.Unsubscribe

/** The body of `POST /emails` (SPEC 2.4). */
export const SendEmailRequest = Schema.Struct({
  from: SenderAddress,
  from_name: Schema.optionalKey(headerText(256, false)),
  to: recipients(true),
  cc: Schema.optionalKey(recipients(false)),
  bcc: Schema.optionalKey(recipients(false)),
  reply_to: Schema.optionalKey(recipients(false)),
  subject: headerText(998, true),
  body: EmailBody,
  attachments: Schema.optionalKey(list(EmailAttachment)),
  tags: Schema.optionalKey(Extras.Tags),
  headers: Schema.optionalKey(Extras.Headers),
  unsubscribe: Schema.optionalKey(Unsubscribe),
  /** Send later: 1 second to 30 days ahead (checked against the clock when the request arrives). */
  scheduled_at: Schema.optionalKey(ScheduledAt)
}).annotate({ identifier: "SendEmailRequest" })
export type SendEmailRequest = typeof SendEmailRequest.Type

/**
 * An attachment from an in-process caller: a stored file by `key`, as on the wire, or bytes it already
 * holds as `content` (a string is taken as UTF-8). Never accepted over HTTP, where files go through storage.
 */
export const InProcessAttachment = Schema.Struct({
  filename: headerText(255, true),
  key: Schema.optionalKey(StorageKey),
  content: Schema.optionalKey(Schema.Union([Schema.Uint8Array, Schema.String])),
  content_type: Schema.optionalKey(ContentType),
  content_id: Schema.optionalKey(ContentId)
}).pipe(
  Schema.check(
    Schema.makeFilter(
      fails(
        (a: { readonly key?: string; readonly content?: unknown }) =>
          (a.key === undefined) !== (a.content === undefined),
        "must have either a key or content"
      )
    )
  )
)
export type InProcessAttachment = typeof InProcessAttachment.Type

/** The send request of in-process callers: the wire's, with attachments that may carry their bytes. */
export const InProcessSendRequest = SendEmailRequest.mapFields((fields) => ({
  ...fields,
  attachments: Schema.optionalKey(list(InProcessAttachment))
})).annotate({ identifier: "InProcessSendRequest" })
export type InProcessSendRequest = typeof InProcessSendRequest.Type

/** The 201 answer of `POST /emails`. */
export const SendEmailResponse = Schema.Struct({
  message_id: Schema.String,
  from: Schema.String,
  to: Schema.Array(Schema.String),
  subject: Schema.String,
  attachments: Schema.Array(Schema.String),
  /** The recipients dropped because the organisation suppressed them; absent when none was. */
  suppressed: Schema.optionalKey(Schema.Array(Schema.String))
}).annotate({ identifier: "SendEmailResponse" })
export type SendEmailResponse = typeof SendEmailResponse.Type

// --- attachments --------------------------------------------------------------------------------

/** The body of `POST /attachments/presign`. */
export const PresignRequest = Schema.Struct({
  filename: Schema.String.pipe(
    Schema.check(
      notBlank,
      rule((s: string) => atMostCharacters(s, 1024), "must be at most 1024 characters", { maxLength: 1024 })
    )
  ),
  content_type: Schema.optionalKey(ContentType),
  org_id: Schema.optionalKey(Schema.String),
  content_length: Schema.optionalKey(WholeNumber("must be a non-negative whole number of bytes"))
}).annotate({ identifier: "PresignRequest" })
export type PresignRequest = typeof PresignRequest.Type

/** The 201 answer of a presign. */
export const PresignResponse = Schema.Struct({
  url: Schema.String,
  key: Schema.String,
  expires_in: WholeNumber("must be a whole number of seconds"),
  attachment_id: AttachmentId
}).annotate({ identifier: "PresignResponse" })
export type PresignResponse = typeof PresignResponse.Type

/** The query of `GET /attachments/download`. */
export const DownloadByKeyQuery = Schema.Struct({ key: StorageKey })
/** The query of `GET /v1/attachments/download`. */
export const DownloadByIdQuery = Schema.Struct({ attachment_id: AttachmentId })

/** A download URL and how long it lasts. */
export const DownloadResponse = Schema.Struct({
  download_url: Schema.String,
  expires_in: WholeNumber("must be a whole number of seconds")
}).annotate({ identifier: "DownloadResponse" })
export type DownloadResponse = typeof DownloadResponse.Type

/** The answer of `DELETE /attachments/delete?key=`. */
export const DeleteByKeyResponse = Schema.Struct({
  deleted: Schema.Boolean,
  key: Schema.String
}).annotate({ identifier: "DeleteByKeyResponse" })
export type DeleteByKeyResponse = typeof DeleteByKeyResponse.Type

/** The body of `DELETE /v1/attachments`. */
export const DeleteByIdRequest = Schema.Struct({ attachment_id: AttachmentId }).annotate({
  identifier: "DeleteByIdRequest"
})

/** The answer of `DELETE /v1/attachments`. */
export const DeleteByIdResponse = Schema.Struct({
  deleted: Schema.Boolean,
  attachment_id: AttachmentId
}).annotate({ identifier: "DeleteByIdResponse" })
export type DeleteByIdResponse = typeof DeleteByIdResponse.Type

// --- sending later and sending many (internal/wireSchedule.ts) -------------------------------------

export {
  /** `POST /emails/{id}/cancel`'s answer: `{message_id, status: "cancelled"}`. */
  CancelResponse,
  /** The most send requests one batch holds: 100. */
  maxBatchItems,
  /** `PATCH /emails/{id}`'s body: `{scheduled_at}`. */
  RescheduleRequest,
  /** `scheduled_at`: RFC 3339 with an offset, decoded to UTC ISO 8601. */
  ScheduledAt,
  /** A scheduled send's answer (202): `{message_id, status: "scheduled", scheduled_at, suppressed?}`. */
  ScheduledEmailResponse,
  /** `POST /emails/batch`'s answer: `{data, errors}`. */
  SendBatchResponse
} from "./internal/wireSchedule.js"

// --- message records and suppressions (internal/wireMessages.ts) ---------------------------------

export {
  /** Rows a page holds when the query does not say: 20. */
  defaultPageSize,
  /** `GET /emails`'s page: records newest first and the cursor of the next page (null on the last). */
  EmailList,
  /** `GET /emails`'s query: `limit`, `cursor`, `status`, `to`, `tag` (`name:value`), `since`, `until`. */
  ListEmailsQuery,
  /** `GET /suppressions`'s query: `limit`, `cursor`, `reason`. */
  ListSuppressionsQuery,
  /** `{id}` of `GET /emails/{id}`: a UUID, as `POST /emails` answered it. */
  MessageId,
  /** The most rows one page holds: 100. */
  maxPageSize,
  /** `cursor`: the `next_cursor` of the page before. */
  PageCursor,
  /** `limit`: 1 to 100, as digits (a query string) or a number. */
  PageLimit,
  /** `GET /suppressions`'s page. */
  SuppressionList,
  /** `POST /suppressions`'s body: `{email, reason?, detail?}`. */
  SuppressRequest,
  /** `tag`: `name:value`. */
  TagFilter,
  /** `since` and `until`: RFC 3339 with an offset, decoded to UTC ISO 8601. */
  Timestamp,
  /** `DELETE /suppressions/{email}`'s answer. */
  UnsuppressResponse
} from "./internal/wireMessages.js"

/**
 * The problems with the size of parsed JSON, before any schema sees it: a list longer than any the
 * API accepts, or an object with more fields than any has. Empty when it fits. `decode` checks this
 * first; a transport can check it as soon as it has parsed a body, so that nothing holds on to it.
 */
export const sizeProblems: (input: unknown) => ReadonlyArray<string> = oversized

/**
 * Decodes unknown input (a parsed JSON body or a query object) with every problem reported, and
 * unknown fields refused: a misspelt `replyTo` is an error, not a silently dropped field.
 */
export const decode = <S extends Schema.Decoder<unknown>>(schema: S) => {
  const run = Schema.decodeUnknownEffect(schema)
  const options = { errors: "all", onExcessProperty: "error" } as const
  return (input: unknown): Effect.Effect<S["Type"], ValidationError> => {
    // Every element of a list a third of a million long would be its own issue: refused whole instead.
    const tooLarge = oversized(input)
    if (tooLarge.length > 0) return Effect.fail(new ValidationError({ errors: tooLarge }))
    return run(input, options).pipe(
      Effect.mapError((error) => new ValidationError({ errors: issueMessages(error.issue) }))
    ) as Effect.Effect<S["Type"], ValidationError>
  }
}
