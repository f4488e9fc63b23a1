// The inbox API's wire: the schemas of what it answers, and the OpenAPI 3.1 document the server serves
// beside it (`/_mailroom/outbox/api/openapi.json`), generated from those schemas under the tag `inbox`.
import { MessageLog } from "@mailroom/core"
import * as Schema from "effect/Schema"

const Instant = Schema.String.annotate({ description: "ISO 8601, UTC, to the millisecond" })
const Bytes = Schema.Int.pipe(Schema.check(Schema.isGreaterThanOrEqualTo(0)))

export const Address = Schema.Struct({ address: Schema.String, name: Schema.NullOr(Schema.String) }).annotate({
  identifier: "InboxAddress"
})

export const Link = Schema.Struct({
  url: Schema.String,
  /** The text the link shows (an anchor's text or its image's alt); the URL itself in the text part. */
  text: Schema.String,
  source: Schema.Literals(["html", "text"])
}).annotate({ identifier: "InboxLink" })

export const Summary = Schema.Struct({
  /** The file's name: the `message_id` that `POST /emails` answered. */
  id: Schema.String,
  organization_id: Schema.NullOr(Schema.String),
  from: Schema.NullOr(Address),
  to: Schema.Array(Address),
  cc: Schema.Array(Address),
  /** From the outbox's X-Mailroom-Bcc header: a message never carries a Bcc header. */
  bcc: Schema.Array(Schema.String),
  subject: Schema.String,
  /** When the outbox wrote it, to the millisecond: what lists sort by and `since` compares with. */
  received_at: Instant,
  /** The message's Date header (to the second); null without one. */
  date: Schema.NullOr(Instant),
  size: Bytes,
  /** Attachments, not counting the inline parts the HTML shows. */
  attachment_count: Bytes,
  /** Every link of the HTML (in document order), then of the text part. */
  links: Schema.Array(Link),
  /** Whether it was opened in the viewer (or marked so). */
  read: Schema.Boolean
}).annotate({ identifier: "InboxMessageSummary" })
export type Summary = typeof Summary.Type

export const Attachment = Schema.Struct({
  filename: Schema.NullOr(Schema.String),
  content_type: Schema.String,
  size: Bytes,
  content_id: Schema.NullOr(Schema.String),
  /** Shown by the HTML (`cid:`) rather than offered as a download. */
  inline: Schema.Boolean,
  /** The bytes, under the same access rule as this API. */
  download_url: Schema.String
}).annotate({ identifier: "InboxAttachment" })

export const Detail = Schema.Struct({
  ...Summary.fields,
  reply_to: Schema.Array(Address),
  /** Every header as written, in order. */
  headers: Schema.Array(Schema.Struct({ name: Schema.String, value: Schema.String })),
  /** The text part as sent; null when the message has none. */
  text: Schema.NullOr(Schema.String),
  /** The HTML part as sent (`cid:` references kept); null when the message has none. */
  html: Schema.NullOr(Schema.String),
  /** Every attachment, inline parts included. */
  attachments: Schema.Array(Attachment),
  /** The message's delivery events from the message log, oldest first. */
  events: Schema.Array(MessageLog.TimelineEvent),
  raw_url: Schema.String
}).annotate({ identifier: "InboxMessage" })
export type Detail = typeof Detail.Type

export const Page = Schema.Struct({
  data: Schema.Array(Summary),
  next_cursor: Schema.NullOr(Schema.String)
}).annotate({ identifier: "InboxMessageList" })

export const Deleted = Schema.Struct({ deleted: Bytes }).annotate({ identifier: "InboxDeleted" })

export const MarkRead = Schema.Struct({ read: Schema.Boolean }).annotate({ identifier: "InboxMarkRead" })

/** The longest a wait may be asked to last. */
export const maxWaitMillis = 60_000
export const defaultWaitMillis = 10_000
/** Waits open at once; one more is a 503. */
export const maxWaits = 100
export const maxPageSize = 100
export const defaultPageSize = 50

const json = (ref: string, description: string) => ({
  description,
  content: { "application/json": { schema: { $ref: `#/components/schemas/${ref}` } } }
})
const errors = (ref: "errorsBody" | "messageBody", description: string) => json(ref, description)
const query = (name: string, description: string, schema: Record<string, unknown> = { type: "string" }) => ({
  name,
  in: "query",
  required: false,
  description,
  schema
})

const filters = [
  query("to", "A recipient (to, cc or bcc), compared without case", { type: "string", format: "email" }),
  query("from", "The sender's address, compared without case", { type: "string", format: "email" }),
  query("subject", "Contained in the subject, without case", { type: "string", minLength: 1, maxLength: 200 }),
  query("since", "Received at or after: ISO 8601", { type: "string", format: "date-time" })
]

