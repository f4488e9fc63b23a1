// The building blocks of the wire schemas: a check paired with its exact JSON Schema, and the rules
// several topics share (addresses, tags, header text). Wire.ts and the schemas of the message records use these.
import * as Schema from "effect/Schema"
import { isEmailAddress } from "./address.js"
import { tagPattern } from "./sendExtras.js"
import { atMostCharacters, blank, controlExceptTab, controlRange, lineBreak } from "./text.js"

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

const emailJsonSchema = {
  format: "email",
  maxLength: 254,
  // The server's rule in ASCII: a dot-atom of at most 64 characters, at least two DNS labels and
  // a top-level domain that is not all digits. The server also takes Unicode domains, which
  // `format: email` does not; give them punycoded to pass a client-side validator.
  pattern: `^(?=[^@]{1,64}@)${atext}(?:\\.${atext})*@(?:${label}\\.)+(?![0-9]+$)${label}$`
}

/** `Name <address>` (the name quoted or not): the form of a From header, where the API takes the address alone. */
const withDisplayName = /^[^<>]*<([^<>\s]+)>\s*$/u

/** An addr-spec, or else why not; `named` says what to do with an address given with a display name. */
const address = (named: (address: string) => string) =>
  Schema.String.pipe(
    Schema.check(
      Schema.makeFilter(
        (value: string) => {
          if (isEmailAddress(value)) return undefined
          const inside = withDisplayName.exec(value)?.[1]
          return inside !== undefined && isEmailAddress(inside) ? named(inside) : "must be a valid email address"
        },
        { toJsonSchema: () => emailJsonSchema }
      )
    )
  ).annotate({ description: "An email address (addr-spec, no display name)" })

/** An addr-spec email address: at most 254 characters, internationalised domains accepted. */
export const EmailAddress = address((inside) => `must be the address alone (${inside}), without a display name`)

/** The sender's address: an `EmailAddress`, whose display name, when one is given, belongs in `from_name`. */
export const SenderAddress = address(
  (inside) => `must be the address alone (${inside}): give the display name in from_name`
)

export const tagTextMessage = "must be 1 to 256 ASCII letters, digits, _ or -"

const tagText = rule((s: string) => tagPattern.test(s), tagTextMessage, { pattern: tagPattern.source })

/** A tag of a message: stored with its record, passed to the vendor, carried on its events. */
export const EmailTag = Schema.Struct({
  name: Schema.String.pipe(Schema.check(tagText)),
  value: Schema.String.pipe(Schema.check(tagText))
}).annotate({ identifier: "EmailTag" })

/**
 * Text that ends up in a mail header: a line break there would let the caller write headers. One
 * pattern says everything the checks do (JSON Schema has one `pattern` per schema); String#trim
 * removes exactly what \s matches, so "not blank" is the lookahead for a \S.
 */
export const headerText = (maxLength: number, nonEmpty: boolean) =>
  Schema.String.pipe(
    Schema.check(
      rule((s: string) => !lineBreak.test(s), "must not contain line breaks", {}, true),
      rule(
        (s: string) => !controlExceptTab.test(s),
        "must not contain control characters",
        nonEmpty
          ? { minLength: 1, maxLength, pattern: `^(?=[\\s\\S]*\\S)[^${controlRange}]*$` }
          : { maxLength, pattern: `^[^${controlRange}]*$` }
      ),
      rule((s: string) => atMostCharacters(s, maxLength), `must be at most ${maxLength} characters`, {}),
      ...(nonEmpty ? [rule((s: string) => !blank(s), "must not be empty", {})] : [])
    )
  )
