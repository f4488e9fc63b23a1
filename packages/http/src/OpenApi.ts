// The OpenAPI 3.1 document of both API variants, generated from the same schemas the handler
// decodes with, so the description cannot drift from what is enforced.
import { Wire } from "@mailroom/core"
import * as Schema from "effect/Schema"
import * as MessagesDocument from "./internal/openApiMessages.js"
import { errorResponse, jsonBody, retryAfter, type Shape, shapes, success } from "./internal/openApiParts.js"
import * as ScheduleDocument from "./internal/openApiSchedule.js"

type JsonObject = Record<string, unknown>

/** Where the API is served and what it accepts, as the document states them. */
export interface DocumentOptions {
  /** The origin clients reach the service at, e.g. "https://mail.example.com": the document's `servers`. */
  readonly publicUrl?: string
  /** Prefix of the base variant's paths, e.g. "/mail". Default "". */
  readonly basePath?: string
  /** The largest `content_length` a presign accepts (core's `Attachments` says). Default 25 MiB. */
  readonly maxUploadBytes?: number
  /** Whether a presign must declare `content_length` (core's `Attachments` says). Default false. */
  readonly requireContentLength?: boolean
  /** Prefix before `/v1` of the versioned variant's paths. Default `basePath`. */
  readonly v1BasePath?: string
  /** Names of the providers' delivery webhooks served at `POST {basePath}/webhooks/{name}`. */
  readonly webhooks?: ReadonlyArray<string>
}

/** A provider's delivery webhook: verified by its own signature or credentials, not by an API key. */
const webhookPath = (name: string) => ({
  post: {
    summary: `Delivery events from ${name}, verified with the provider's own signature or credentials`,
    security: [],
    requestBody: {
      required: true,
      content: { "application/json": { schema: {} }, "text/plain": { schema: { type: "string" } } }
    },
    responses: {
      "200": {
        description: "Verified; the events were handed to the organisations they belong to",
        content: {
          "application/json": {
            schema: { type: "object", required: ["events"], properties: { events: { type: "integer" } } }
          }
        }
      },
      "400": errorResponse("message", "Not a message this provider sends"),
      "401": errorResponse("message", "Bad signature or credential"),
      "408": errorResponse("message", "A body only its content can verify did not arrive in time"),
      "413": errorResponse("message", "Body too large"),
      "503": errorResponse(
        "message",
        "Cannot be checked or queued now, or too many are being verified (Retry-After); the provider should retry"
      )
    }
  }
})

/** The document's schemas: every Wire schema the routes name, and the configured presign limits. */
const componentsOf = (options: DocumentOptions): Record<string, unknown> => {
  const components: Record<string, unknown> = {
    errorsBody: shapes.errors,
    errorBody: shapes.error,
    messageBody: shapes.message,
    unavailableSendBody: shapes.unavailableSend
  }
  for (const [name, schema] of Object.entries({
    SendEmailRequest: Wire.SendEmailRequest,
    SendEmailResponse: Wire.SendEmailResponse,
    PresignRequest: Wire.PresignRequest,
    PresignResponse: Wire.PresignResponse,
    DownloadResponse: Wire.DownloadResponse,
    DeleteByKeyResponse: Wire.DeleteByKeyResponse,
    DeleteByIdRequest: Wire.DeleteByIdRequest,
    DeleteByIdResponse: Wire.DeleteByIdResponse,
    ...MessagesDocument.schemas,
    ...ScheduleDocument.schemas
  })) {
    const generated = Schema.toJsonSchemaDocument(schema, { onExcessProperty: "error" })
    for (const [definition, value] of Object.entries(generated.definitions)) {
      // Two schemas with one identifier would silently replace each other here.
      if (definition in components && JSON.stringify(components[definition]) !== JSON.stringify(value)) {
        throw new Error(`OpenApi: two different schemas are named ${definition}`)
      }
      components[definition] = value
    }
    if (!(name in generated.definitions)) components[name] = generated.schema
  }
  // The limit is configuration, not schema: the decoder checks it after the schema does.
  const presignRequest = components.PresignRequest as {
    properties: Record<string, Record<string, unknown>>
    required?: Array<string>
  }
  presignRequest.properties.content_length = {
    ...presignRequest.properties.content_length,
    maximum: options.maxUploadBytes ?? 25 * 1024 * 1024
  }
  if (options.requireContentLength === true) {
    presignRequest.required = [...(presignRequest.required ?? []), "content_length"]
  }
  return components
}

