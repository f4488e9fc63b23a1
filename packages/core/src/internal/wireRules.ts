// The building blocks of the wire schemas: a check paired with its exact JSON Schema, and the rules
// several topics share (addresses, tags). Wire.ts and the schemas of the message records use these.
import { Schema } from "effect"
import { isEmailAddress } from "./address.js"
import { tagPattern } from "./sendExtras.js"

export const fails =
  <T>(test: (value: T) => boolean, message: string) =>
  (value: T) =>
    test(value) ? undefined : message

/**
 * A check and its exact JSON Schema: the OpenAPI document is generated from these schemas and must
 * refuse what the decoder refuses, and accept what it accepts.
 */
export const rule = <T>(
  test: (value: T) => boolean,
  message: string,
  jsonSchema: Record<string, unknown>,
  abort = false
) => Schema.makeFilter(fails(test, message), { toJsonSchema: () => jsonSchema }, abort)

const atext = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
const label = "[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"

/** An addr-spec email address: at most 254 characters, internationalised domains accepted. */
export const EmailAddress = Schema.String.pipe(
  Schema.check(
    rule(isEmailAddress, "must be a valid email address", {
      format: "email",
      maxLength: 254,
      // The server's rule in ASCII: a dot-atom of at most 64 characters, at least two DNS labels and
      // a top-level domain that is not all digits. The server also takes Unicode domains, which
      // `format: email` does not; give them punycoded to pass a client-side validator.
      pattern: `^(?=[^@]{1,64}@)${atext}(?:\\.${atext})*@(?:${label}\\.)+(?![0-9]+$)${label}$`
    })
  )
).annotate({ description: "An email address (addr-spec, no display name)" })

export const tagTextMessage = "must be 1 to 256 ASCII letters, digits, _ or -"

const tagText = rule((s: string) => tagPattern.test(s), tagTextMessage, { pattern: tagPattern.source })

/** A tag of a message: stored with its record, passed to the vendor, carried on its events. */
export const EmailTag = Schema.Struct({
  name: Schema.String.pipe(Schema.check(tagText)),
  value: Schema.String.pipe(Schema.check(tagText))
}).annotate({ identifier: "EmailTag" })
