// The optional fields of `POST /emails` beyond the spec's (issue 26): tags, custom headers and
// one-click unsubscribe, as Schemas with their exact JSON Schema. Wire.ts puts them in SendEmailRequest.
import * as Schema from "effect/Schema"
import {
  headerNamePattern,
  isUnsubscribeUrl,
  maxHeaders,
  maxTags,
  ownedHeaderIssue,
  ownedHeaderPattern
} from "./sendExtras.js"
import { EmailAddress, EmailTag, headerText, rule } from "./wireRules.js"

/** At most ten tags, no name twice. */
export const Tags = Schema.Array(EmailTag).pipe(
  Schema.check(
    rule((a: ReadonlyArray<unknown>) => a.length <= maxTags, `must contain at most ${maxTags} tags`, {
      maxItems: maxTags
    }),
    rule(
      (a: ReadonlyArray<{ readonly name: string }>) => new Set(a.map((t) => t.name)).size === a.length,
      "must not name a tag twice",
      { uniqueItems: true }
    )
  )
)

/**
 * Custom headers, `{"X-Campaign": "spring"}`: a field name of visible ASCII without `:`, a value of
 * header text. The headers mailroom writes itself are refused by name (`ownedHeaderIssue`).
 */
export const Headers = Schema.Record(Schema.String, headerText(998, false)).pipe(
  Schema.check(
    Schema.makeFilter(
      (headers: Readonly<Record<string, string>>) => {
        // Header names ignore case: `X-A` and `x-a` would be written as two headers of one name.
        const first = new Map<string, string>()
        return Object.keys(headers).flatMap((name) => {
          const earlier = first.get(name.toLowerCase())
          if (earlier === undefined) first.set(name.toLowerCase(), name)
          const issue = !headerNamePattern.test(name)
            ? "must be a header name of 1 to 76 visible ASCII characters, no colon"
            : earlier !== undefined
              ? `is the same header as ${earlier} (header names ignore case); give it once`
              : ownedHeaderIssue(name)
          return issue === undefined ? [] : [{ path: [name], issue }]
        })
      },
      {
        toJsonSchema: () => ({
          propertyNames: { pattern: headerNamePattern.source, not: { pattern: ownedHeaderPattern } }
        })
      }
    ),
    rule(
      (h: Readonly<Record<string, string>>) => Object.keys(h).length <= maxHeaders,
      `must contain at most ${maxHeaders} headers`,
      { maxProperties: maxHeaders }
    )
  )
)

/** RFC 8058 one-click unsubscribe: `List-Unsubscribe` with these, and `List-Unsubscribe-Post`. */
export const Unsubscribe = Schema.Struct({
  /** Where a mail client POSTs `List-Unsubscribe=One-Click`: an https URL. */
  url: Schema.String.pipe(
    Schema.check(
      rule(isUnsubscribeUrl, "must be an https URL of at most 2048 characters", {
        format: "uri",
        maxLength: 2048,
        pattern: "^https://"
      })
    )
  ),
  mailto: Schema.optionalKey(EmailAddress)
}).annotate({ identifier: "Unsubscribe" })
