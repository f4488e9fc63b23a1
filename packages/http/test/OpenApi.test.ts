import SwaggerParser from "@apidevtools/swagger-parser"
import { assert, describe, it } from "vitest"
import { OpenApi } from "../src/index.js"

describe("OpenApi.document", () => {
  it("is a valid OpenAPI 3.1 document, with the providers' webhooks too", async () => {
    for (const document of [OpenApi.document(), OpenApi.document({ webhooks: ["ses", "postmark"] })]) {
      // validate() dereferences in place; give it a copy.
      const validated = await SwaggerParser.validate(structuredClone(document) as never)
      assert.strictEqual((validated as { openapi: string }).openapi, "3.1.0")
    }
  })

  it("describes the request bodies from the schemas the handler decodes with", async () => {
    const document = (await SwaggerParser.dereference(structuredClone(OpenApi.document()) as never)) as unknown as {
      paths: Record<
        string,
        Record<
          string,
          {
            requestBody?: {
              content: Record<string, { schema: { required?: Array<string>; properties: Record<string, unknown> } }>
            }
          }
        >
      >
    }
    const send = document.paths["/emails"]?.post?.requestBody?.content["application/json"]?.schema
    assert.deepStrictEqual(send?.required?.slice().sort(), ["body", "from", "subject", "to"])
    assert.includeMembers(Object.keys(send?.properties ?? {}), ["from_name", "cc", "bcc", "reply_to", "attachments"])
    const remove = document.paths["/v1/attachments"]?.delete?.requestBody?.content["application/json"]?.schema
    assert.deepStrictEqual(remove?.required, ["attachment_id"])
    const suppress = document.paths["/suppressions"]?.post?.requestBody?.content["application/json"]?.schema
    assert.deepStrictEqual(suppress?.required, ["email"])
    assert.deepStrictEqual(Object.keys(suppress?.properties ?? {}), ["email", "reason", "detail"])
  })

  it("names each operation's error body shape as the spec does", () => {
    const document = OpenApi.document() as {
      paths: Record<
        string,
        Record<string, { responses: Record<string, { content?: Record<string, { schema: { $ref: string } }> }> }>
      >
    }
    const shape = (path: string, method: string, status: string) =>
      document.paths[path]?.[method]?.responses[status]?.content?.["application/json"]?.schema.$ref.split("/").at(-1)
    assert.strictEqual(shape("/emails", "post", "400"), "errorsBody")
    assert.strictEqual(shape("/emails", "post", "401"), "messageBody")
    assert.strictEqual(shape("/emails", "post", "422"), "errorBody")
    assert.strictEqual(shape("/attachments/download", "get", "404"), "messageBody")
    assert.strictEqual(shape("/attachments/presign", "post", "403"), "errorBody")
    assert.strictEqual(shape("/v1/attachments/presign", "post", "400"), "messageBody")
    assert.strictEqual(shape("/v1/attachments", "delete", "404"), "messageBody")
    // The records: 400 {errors} on the /emails routes, {error} on the suppression routes, 401 {message}.
    assert.strictEqual(shape("/emails", "get", "400"), "errorsBody")
    assert.strictEqual(shape("/emails/{id}", "get", "400"), "errorsBody")
    assert.strictEqual(shape("/emails/{id}", "get", "404"), "errorBody")
    assert.strictEqual(shape("/suppressions", "post", "400"), "errorBody")
    assert.strictEqual(shape("/suppressions/{email}", "delete", "404"), "errorBody")
    for (const [path, method] of [
      ["/emails", "get"],
      ["/emails/{id}", "get"],
      ["/suppressions", "get"],
      ["/suppressions", "post"],
      ["/suppressions/{email}", "delete"]
    ] as const) {
      assert.strictEqual(shape(path, method, "401"), "messageBody", `${method} ${path}`)
      assert.strictEqual(shape(path, method, "500"), "errorBody", `${method} ${path}`)
    }
  })

  it("answers the records with the schemas core's types are, and states the integer limit", () => {
    const document = OpenApi.document() as {
      components: { schemas: Record<string, { properties?: Record<string, unknown>; required?: Array<string> }> }
      paths: Record<string, Record<string, { parameters: Array<{ name: string; in: string; schema: unknown }> }>>
    }
    const { schemas } = document.components
    assert.deepStrictEqual(schemas.EmailList?.required, ["data", "next_cursor"])
    assert.includeMembers(Object.keys(schemas.EmailDetail?.properties ?? {}), ["recipients", "events", "last_event"])
    assert.deepStrictEqual(schemas.Suppression?.required, ["email", "reason", "created_at", "message_id", "detail"])
    const parameters = document.paths["/emails"]?.get?.parameters ?? []
    assert.deepStrictEqual(
      parameters.map((p) => p.name),
      ["limit", "cursor", "status", "to", "tag", "since", "until"]
    )
    assert.deepStrictEqual(parameters[0]?.schema, { type: "integer", minimum: 1, maximum: 100, default: 20 })
    assert.deepStrictEqual(
      document.paths["/suppressions/{email}"]?.delete?.parameters.map((p) => [p.name, p.in]),
      [["email", "path"]]
    )
  })
})
