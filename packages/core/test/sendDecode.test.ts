// Wire.decode answers the common send (attachments, if any, stored files) without the schema's
// parser: it must accept exactly what the schema accepts, with the same value, and leave every
// refusal to the schema.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Schema } from "effect"
import { Wire } from "../src/index.js"
import { commonSend } from "../src/internal/sendDecode.js"
import { withFields } from "./fixtures.js"

const valid = {
  from: "sender@acme.example",
  from_name: "Acme Billing",
  to: ["alice@example.com", "bob@example.com"],
  cc: ["carol@example.com"],
  bcc: [],
  reply_to: ["support@acme.example"],
  subject: "Your invoice",
  body: { html: "<p>Hello</p>", text: "Hello" }
}

/** A valid request with some fields replaced (or removed, with `undefined`). */
const sendWith = (fields: Record<string, unknown>) => withFields(valid, fields)

const without = (field: string): Record<string, unknown> => {
  const { [field]: _, ...rest } = valid as Record<string, unknown>
  return rest
}

const astral = "😀"
const sparse: Array<string> = ["alice@example.com"]
sparse.length = 2
const stored = { filename: "a.pdf", key: "attachments/org_acme/1-a.pdf" }
const sparseAttachments: Array<unknown> = [stored]
sparseAttachments.length = 2
class Stored {
  readonly filename = stored.filename
  readonly key = stored.key
}
const withSymbol = { ...valid, [Symbol("extra")]: 1 }
const nullPrototype = Object.assign(Object.create(null) as object, valid)
class Request {
  readonly from = valid.from
  readonly to = valid.to
  readonly subject = valid.subject
  readonly body = valid.body
}