const apiKey = [{ apiKey: [] }]
const bearer = [{ bearer: [] }]
// Every authenticated operation: an unreachable organisations store is a 503, never a 401.
const unauthorized = (shape: Shape, unavailableShape: Shape = shape) => ({
  "401": errorResponse(shape, "Missing, invalid or revoked credential"),
  "503": errorResponse(
    unavailableShape,
    "The credential cannot be checked, or the store reached, right now; nothing was done",
    retryAfter(false)
  )
})
const presign = (security: ReadonlyArray<Record<string, ReadonlyArray<string>>>, shape: (s: string) => Shape) => ({
  post: {
    summary: "Presign an upload: a URL to PUT the file to, its storage key and attachment id",
    security,
    requestBody: jsonBody("PresignRequest"),
    responses: {
      ...success("201", "PresignResponse", "Upload URL, valid for expires_in seconds"),
      "400": errorResponse(shape("400"), "Invalid request"),
      ...unauthorized(shape("401"), shape("503")),
      "403": errorResponse(shape("403"), "org_id is not the caller's organisation"),
      "413": errorResponse(shape("413"), "Body too large"),
      "415": errorResponse(shape("415"), "Body is not application/json"),
      "500": errorResponse(shape("500"), "Internal error")
    }
  }
})
const baseAttachment = (status: string): Shape => (["401", "404", "500"].includes(status) ? "message" : "error")
const query = (name: string, schema: Schema.Top) => ({
  name,
  in: "query",
  required: true,
  schema: Schema.toJsonSchemaDocument(schema).schema
})
// Generated when the document is asked for, not when the module loads (issue 33).
const keyQuery = () => [query("key", Wire.DownloadByKeyQuery.fields.key)]

/** `POST /emails`. */
const sendEmail = {
  summary: "Send an email",
  security: apiKey,
  parameters: [
    {
      name: "Idempotency-Key",
      in: "header",
      required: false,
      schema: { type: "string", minLength: 1, maxLength: 256, pattern: "^[\\x21-\\x7e]+$" },
      description: "Same key and body within 24 h replays the first response (Idempotent-Replayed: true)"
    }
  ],
  requestBody: jsonBody("SendEmailRequest"),
  responses: {
    ...success("201", "SendEmailResponse", "Sent"),
    ...ScheduleDocument.scheduledResponse,
    "400": errorResponse("errors", "Invalid request: one message per problem"),
    ...unauthorized("message"),
    "409": errorResponse("error", "Idempotency-Key reused with another body, or still in flight"),
    "413": errorResponse("error", "Body too large"),
    "415": errorResponse("error", "Body is not application/json"),
    "422": errorResponse("error", "The sender domain is not verified, or the provider rejected the message"),
    "429": errorResponse("error", "Rate limited by the provider", retryAfter(true)),
    "500": errorResponse("error", "Internal error"),
    "503": errorResponse(
      "unavailableSend",
      "Sending is paused, the provider is unavailable or did not confirm the message, or the credential cannot be checked right now",
      retryAfter(false)
    )
  }
}

