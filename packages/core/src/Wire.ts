// The JSON bodies of the API (SPEC section 2, DESIGN section 3) as Schemas, and their decoding into
// one validation message per problem. The HTTP package and the OpenAPI document use these same schemas.
import { Effect, Schema } from "effect"
import { isEmailAddress } from "./internal/address.js"
import { maxIdHex } from "./internal/attachmentKey.js"
import { issueMessages } from "./internal/issues.js"
import { ValidationError } from "./MailroomError.js"

const fails =
  <T>(test: (value: T) => boolean, message: string) =>
  (value: T) =>
    test(value) ? undefined : message

const lineBreak = /[\r\n]/
const controlExceptTab = /[\u0000-\u0008\u000A-\u001F\u007F-\u009F]/

/** An addr-spec email address: at most 254 characters, internationalised domains accepted. */
export const EmailAddress = Schema.String.pipe(
  Schema.check(Schema.makeFilter(fails(isEmailAddress, "must be a valid email address")))
).annotate({ description: "An email address (addr-spec, no display name)", format: "email" })

/** Text that ends up in a mail header: a line break there would let the caller write headers. */
const headerText = (maxLength: number) =>
  Schema.String.pipe(
    Schema.check(
      Schema.makeFilter(
        fails((s: string) => !lineBreak.test(s), "must not contain line breaks"),
        undefined,
        true
      ),
      Schema.makeFilter(fails((s: string) => !controlExceptTab.test(s), "must not contain control characters")),
      Schema.makeFilter(fails((s: string) => s.length <= maxLength, `must be at most ${maxLength} characters`))
    )
  )

const nonEmpty = Schema.makeFilter(fails((s: string) => s.trim() !== "", "must not be empty"))

const mimeToken = "[!#$%&'*+.^_`|~0-9A-Za-z-]+"
const mimeType = new RegExp(
  `^${mimeToken}/${mimeToken}(?:[ \\t]*;[ \\t]*${mimeToken}=(?:${mimeToken}|"[^"\\\\\\r\\n]*"))*$`
)

/** A MIME type such as `application/pdf` or `text/plain; charset=utf-8`. */
export const ContentType = headerText(255).pipe(
  Schema.check(Schema.makeFilter(fails((s: string) => mimeType.test(s), "must be a MIME type such as application/pdf")))
)

const attachmentIdPattern = new RegExp(`^att_[0-9a-f]{1,${maxIdHex}}$`)

/** `att_` followed by hexadecimal characters: the encoded storage key and its tag. */
export const AttachmentId = Schema.String.pipe(
  Schema.check(
    Schema.makeFilter(
      fails(
        (s: string) => attachmentIdPattern.test(s),
        `must be att_ followed by 1 to ${maxIdHex} lower-case hexadecimal characters`
      )
    )
  )
)

const StorageKey = Schema.String.pipe(
  Schema.check(
    Schema.makeFilter(fails((s: string) => s !== "", "must not be empty")),
    Schema.makeFilter(fails((s: string) => s.length <= 1024, "must be at most 1024 characters"))
  )
)

const recipients = (atLeastOne: boolean) =>
  atLeastOne
    ? Schema.Array(EmailAddress).pipe(
        Schema.check(
          Schema.makeFilter(fails((a: ReadonlyArray<string>) => a.length > 0, "must contain at least 1 recipient"))
        )
      )
    : Schema.Array(EmailAddress)

// --- POST /emails -------------------------------------------------------------------------------

export const EmailBody = Schema.Struct({
  html: Schema.optionalKey(Schema.String),
  text: Schema.optionalKey(Schema.String)
}).pipe(
  Schema.check(
    Schema.makeFilter(
      fails(
        (b: { readonly html?: string; readonly text?: string }) => !!b.html || !!b.text,
        "must contain html or text"
      )
    )
  )
)

export const EmailAttachment = Schema.Struct({
  filename: headerText(255).pipe(Schema.check(nonEmpty)),
  key: StorageKey,
  content_type: Schema.optionalKey(ContentType)
})
export type EmailAttachment = typeof EmailAttachment.Type

