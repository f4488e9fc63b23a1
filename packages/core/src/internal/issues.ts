// Turns a Schema issue tree into the wire's validation messages: one string per problem,
// "<path>: <what is wrong>", with array indices in brackets (`to[1]: must be a valid email address`).
import * as SchemaIssue from "effect/SchemaIssue"

const expectedBy: Record<string, string> = {
  String: "must be a string",
  Number: "must be a number",
  Boolean: "must be a boolean",
  Arrays: "must be an array",
  Objects: "must be an object",
  Literal: "has an unsupported value",
  Union: "has an unsupported value"
}

const leafHook: SchemaIssue.LeafHook = (issue) => {
  switch (issue._tag) {
    case "MissingKey":
      return "is required"
    case "UnexpectedKey":
      return "is not a known field"
    case "InvalidType":
      return expectedBy[issue.ast._tag] ?? "has the wrong type"
    default:
      return SchemaIssue.defaultLeafHook(issue)
  }
}

const formatter = SchemaIssue.makeFormatterStandardSchemaV1({ leafHook })

/** `["attachments", 0, "key"]` -> `attachments[0].key`. */
export const formatPath = (path: ReadonlyArray<PropertyKey>): string => {
  let out = ""
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`
    else out += out === "" ? String(segment) : `.${String(segment)}`
  }
  return out
}

export const issueMessages = (issue: SchemaIssue.Issue, root = "request"): ReadonlyArray<string> =>
  formatter(issue).issues.map(({ path, message }) => {
    const keys = (path ?? []).map((p) => (typeof p === "object" && p !== null ? p.key : p))
    return `${keys.length === 0 ? root : formatPath(keys)}: ${message}`
  })
