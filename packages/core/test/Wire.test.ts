import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { MailroomError, Wire } from "../src/index.js"
import { withFields } from "./fixtures.js"

const decodeSend = Wire.decode(Wire.SendEmailRequest)
const decodePresign = Wire.decode(Wire.PresignRequest)
const decodeDeleteById = Wire.decode(Wire.DeleteByIdRequest)

/** The `errors` a user gets back for a request the decoder refuses. */
const errorsOf = <A>(decoded: Effect.Effect<A, MailroomError.ValidationError>) =>
  Effect.map(Effect.flip(decoded), (error) => error.errors)

const valid = {
  from: "sender@acme.example",
  to: ["alice@example.com"],
  subject: "Your invoice",
  body: { text: "Hello" }
}

/** A valid request with some fields replaced (or removed, with `undefined`). */
const sendWith = (fields: Record<string, unknown>) => withFields(valid, fields)

const attachment = { filename: "invoice.pdf", key: "attachments/org_acme/1700000000000-invoice.pdf" }

// 64 + 1 + 189 = 254 characters, every label within the DNS limit of 63.
const address254 = `${"a".repeat(64)}@${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(57)}.com`
const address255 = `${"a".repeat(64)}@${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(58)}.com`

describe("Wire.SendEmailRequest", () => {
  it.effect("a list over 1000 items or an object over 64 fields is one problem, not one per element", () =>
    Effect.gen(function* () {
      const bad = Array.from({ length: 1001 }, () => 1)
      assert.deepStrictEqual(yield* errorsOf(decodeSend(sendWith({ to: bad }))), [
        "to: must contain at most 1000 items"
      ])
      const fields = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`f${i}`, 1]))
      assert.deepStrictEqual(yield* errorsOf(decodeSend(sendWith({ body: fields }))), [
        "body: has 65 fields, more than any object of the API"
      ])
      const many = Array.from({ length: 1000 }, (_, i) => `r${i}@example.com`)
      assert.deepStrictEqual((yield* decodeSend(sendWith({ to: many }))).to, many)
    })
  )

  it.effect("a valid request decodes to the same value", () =>
    Effect.gen(function* () {
      const request = {
        from: "sender@acme.example",
        from_name: "Acme Billing",
        to: ["alice@example.com", "bob@example.com"],
        cc: ["carol@example.com"],
        bcc: [],
        reply_to: ["support@acme.example"],
        subject: "Your invoice",
        body: { html: "<p>Hello</p>", text: "Hello" },
        attachments: [{ ...attachment, content_type: "application/pdf" }]
      }
      assert.deepStrictEqual(yield* decodeSend(request), request)
    })
  )

  it.effect("a refusal is a ValidationError whose message lists the problems", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(decodeSend(sendWith({ to: [] })))
      assert.instanceOf(error, MailroomError.ValidationError)
      assert.isTrue(MailroomError.isMailroomError(error))
      assert.strictEqual(error.message, "to: must contain at least 1 recipient")
    })
  )

  it.effect("every problem is reported at once, one message per problem", () =>
    Effect.gen(function* () {
      const errors = yield* errorsOf(
        decodeSend({
          from: "Alice <alice@example.com>",
          to: ["ok@example.com", "not-an-address"],
          subject: "Hi\r\nBcc: victim@example.com",
          body: {},
          attachments: [{ filename: "", key: attachment.key }],
          replyTo: ["support@acme.example"]
        })
      )
      // The order of the messages is not part of the contract; their text and number are.
      assert.deepStrictEqual([...errors].sort(), [
        "attachments[0].filename: must not be empty",
        "body: must contain html or text",
        "from: must be the address alone (alice@example.com): give the display name in from_name",
        "replyTo: is not a known field",
        "subject: must not contain line breaks",
        "to[1]: must be a valid email address"
      ])
    })
  )

  it.effect("every missing required field is named", () =>
    Effect.gen(function* () {
      assert.deepStrictEqual([...(yield* errorsOf(decodeSend({})))].sort(), [
        "body: is required",
        "from: is required",
        "subject: is required",
        "to: is required"
      ])
      assert.deepStrictEqual(yield* errorsOf(decodeSend(sendWith({ from: undefined }))), ["from: is required"])
      assert.deepStrictEqual(yield* errorsOf(decodeSend(sendWith({ attachments: [{ key: attachment.key }] }))), [
        "attachments[0].filename: is required"
      ])
    })
  )

  it.effect("to must contain at least 1 recipient", () =>
    Effect.gen(function* () {
      assert.deepStrictEqual(yield* errorsOf(decodeSend(sendWith({ to: [] }))), [
        "to: must contain at least 1 recipient"
      ])
      // cc, bcc and reply_to may be empty.
      const request = sendWith({ cc: [], bcc: [], reply_to: [] })
      assert.deepStrictEqual(yield* decodeSend(request), request)
    })
  )

  describe("email addresses", () => {
    it.effect("internationalised domains are accepted, and kept as given", () =>
      Effect.gen(function* () {
        const request = sendWith({ from: "sender@bücher.example", to: ["user@bücher.example", "user@例え.jp"] })
        assert.deepStrictEqual(yield* decodeSend(request), request)
      })
    )

    it.effect("a 254-character address is accepted and a 255-character one refused", () =>
      Effect.gen(function* () {
        assert.strictEqual(address254.length, 254)
        assert.strictEqual(address255.length, 255)
        const request = sendWith({ to: [address254] })
        assert.deepStrictEqual(yield* decodeSend(request), request)
        assert.deepStrictEqual(yield* errorsOf(decodeSend(sendWith({ to: [address255] }))), [
          "to[0]: must be a valid email address"
        ])
      })
    )

    it.effect("a local part of 64 characters is accepted and one of 65 refused", () =>
      Effect.gen(function* () {
        const request = sendWith({ to: [`${"a".repeat(64)}@example.com`] })
        assert.deepStrictEqual(yield* decodeSend(request), request)
        assert.deepStrictEqual(yield* errorsOf(decodeSend(sendWith({ to: [`${"a".repeat(65)}@example.com`] }))), [
          "to[0]: must be a valid email address"
        ])
      })
    )

    const refused: ReadonlyArray<readonly [string, string]> = [
      ["no @", "alice.example.com"],
      ["a display name around no address", "Alice <alice>"],
      ["an empty local part", "@example.com"],
      ["an empty domain", "alice@"],
      ["a domain without a dot", "alice@localhost"],
      ["a domain ending in a dot", "alice@example."],
      ["an empty domain label", "alice@example..com"],
      ["an IP-literal domain", "alice@[127.0.0.1]"],
      ["an IPv4 domain", "alice@127.0.0.1"],
      ["a leading dot in the local part", ".alice@example.com"],
      ["a trailing dot in the local part", "alice.@example.com"],
      ["two dots in a row in the local part", "al..ice@example.com"],
      ["a space", "al ice@example.com"],
      ["a NUL character", "al\u0000ice@example.com"],
      ["a DEL character", "alice@example.com\u007f"],
      ["a control character in the domain", "alice@exa\u0007mple.com"],
      ["a line break", "alice@example.com\r\nBcc: victim@example.com"]
    ]
    for (const [problem, address] of refused) {
      it.effect(`an address with ${problem} is refused`, () =>
        Effect.gen(function* () {
          assert.deepStrictEqual(yield* errorsOf(decodeSend(sendWith({ to: ["ok@example.com", address] }))), [
            "to[1]: must be a valid email address"
          ])
        })
      )
    }

    it.effect("an address with a display name is refused, pointing the sender's name to from_name", () =>
      Effect.gen(function* () {
        for (const named of [
          "Acme <billing@acme.example>",
          '"Acme, Inc." <billing@acme.example>',
          "<billing@acme.example>"
        ]) {
          const errors = yield* errorsOf(decodeSend(sendWith({ from: named, to: ["ok@example.com", named] })))
          assert.deepStrictEqual(errors, [
            "from: must be the address alone (billing@acme.example): give the display name in from_name",
            "to[1]: must be the address alone (billing@acme.example), without a display name"
          ])
        }
      })
    )

    it.effect("every address field is checked, at its own path", () =>
      Effect.gen(function* () {
        const bad = "alice@example.com\r\nBcc: victim@example.com"
        const errors = yield* errorsOf(
          decodeSend(sendWith({ from: bad, to: [bad], cc: [bad], bcc: [bad], reply_to: [bad] }))
        )
        assert.deepStrictEqual([...errors].sort(), [
          "bcc[0]: must be a valid email address",
          "cc[0]: must be a valid email address",
          "from: must be a valid email address",
          "reply_to[0]: must be a valid email address",
          "to[0]: must be a valid email address"
        ])
      })
    )
  })

  describe("header values never contain line breaks", () => {
    const injection = "\r\nBcc: victim@example.com"
    const cases: ReadonlyArray<readonly [string, Record<string, unknown>, string]> = [
      ["subject (CR LF header injection)", { subject: `Hi${injection}` }, "subject"],
      ["subject (LF only)", { subject: "Hi\nthere" }, "subject"],
      ["subject (CR only)", { subject: "Hi\rthere" }, "subject"],
      ["from_name", { from_name: `Acme${injection}` }, "from_name"],
      [
        "attachment filename",
        { attachments: [attachment, { ...attachment, filename: `a.pdf${injection}` }] },
        "attachments[1].filename"
      ],
      [
        "attachment content_type",
        { attachments: [{ ...attachment, content_type: `application/pdf${injection}` }] },
        "attachments[0].content_type"
      ]
    ]
    for (const [field, fields, path] of cases) {
      it.effect(`a line break in ${field} is refused`, () =>
        Effect.gen(function* () {
          assert.deepStrictEqual(yield* errorsOf(decodeSend(sendWith(fields))), [
            `${path}: must not contain line breaks`
          ])
        })
      )
    }

    it.effect("other control characters in a header value are refused; a tab is not", () =>
      Effect.gen(function* () {
        assert.deepStrictEqual(yield* errorsOf(decodeSend(sendWith({ subject: "Hi\u0007there" }))), [
          "subject: must not contain control characters"
        ])
        const request = sendWith({ subject: "Hi\tthere" })
        assert.deepStrictEqual(yield* decodeSend(request), request)
      })
    )
  })

  describe("unknown fields and wrong types", () => {
    it.effect("unknown fields are refused at every level", () =>
      Effect.gen(function* () {
        const errors = yield* errorsOf(
          decodeSend(
            sendWith({
              replyTo: ["support@acme.example"],
              body: { text: "Hello", markdown: "*Hello*" },
              attachments: [{ ...attachment, size: 10 }]
            })
          )
        )
        assert.deepStrictEqual([...errors].sort(), [
          "attachments[0].size: is not a known field",
          "body.markdown: is not a known field",
          "replyTo: is not a known field"
        ])
      })
    )

    const cases: ReadonlyArray<readonly [string, Record<string, unknown>, string]> = [
      ["to is a string", { to: "alice@example.com" }, "to: must be an array"],
      ["a recipient is a number", { to: [42] }, "to[0]: must be a string"],
      ["subject is a number", { subject: 1 }, "subject: must be a string"],
      ["from_name is a number", { from_name: 1 }, "from_name: must be a string"],
      ["body is a string", { body: "Hello" }, "body: must be an object"],
      ["body.html is a number", { body: { html: 1 } }, "body.html: must be a string"],
      ["attachments is an object", { attachments: attachment }, "attachments: must be an array"]
    ]
    for (const [problem, fields, message] of cases) {
      it.effect(`${problem} is refused`, () =>
        Effect.gen(function* () {
          assert.deepStrictEqual(yield* errorsOf(decodeSend(sendWith(fields))), [message])
        })
      )
    }

    it.effect("a body that is not an object is refused as a whole", () =>
      Effect.gen(function* () {
        for (const input of [null, "hello", 42, [valid]]) {
          assert.deepStrictEqual(yield* errorsOf(decodeSend(input)), ["request: must be an object"])
        }
      })
    )
  })

  describe("body", () => {
    for (const body of [{ html: "<p>Hello</p>" }, { text: "Hello" }, { html: "<p>Hello</p>", text: "Hello" }]) {
      it.effect(`${Object.keys(body).join(" and ")} is accepted`, () =>
        Effect.gen(function* () {
          const request = sendWith({ body })
          assert.deepStrictEqual(yield* decodeSend(request), request)
        })
      )
    }

    for (const body of [{}, { html: "", text: "" }, { html: "" }]) {
      it.effect(`${JSON.stringify(body)} is refused`, () =>
        Effect.gen(function* () {
          assert.deepStrictEqual(yield* errorsOf(decodeSend(sendWith({ body }))), ["body: must contain html or text"])
        })
      )
    }
  })

  it.effect("subject and attachment filename must not be empty", () =>
    Effect.gen(function* () {
      assert.deepStrictEqual(yield* errorsOf(decodeSend(sendWith({ subject: "  " }))), ["subject: must not be empty"])
      assert.deepStrictEqual(
        yield* errorsOf(decodeSend(sendWith({ attachments: [{ ...attachment, filename: "" }] }))),
        ["attachments[0].filename: must not be empty"]
      )
    })
  )
})