const tags = ["inbox"]
const id = { name: "id", in: "path", required: true, schema: { type: "string" } }
const notFound = errors("messageBody", "No such message in the outbox")
const bad = errors("errorsBody", "A parameter that is not valid or not known: one message per problem, each naming it")

/** The operations under `base`. */
const paths = (base: string): Record<string, unknown> => ({
  [`${base}/messages`]: {
    get: {
      tags,
      summary: "Messages, newest first, a page at a time",
      parameters: [
        ...filters,
        query(
          "q",
          "Words in the sender, the recipients, the subject or the text, as the viewer's search box takes them",
          { type: "string", minLength: 1, maxLength: 200 }
        ),
        query("limit", `Rows in the page, 1 to ${maxPageSize}`, {
          type: "integer",
          minimum: 1,
          maximum: maxPageSize,
          default: defaultPageSize
        }),
        query("cursor", "The `next_cursor` of the page before")
      ],
      responses: { "200": json("InboxMessageList", "A page"), "400": bad }
    },
    delete: {
      tags,
      summary: "Delete every message",
      responses: { "200": json("InboxDeleted", "How many were deleted") }
    }
  },
  [`${base}/messages/{id}`]: {
    get: {
      tags,
      summary: "A message: headers, bodies, links, attachments and delivery events",
      parameters: [id],
      responses: { "200": json("InboxMessage", "The message"), "404": notFound }
    },
    patch: {
      tags,
      summary: "Mark a message read or unread",
      parameters: [id],
      requestBody: {
        required: true,
        content: { "application/json": { schema: { $ref: "#/components/schemas/InboxMarkRead" } } }
      },
      responses: { "200": json("InboxMessageSummary", "The message"), "400": bad, "404": notFound }
    },
    delete: {
      tags,
      summary: "Delete a message",
      parameters: [id],
      responses: { "200": json("InboxDeleted", "Deleted"), "404": notFound }
    }
  },
  [`${base}/wait`]: {
    get: {
      tags,
      summary: "Wait for the next message that matches",
      description:
        "Answers as soon as a matching message arrives, or at once with the newest match created at or " +
        `after \`since\` when one is there. After \`timeout\` (default ${defaultWaitMillis / 1000}s, at most ` +
        `${maxWaitMillis / 1000}s) it answers 204 with no body. At most ${maxWaits} waits are open at once.`,
      parameters: [
        ...filters,
        query("timeout", "How long to wait: `10s`, `500ms`, or seconds", {
          type: "string",
          pattern: "^[0-9]+(ms|s)?$"
        })
      ],
      responses: {
        "200": json("InboxMessage", "The message that arrived"),
        "204": { description: "None arrived within the timeout" },
        "400": bad,
        "503": errors("messageBody", "Too many waits are open, or the server is shutting down (Retry-After)")
      }
    }
  }
})

/** The document; `base` is where the API is served (`/_mailroom/outbox/api`). */
export const document = (base: string, publicUrl?: string): Record<string, unknown> => {
  const components: Record<string, unknown> = {
    errorsBody: {
      type: "object",
      required: ["errors"],
      properties: { errors: { type: "array", items: { type: "string" } } }
    },
    messageBody: { type: "object", required: ["message"], properties: { message: { type: "string" } } }
  }
  for (const schema of [Summary, Detail, Page, Deleted, MarkRead]) {
    const generated = Schema.toJsonSchemaDocument(schema)
    Object.assign(components, generated.definitions)
  }
  const text = JSON.stringify({
    openapi: "3.1.0",
    info: {
      title: "mailroom outbox inbox",
      version: "1.0.0",
      description:
        "The outbox's messages for end-to-end tests, served beside the viewer and under its access rule: " +
        "a loopback listener (and a loopback Host), or the viewer token in x-mailroom-viewer-token. " +
        "Not part of the mailroom API: it shows every organisation's mail."
    },
    ...(publicUrl === undefined ? {} : { servers: [{ url: publicUrl }] }),
    tags: [{ name: "inbox", description: "The outbox's messages, for tests" }],
    paths: paths(base),
    components: {
      securitySchemes: { viewerToken: { type: "apiKey", in: "header", name: "x-mailroom-viewer-token" } },
      schemas: components
    },
    security: [{}, { viewerToken: [] }]
  })
  return JSON.parse(text.replaceAll('"#/$defs/', '"#/components/schemas/')) as Record<string, unknown>
}
