// The pieces every operation of the OpenAPI document is written with: the three error body shapes,
// responses and request bodies by reference, Retry-After, and a parameter from a core schema.
import * as Schema from "effect/Schema"

export const shapes = {
  errors: {
    type: "object",
    required: ["errors"],
    properties: { errors: { type: "array", items: { type: "string" } } }
  },
  error: { type: "object", required: ["error"], properties: { error: { type: "string" } } },
  message: { type: "object", required: ["message"], properties: { message: { type: "string" } } },
  unavailableSend: {
    type: "object",
    required: ["error", "may_have_been_sent"],
    properties: {
      error: { type: "string" },
      may_have_been_sent: {
        type: "boolean",
        description:
          "True when the provider may have accepted the message before failing (a timeout, a dropped connection, the server shutting down): check before sending it again, or retry with the same Idempotency-Key, which answers 409 instead of sending twice"
      }
    }
  }
} as const

export type Shape = keyof typeof shapes

export const retryAfter = (required: boolean) => ({
  "Retry-After": {
    description: "Whole seconds to wait before trying again",
    required,
    schema: { type: "integer", minimum: 1 }
  }
})

export const errorResponse = (shape: Shape, description: string, headers?: ReturnType<typeof retryAfter>) => ({
  description,
  ...(headers === undefined ? {} : { headers }),
  content: { "application/json": { schema: { $ref: `#/components/schemas/${shape}Body` } } }
})

export const jsonBody = (ref: string) => ({
  required: true,
  content: { "application/json": { schema: { $ref: `#/components/schemas/${ref}` } } }
})

export const success = (status: string, ref: string, description: string) => ({
  [status]: { description, content: { "application/json": { schema: { $ref: `#/components/schemas/${ref}` } } } }
})

/** An operation's parameter, its schema generated from the core schema that decodes it. */
export const parameter = (
  name: string,
  where: "query" | "path",
  schema: Schema.Top,
  description?: string,
  required = where === "path"
) => ({
  name,
  in: where,
  required,
  ...(description === undefined ? {} : { description }),
  schema: Schema.toJsonSchemaDocument(schema).schema
})
