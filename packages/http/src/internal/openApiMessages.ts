// The message records and suppressions in the OpenAPI document (DESIGN section 7), base variant only:
// every parameter generated from the core schema that decodes it, every status the router answers.
import { MessageLog, Suppressions, Wire } from "@mailroom/core"
import { errorResponse, jsonBody, parameter, retryAfter, type Shape, success } from "./openApiParts.js"

/** The component schemas these operations name, generated as the others are. */
export const schemas = {
  EmailList: Wire.EmailList,
  EmailDetail: MessageLog.EmailDetail,
  SuppressRequest: Wire.SuppressRequest,
  Suppression: Suppressions.Suppression,
  SuppressionList: Wire.SuppressionList,
  UnsuppressResponse: Wire.UnsuppressResponse
}

/** How these operations answer errors, said once in the document's description. */
export const errorShapes =
  "The /emails operations answer 400 with {errors}, one message per problem, each naming its field " +
  "(`limit: must be a whole number from 1 to 100`); the /suppressions operations answer 400 with {error}, " +
  "the problems joined by '; '. Both answer 401 with {message} and every other error with {error}."

const security = [{ apiKey: [] }]

/** The errors every one of these operations may answer; `shape400` is its 400's body. */
const errors = (shape400: Shape, invalid: string) => ({
  "400": errorResponse(shape400, invalid),
  "401": errorResponse("message", "Missing, invalid or revoked credential"),
  "500": errorResponse("error", "Internal error"),
  "503": errorResponse(
    "error",
    "The credential cannot be checked, or the records reached, right now; nothing was done",
    retryAfter(false)
  )
})

const { fields: emailsQuery } = Wire.ListEmailsQuery
const { fields: suppressionsQuery } = Wire.ListSuppressionsQuery

// One schema for every `limit`: an integer, as a query string carries it in digits.
const limit = {
  name: "limit",
  in: "query",
  required: false,
  description: `Rows in the page, 1 to ${Wire.maxPageSize}`,
  schema: { type: "integer", minimum: 1, maximum: Wire.maxPageSize, default: Wire.defaultPageSize }
}
// Each parameter is generated when the document is asked for, not when the module loads: a start that
// never serves /openapi.json never converts a schema (issue 33).
const cursor = () => parameter("cursor", "query", Wire.PageCursor, "The `next_cursor` of the page before")

/** `GET /emails`: merged with `POST /emails` under the one path. */
export const listEmails = () => ({
  summary: "The organisation's messages, newest first, a page at a time",
  description: "Bodies and attachment bytes are not stored; sizes and storage keys are.",
  security,
  parameters: [
    limit,
    cursor(),
    parameter("status", "query", emailsQuery.status.schema, "The message's status, derived from its recipients"),
    parameter("to", "query", Wire.EmailAddress, "A recipient (to, cc or bcc); the domain compared in any case"),
    parameter("tag", "query", Wire.TagFilter, "`name:value`, a tag the message was sent with"),
    parameter("since", "query", Wire.Timestamp, "Created at or after: RFC 3339 with an offset"),
    parameter("until", "query", Wire.Timestamp, "Created before: RFC 3339 with an offset")
  ],
  responses: {
    ...success("200", "EmailList", "A page; next_cursor is null on the last"),
    ...errors("errors", "A query parameter is invalid, unknown or given twice; each is named")
  }
})

/** The operations at their own paths. */
export const paths = (base: string) => ({
  [`${base}/emails/{id}`]: {
    get: {
      summary: "A message: each recipient's state and its delivery events, oldest first",
      security,
      parameters: [parameter("id", "path", Wire.MessageId, "The message_id POST /emails answered")],
      responses: {
        ...success("200", "EmailDetail", "The message"),
        ...errors("errors", "The id is not valid percent-encoding, or a query parameter was given"),
        "404": errorResponse("error", "No message of this organisation has this id")
      }
    }
  },
  [`${base}/suppressions`]: {
    get: {
      summary: "The organisation's suppression list, newest first, a page at a time",
      security,
      parameters: [
        limit,
        cursor(),
        parameter("reason", "query", suppressionsQuery.reason.schema, "Why the address is on the list")
      ],
      responses: {
        ...success("200", "SuppressionList", "A page; next_cursor is null on the last"),
        ...errors("error", "A query parameter is invalid, unknown or given twice")
      }
    },
    post: {
      summary: "Stop sending to an address",
      description:
        "Sends to it drop it as a recipient (a 422 when no recipient is left). An address on the list " +
        "already keeps its first entry, which is answered with 200.",
      security,
      requestBody: jsonBody("SuppressRequest"),
      responses: {
        ...success("201", "Suppression", "Added"),
        ...success("200", "Suppression", "On the list already: the entry kept"),
        ...errors("error", "Invalid request"),
        "413": errorResponse("error", "Body too large"),
        "415": errorResponse("error", "Body is not application/json")
      }
    }
  },
  [`${base}/suppressions/{email}`]: {
    delete: {
      summary: "Send to an address again",
      security,
      parameters: [
        parameter("email", "path", Wire.EmailAddress, "The address, percent-encoded (`bob%2Btag%40example.com`)")
      ],
      responses: {
        ...success("200", "UnsuppressResponse", "Removed"),
        ...errors("error", "Not an email address, or not valid percent-encoding"),
        "404": errorResponse("error", "The address is not on the organisation's list")
      }
    }
  }
})
