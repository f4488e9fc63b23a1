// Wire.decode answers the common presign without the schema's parser: it must accept exactly what the
// schema accepts, with the same value, and leave every refusal to the schema.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Schema } from "effect"
import { Wire } from "../src/index.js"
import { commonPresign } from "../src/internal/sendDecode.js"

const valid = { filename: "Relevé de compte.pdf", content_type: "application/pdf" }
class Presign {
  readonly filename = "a.pdf"
}
const nullPrototype = Object.assign(Object.create(null) as object, valid)

const cases: ReadonlyArray<readonly [string, unknown]> = [
  ["a file name and a type", valid],
  ["a file name alone", { filename: "a.pdf" }],
  ["every field", { ...valid, org_id: "org_acme", content_length: 1024 }],
  ["a length of 0", { ...valid, content_length: 0 }],
  ["the largest safe length", { ...valid, content_length: Number.MAX_SAFE_INTEGER }],
  ["a length past the safe integers", { ...valid, content_length: Number.MAX_SAFE_INTEGER + 1 }],
  ["a negative length", { ...valid, content_length: -1 }],
  ["a fractional length", { ...valid, content_length: 1.5 }],
  ["a length as a string", { ...valid, content_length: "10" }],
  ["an infinite length", { ...valid, content_length: Number.POSITIVE_INFINITY }],
  ["a length given as undefined", { ...valid, content_length: undefined }],
  ["no file name", { content_type: "application/pdf" }],
  ["an empty file name", { filename: "" }],
  ["a blank file name", { filename: " \t " }],
  ["a file name of 1024 characters", { filename: "f".repeat(1024) }],
  ["a file name of 1025 characters", { filename: "f".repeat(1025) }],
  ["a file name of 1024 astral characters", { filename: "😀".repeat(1024) }],
  ["a file name of another type", { filename: 1 }],
  ["a content type with parameters", { ...valid, content_type: 'text/plain; charset="utf-8"' }],
  ["a content type that is no MIME type", { ...valid, content_type: "pdf" }],
  ["a line break in the content type", { ...valid, content_type: "text/plain\r\nX: y" }],
  ["a null content type", { ...valid, content_type: null }],
  ["a content type given as undefined", { ...valid, content_type: undefined }],
  ["an org_id of another type", { ...valid, org_id: 1 }],
  ["an unknown field", { ...valid, size: 10 }],
  ["a symbol key", { ...valid, [Symbol("extra")]: 1 }],
  ["a null-prototype object", nullPrototype],
  ["a class instance", new Presign()],
  ["an array", [valid]],
  ["null", null],
  ["a string", JSON.stringify(valid)]
]

const options = { errors: "all", onExcessProperty: "error" } as const

/** Valid, and left to the schema on purpose: an object JSON never makes. */
const schemaOnly: ReadonlySet<string> = new Set(["a class instance"])

describe("Wire.decode of a presign", () => {
  const decode = Wire.decode(Wire.PresignRequest)
  const bySchema = Schema.decodeUnknownEffect(Wire.PresignRequest)
  for (const [name, input] of cases) {
    it.effect(`${name}: the same answer as the schema`, () =>
      Effect.gen(function* () {
        const expected = yield* Effect.exit(bySchema(input, options))
        const actual = yield* Effect.exit(decode(input))
        assert.strictEqual(Exit.isSuccess(actual), Exit.isSuccess(expected))
        if (Exit.isSuccess(expected) && Exit.isSuccess(actual)) {
          assert.deepStrictEqual(actual.value, expected.value)
          assert.notStrictEqual(actual.value, input)
        }
        // Every valid presign but those left to the schema takes the one-pass path.
        if (Exit.isSuccess(expected)) assert.strictEqual(commonPresign(input) !== undefined, !schemaOnly.has(name))
      })
    )
  }
})
