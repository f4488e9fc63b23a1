// Sending later and sending many in the OpenAPI document (DESIGN section 7), base variant only: the
// 202 of a scheduled send, `PATCH /emails/{id}`, `POST /emails/{id}/cancel`, `POST /emails/batch`.
import { Wire } from "@mailroom/core"
import * as Schema from "effect/Schema"
import { errorResponse, jsonBody, parameter, retryAfter, success } from "./openApiParts.js"

/** The batch's body as the document states it; core decodes each item on its own. */
const SendBatchRequest = Schema.Array(Wire.SendEmailRequest)
  .pipe(Schema.check(Schema.isMinLength(1), Schema.isMaxLength(Wire.maxBatchItems)))
  .annotate({
    identifier: "SendBatchRequest",
    description:
      "1 to 100 send requests. An item the schema refuses is reported in the answer's `errors` by its index; the others are still sent."
  })

/** The component schemas these operations name. */
export const schemas = {
  ScheduledEmailResponse: Wire.ScheduledEmailResponse,
  RescheduleRequest: Wire.RescheduleRequest,
  CancelResponse: Wire.CancelResponse,
  SendBatchRequest,
  SendBatchResponse: Wire.SendBatchResponse
}

const security = [{ apiKey: [] }]

const idempotencyKey = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  schema: { type: "string", minLength: 1, maxLength: 256, pattern: "^[\\x21-\\x7e]+$" },
  description: "Same key and body within 24 h replays the first response (Idempotent-Replayed: true)"
}

const common = {
  "401": errorResponse("message", "Missing, invalid or revoked credential"),
  "500": errorResponse("error", "Internal error"),
  "503": errorResponse(
    "error",
    "The credential cannot be checked, or the records or the queue reached, right now; nothing was done",
    retryAfter(false)
  )
}

// Generated when the document is asked for, not when the module loads (issue 33).
const id = () => parameter("id", "path", Wire.MessageId, "The message_id POST /emails answered")

/** `POST /emails` with `scheduled_at`: added to that operation's answers. */
export const scheduledResponse = success(
  "202",
  "ScheduledEmailResponse",
  "Scheduled: checked now, sent at scheduled_at (1 second to 30 days ahead)"
)

/** `PATCH /emails/{id}`: merged with `GET /emails/{id}` under the one path. */
export const reschedule = () => ({
  summary: "Move a scheduled message to another time",
  security,
  parameters: [id()],
  requestBody: jsonBody("RescheduleRequest"),
  responses: {
    ...success("200", "ScheduledEmailResponse", "Rescheduled"),
    "400": errorResponse("errors", "scheduled_at is missing, malformed, in the past or more than 30 days ahead"),
    "404": errorResponse("error", "No message of this organisation has this id"),
    "409": errorResponse("error", "The message has started to send, or is cancelled"),
    "413": errorResponse("error", "Body too large"),
    "415": errorResponse("error", "Body is not application/json"),
    ...common
  }
})

/** The operations at their own paths. */
export const paths = (base: string) => ({
  [`${base}/emails/{id}/cancel`]: {
    post: {
      summary: "Cancel a scheduled message",
      description: "A message cancelled is never sent; cancelling it again answers the same.",
      security,
      parameters: [id()],
      responses: {
        ...success("200", "CancelResponse", "Cancelled"),
        "400": errorResponse("errors", "The id is not valid percent-encoding, or a query parameter was given"),
        "404": errorResponse("error", "No message of this organisation has this id"),
        "409": errorResponse("error", "The message has started to send"),
        ...common
      }
    }
  },
  [`${base}/emails/batch`]: {
    post: {
      summary: "Send (or schedule) up to 100 messages, each on its own",
      description:
        "Each item is checked and sent as `POST /emails` would, a few at a time, under the same rate limits. " +
        "Accepted items are listed in `data`, refused ones in `errors`, each by its index. 200 when any item " +
        "was accepted, 400 with the same body when none was, 503 when the provider took none for now (nothing is " +
        "kept under the Idempotency-Key then). One Idempotency-Key covers the whole batch.",
      security,
      parameters: [idempotencyKey],
      requestBody: jsonBody("SendBatchRequest"),
      responses: {
        ...success("200", "SendBatchResponse", "Some or all items accepted"),
        "400": {
          description:
            "No item was accepted (the same body as 200), or the body is not an array of 1 to 100 requests ({errors})",
          content: {
            "application/json": {
              schema: {
                anyOf: [{ $ref: "#/components/schemas/SendBatchResponse" }, { $ref: "#/components/schemas/errorsBody" }]
              }
            }
          }
        },
        "409": errorResponse("error", "Idempotency-Key reused with another body, or still in flight"),
        "413": errorResponse("error", "Body too large"),
        "415": errorResponse("error", "Body is not application/json"),
        ...common
      }
    }
  }
})