export const SendEmailRequest = Schema.Struct({
  from: EmailAddress,
  from_name: Schema.optionalKey(headerText(256)),
  to: recipients(true),
  cc: Schema.optionalKey(recipients(false)),
  bcc: Schema.optionalKey(recipients(false)),
  reply_to: Schema.optionalKey(recipients(false)),
  subject: headerText(998).pipe(Schema.check(nonEmpty)),
  body: EmailBody,
  attachments: Schema.optionalKey(Schema.Array(EmailAttachment))
}).annotate({ identifier: "SendEmailRequest" })
export type SendEmailRequest = typeof SendEmailRequest.Type

/**
 * An attachment from an in-process caller: a stored file by `key`, as on the wire, or bytes it already
 * holds as `content` (a string is taken as UTF-8). Never accepted over HTTP, where files go through storage.
 */
export const InProcessAttachment = Schema.Struct({
  filename: headerText(255).pipe(Schema.check(nonEmpty)),
  key: Schema.optionalKey(StorageKey),
  content: Schema.optionalKey(Schema.Union([Schema.Uint8Array, Schema.String])),
  content_type: Schema.optionalKey(ContentType)
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
  attachments: Schema.optionalKey(Schema.Array(InProcessAttachment))
})).annotate({ identifier: "InProcessSendRequest" })
export type InProcessSendRequest = typeof InProcessSendRequest.Type

export const SendEmailResponse = Schema.Struct({
  message_id: Schema.String,
  from: Schema.String,
  to: Schema.Array(Schema.String),
  subject: Schema.String,
  attachments: Schema.Array(Schema.String)
}).annotate({ identifier: "SendEmailResponse" })
export type SendEmailResponse = typeof SendEmailResponse.Type

// --- attachments --------------------------------------------------------------------------------

export const PresignRequest = Schema.Struct({
  filename: Schema.String.pipe(
    Schema.check(
      Schema.makeFilter(fails((s: string) => s.trim() !== "", "must not be empty")),
      Schema.makeFilter(fails((s: string) => s.length <= 1024, "must be at most 1024 characters"))
    )
  ),
  content_type: Schema.optionalKey(ContentType),
  org_id: Schema.optionalKey(Schema.String),
  content_length: Schema.optionalKey(
    Schema.Number.pipe(
      Schema.check(
        Schema.makeFilter(
          fails((n: number) => Number.isSafeInteger(n) && n >= 0, "must be a non-negative whole number of bytes")
        )
      )
    )
  )
}).annotate({ identifier: "PresignRequest" })
export type PresignRequest = typeof PresignRequest.Type

export const PresignResponse = Schema.Struct({
  url: Schema.String,
  key: Schema.String,
  expires_in: Schema.Number,
  attachment_id: Schema.String
}).annotate({ identifier: "PresignResponse" })
export type PresignResponse = typeof PresignResponse.Type

export const DownloadByKeyQuery = Schema.Struct({ key: StorageKey })
export const DownloadByIdQuery = Schema.Struct({ attachment_id: AttachmentId })

export const DownloadResponse = Schema.Struct({
  download_url: Schema.String,
  expires_in: Schema.Number
}).annotate({ identifier: "DownloadResponse" })
export type DownloadResponse = typeof DownloadResponse.Type

export const DeleteByKeyResponse = Schema.Struct({
  deleted: Schema.Boolean,
  key: Schema.String
}).annotate({ identifier: "DeleteByKeyResponse" })
export type DeleteByKeyResponse = typeof DeleteByKeyResponse.Type

export const DeleteByIdRequest = Schema.Struct({ attachment_id: AttachmentId }).annotate({
  identifier: "DeleteByIdRequest"
})

export const DeleteByIdResponse = Schema.Struct({
  deleted: Schema.Boolean,
  attachment_id: Schema.String
}).annotate({ identifier: "DeleteByIdResponse" })
export type DeleteByIdResponse = typeof DeleteByIdResponse.Type

/**
 * Decodes unknown input (a parsed JSON body or a query object) with every problem reported, and
 * unknown fields refused: a misspelt `replyTo` is an error, not a silently dropped field.
 */
export const decode = <S extends Schema.Decoder<unknown>>(schema: S) => {
  const run = Schema.decodeUnknownEffect(schema)
  return (input: unknown): Effect.Effect<S["Type"], ValidationError> =>
    run(input, { errors: "all", onExcessProperty: "error" }).pipe(
      Effect.mapError((error) => new ValidationError({ errors: issueMessages(error.issue) }))
    ) as Effect.Effect<S["Type"], ValidationError>
}