describe("Wire.PresignRequest", () => {
  it.effect("a valid request decodes to the same value", () =>
    Effect.gen(function* () {
      const request = {
        filename: "invoice.pdf",
        content_type: "application/pdf",
        org_id: "org_acme",
        content_length: 1024
      }
      assert.deepStrictEqual(yield* decodePresign(request), request)
      assert.deepStrictEqual(yield* decodePresign({ filename: "invoice.pdf" }), { filename: "invoice.pdf" })
    })
  )

  it.effect("filename is required and must not be empty", () =>
    Effect.gen(function* () {
      assert.deepStrictEqual(yield* errorsOf(decodePresign({})), ["filename: is required"])
      assert.deepStrictEqual(yield* errorsOf(decodePresign({ filename: "" })), ["filename: must not be empty"])
      assert.deepStrictEqual(yield* errorsOf(decodePresign({ filename: "   " })), ["filename: must not be empty"])
    })
  )

  it.effect("content_type must be a MIME type, parameters allowed", () =>
    Effect.gen(function* () {
      const request = { filename: "notes.txt", content_type: "text/plain; charset=utf-8" }
      assert.deepStrictEqual(yield* decodePresign(request), request)
      assert.deepStrictEqual(yield* errorsOf(decodePresign({ filename: "a.pdf", content_type: "pdf" })), [
        "content_type: must be a MIME type such as application/pdf"
      ])
      assert.deepStrictEqual(
        yield* errorsOf(decodePresign({ filename: "a.pdf", content_type: "application/pdf\r\nX: 1" })),
        ["content_type: must not contain line breaks"]
      )
    })
  )

  it.effect("content_length must be a non-negative whole number", () =>
    Effect.gen(function* () {
      assert.deepStrictEqual(yield* decodePresign({ filename: "empty.txt", content_length: 0 }), {
        filename: "empty.txt",
        content_length: 0
      })
      for (const content_length of [1.5, -1]) {
        assert.deepStrictEqual(yield* errorsOf(decodePresign({ filename: "a.pdf", content_length })), [
          "content_length: must be a non-negative whole number of bytes"
        ])
      }
      assert.deepStrictEqual(yield* errorsOf(decodePresign({ filename: "a.pdf", content_length: "10" })), [
        "content_length: must be a number"
      ])
    })
  )

  it.effect("unknown fields are refused", () =>
    Effect.gen(function* () {
      assert.deepStrictEqual(yield* errorsOf(decodePresign({ filename: "a.pdf", contentType: "application/pdf" })), [
        "contentType: is not a known field"
      ])
    })
  )
})

describe("Wire.DeleteByIdRequest", () => {
  it.effect("att_ followed by hexadecimal characters is accepted", () =>
    Effect.gen(function* () {
      const request = { attachment_id: "att_0123456789abcdef" }
      assert.deepStrictEqual(yield* decodeDeleteById(request), request)
    })
  )

  for (const attachment_id of [
    "0123456789abcdef",
    "att_",
    "att_xyz",
    "att_12 34",
    "ATT_0123",
    `att_${"a".repeat(459)}`
  ]) {
    it.effect(`${JSON.stringify(attachment_id)} is refused`, () =>
      Effect.gen(function* () {
        assert.deepStrictEqual(yield* errorsOf(decodeDeleteById({ attachment_id })), [
          "attachment_id: must be att_ followed by 1 to 458 lower-case hexadecimal characters"
        ])
      })
    )
  }

  it.effect("attachment_id is required", () =>
    Effect.gen(function* () {
      assert.deepStrictEqual(yield* errorsOf(decodeDeleteById({})), ["attachment_id: is required"])
    })
  )
})