/** The attachment operations of both variants. */
const attachmentPaths = (base: string, v1: string): JsonObject => ({
  [`${base}/attachments/presign`]: presign(apiKey, baseAttachment),
  [`${base}/attachments/download`]: {
    get: {
      summary: "A temporary download URL for a stored attachment",
      security: apiKey,
      parameters: keyQuery(),
      responses: {
        ...success("200", "DownloadResponse", "Download URL, valid for expires_in seconds"),
        "400": errorResponse("error", "Invalid key"),
        ...unauthorized("message", "error"),
        "404": errorResponse("message", "No such attachment of this organisation"),
        "500": errorResponse("message", "Internal error")
      }
    }
  },
  [`${base}/attachments/delete`]: {
    delete: {
      summary: "Delete an attachment permanently",
      security: apiKey,
      parameters: keyQuery(),
      responses: {
        ...success("200", "DeleteByKeyResponse", "Deleted"),
        "400": errorResponse("error", "Invalid key"),
        ...unauthorized("message", "error"),
        "404": errorResponse("message", "No such attachment of this organisation"),
        "500": errorResponse("message", "Internal error")
      }
    }
  },
  [`${v1}/attachments/presign`]: presign(bearer, () => "message"),
  [`${v1}/attachments/download`]: {
    get: {
      summary: "A temporary download URL for an attachment id",
      security: bearer,
      parameters: [query("attachment_id", Wire.DownloadByIdQuery.fields.attachment_id)],
      responses: {
        ...success("200", "DownloadResponse", "Download URL, valid for expires_in seconds"),
        "400": errorResponse("message", "Invalid attachment_id"),
        ...unauthorized("message"),
        "404": errorResponse("message", "No such attachment of this organisation"),
        "500": errorResponse("message", "Internal error")
      }
    }
  }
})

/** `DELETE {v1}/attachments`: the versioned variant's delete by id. */
const deleteById = (v1: string): JsonObject => ({
  [`${v1}/attachments`]: {
    delete: {
      summary: "Delete an attachment permanently by id",
      security: bearer,
      requestBody: jsonBody("DeleteByIdRequest"),
      responses: {
        ...success("200", "DeleteByIdResponse", "Deleted"),
        "400": errorResponse("message", "Invalid request"),
        ...unauthorized("message"),
        "404": errorResponse("message", "Attachment not found"),
        "413": errorResponse("message", "Body too large"),
        "415": errorResponse("message", "Body is not application/json"),
        "500": errorResponse("message", "Internal error")
      }
    }
  }
})

/** The OpenAPI 3.1 document of both API variants. */
export const document = (options: DocumentOptions = {}): JsonObject => {
  const base = options.basePath ?? ""
  const v1 = `${options.v1BasePath ?? base}/v1`
  const publicUrl = options.publicUrl?.replace(/\/+$/, "")
  const text = JSON.stringify({
    openapi: "3.1.0",
    info: {
      title: "mailroom",
      version: "1.0.0",
      description: `Transactional email with attachments kept in private object storage. ${MessagesDocument.errorShapes}`
    },
    ...(publicUrl === undefined || publicUrl === "" ? {} : { servers: [{ url: publicUrl }] }),
    paths: {
      [`${base}/emails`]: {
        post: sendEmail,
        get: MessagesDocument.listEmails()
      },
      ...MessagesDocument.paths(base),
      [`${base}/emails/{id}`]: {
        ...MessagesDocument.paths(base)[`${base}/emails/{id}`],
        patch: ScheduleDocument.reschedule()
      },
      ...ScheduleDocument.paths(base),
      ...attachmentPaths(base, v1),
      [`${base}/openapi.json`]: {
        get: {
          summary: "This document",
          security: [],
          responses: {
            "200": {
              description: "The OpenAPI 3.1 document of both API variants",
              content: { "application/json": { schema: { type: "object", required: ["openapi", "paths"] } } }
            }
          }
        }
      },
      ...Object.fromEntries((options.webhooks ?? []).map((name) => [`${base}/webhooks/${name}`, webhookPath(name)])),
      ...deleteById(v1)
    },
    components: {
      securitySchemes: {
        apiKey: { type: "apiKey", in: "header", name: "x-api-key" },
        bearer: { type: "http", scheme: "bearer" }
      },
      schemas: componentsOf(options)
    }
  })
  // JSON Schema 2020-12 definitions live under $defs; in OpenAPI they are components.
  return JSON.parse(text.replaceAll('"#/$defs/', '"#/components/schemas/')) as JsonObject
}
