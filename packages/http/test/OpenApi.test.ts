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
  })
})