/** Valid and invalid sends, each close to the edge of one rule. */
const cases: ReadonlyArray<readonly [string, unknown]> = [
  ["the full request", valid],
  ["only the required fields", { from: valid.from, to: ["a@example.com"], subject: "s", body: { text: "t" } }],
  ["html only", sendWith({ body: { html: "<p>x</p>" } })],
  ["an empty html beside text", sendWith({ body: { html: "", text: "t" } })],
  ["both bodies empty", sendWith({ body: { html: "", text: "" } })],
  ["an empty body", sendWith({ body: {} })],
  ["a body field of another type", sendWith({ body: { text: 1 } })],
  ["an unknown body field", sendWith({ body: { text: "t", markdown: "m" } })],
  ["a body that is an array", sendWith({ body: ["t"] })],
  ["a null body", sendWith({ body: null })],
  ["no body", without("body")],
  ["no from", without("from")],
  ["no to", without("to")],
  ["no subject", without("subject")],
  ["an unknown field", sendWith({ replyTo: ["a@example.com"] })],
  ["a symbol key", withSymbol],
  ["a null-prototype object", nullPrototype],
  ["a class instance", new Request()],
  ["an array", [valid]],
  ["null", null],
  ["a string", JSON.stringify(valid)],
  ["an invalid sender", sendWith({ from: "not an address" })],
  ["a sender with a display name", sendWith({ from: "Acme <billing@acme.example>" })],
  ["a Unicode domain", sendWith({ from: "billing@bücher.example", to: ["anna@例え.jp"] })],
  ["an all-digit top-level domain", sendWith({ to: ["a@example.123"] })],
  [
    "a 255-character address",
    sendWith({ to: [`${"a".repeat(64)}@${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(58)}.com`] })
  ],
  ["no recipient", sendWith({ to: [] })],
  ["1000 recipients", sendWith({ to: Array.from({ length: 1000 }, (_, i) => `r${i}@example.com`) })],
  ["1001 recipients", sendWith({ to: Array.from({ length: 1001 }, (_, i) => `r${i}@example.com`) })],
  ["a recipient of another type", sendWith({ to: ["a@example.com", 1] })],
  ["a sparse recipient list", sendWith({ to: sparse })],
  ["to as a string", sendWith({ to: "a@example.com" })],
  ["cc given as undefined", { ...valid, cc: undefined }],
  ["an empty cc", sendWith({ cc: [] })],
  ["an invalid bcc", sendWith({ bcc: ["bad"] })],
  ["an invalid reply_to", sendWith({ reply_to: ["bad@"] })],
  ["reply_to as null", sendWith({ reply_to: null })],
  ["a line break in the subject", sendWith({ subject: "Hi\r\nBcc: x@example.com" })],
  ["a tab in the subject", sendWith({ subject: "Hi\tthere" })],
  ["a control character in the subject", sendWith({ subject: "Hi\u0007" })],
  ["a C1 control character in the subject", sendWith({ subject: "Hi\u0085" })],
  ["a blank subject", sendWith({ subject: " \t " })],
  ["a subject of 998 characters", sendWith({ subject: "s".repeat(998) })],
  ["a subject of 999 characters", sendWith({ subject: "s".repeat(999) })],
  ["a subject of 998 astral characters", sendWith({ subject: astral.repeat(998) })],
  ["a subject of 999 astral characters", sendWith({ subject: astral.repeat(999) })],
  ["a subject of another type", sendWith({ subject: 1 })],
  ["an empty from_name", sendWith({ from_name: "" })],
  ["a blank from_name", sendWith({ from_name: "  " })],
  ["a from_name of 256 characters", sendWith({ from_name: "n".repeat(256) })],
  ["a from_name of 257 characters", sendWith({ from_name: "n".repeat(257) })],
  ["a line break in from_name", sendWith({ from_name: "Acme\nBcc: x@example.com" })],
  ["a null from_name", sendWith({ from_name: null })],
  ["attachments", sendWith({ attachments: [stored] })],
  ["no attachment", sendWith({ attachments: [] })],
  ["an attachment with no key", sendWith({ attachments: [{ filename: "a.pdf" }] })],
  ["an attachment with a content type", sendWith({ attachments: [{ ...stored, content_type: "application/pdf" }] })],
  [
    "a content type with parameters",
    sendWith({ attachments: [{ ...stored, content_type: 'text/plain; charset="utf-8"' }] })
  ],
  ["a content type that is no MIME type", sendWith({ attachments: [{ ...stored, content_type: "pdf" }] })],
  [
    "a line break in a content type",
    sendWith({ attachments: [{ ...stored, content_type: "text/plain\r\nBcc: x@example.com" }] })
  ],
  [
    "a content type of 256 characters",
    sendWith({ attachments: [{ ...stored, content_type: `text/${"p".repeat(251)}` }] })
  ],
  ["a content type given as undefined", sendWith({ attachments: [{ ...stored, content_type: undefined }] })],
  ["a null content type", sendWith({ attachments: [{ ...stored, content_type: null }] })],
  ["a line break in a file name", sendWith({ attachments: [{ ...stored, filename: "a.pdf\r\nBcc: x" }] })],
  ["a blank file name", sendWith({ attachments: [{ ...stored, filename: " " }] })],
  ["a file name of 255 characters", sendWith({ attachments: [{ ...stored, filename: "f".repeat(255) }] })],
  ["a file name of 256 characters", sendWith({ attachments: [{ ...stored, filename: "f".repeat(256) }] })],
  ["an empty key", sendWith({ attachments: [{ ...stored, key: "" }] })],
  ["a key of 1024 astral characters", sendWith({ attachments: [{ ...stored, key: astral.repeat(1024) }] })],
  ["a key of 1025 characters", sendWith({ attachments: [{ ...stored, key: "k".repeat(1025) }] })],
  ["a key of another type", sendWith({ attachments: [{ ...stored, key: 1 }] })],
  ["an unknown attachment field", sendWith({ attachments: [{ ...stored, name: "a.pdf" }] })],
  ["bytes given in process", sendWith({ attachments: [{ filename: "a.txt", content: "hello" }] })],
  ["a key and bytes", sendWith({ attachments: [{ ...stored, content: "hello" }] })],
  ["a null attachment", sendWith({ attachments: [null] })],
  ["a sparse attachment list", sendWith({ attachments: sparseAttachments })],
  ["attachments as an object", sendWith({ attachments: stored })],
  ["1001 attachments", sendWith({ attachments: Array.from({ length: 1001 }, () => stored) })],
  ["an attachment that is a class instance", sendWith({ attachments: [new Stored()] })]
]

const options = { errors: "all", onExcessProperty: "error" } as const

/** Valid, and left to the schema on purpose: bytes an in-process caller holds, objects JSON never makes. */
const schemaOnly: ReadonlySet<string> = new Set([
  "bytes given in process",
  "a class instance",
  "an attachment that is a class instance"
])

describe("Wire.decode of a send", () => {
  for (const [schemaName, schema] of [
    ["SendEmailRequest", Wire.SendEmailRequest],
    ["InProcessSendRequest", Wire.InProcessSendRequest]
  ] as const) {
    const decode = Wire.decode(schema)
    const bySchema = Schema.decodeUnknownEffect(schema)
    for (const [name, input] of cases) {
      it.effect(`${schemaName}, ${name}: the same answer as the schema`, () =>
        Effect.gen(function* () {
          const expected = yield* Effect.exit(bySchema(input, options))
          const actual = yield* Effect.exit(decode(input))
          assert.strictEqual(Exit.isSuccess(actual), Exit.isSuccess(expected))
          if (Exit.isSuccess(expected) && Exit.isSuccess(actual)) {
            assert.deepStrictEqual(actual.value, expected.value)
            // A copy, as the schema makes: the caller's object may change after the call.
            assert.notStrictEqual(actual.value, input)
          }
          // Every valid send but the few left to the schema takes the one-pass path.
          if (Exit.isSuccess(expected)) assert.strictEqual(commonSend(input) !== undefined, !schemaOnly.has(name))
        })
      )
    }
  }
})
