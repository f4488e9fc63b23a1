// The config file's `viewer` section: whether the outbox viewer is served, and the admin token that
// opens it when the server listens beyond loopback.
import { createHash } from "node:crypto"
import * as Schema from "effect/Schema"
import { nonEmpty } from "../decode.js"
import { hashedSecretProblems } from "../secrets.js"

export const Viewer = Schema.Struct({
  enabled: Schema.optionalKey(Schema.Boolean),
  token: Schema.optionalKey(
    Schema.Union([nonEmpty("a token"), Schema.Struct({ env: nonEmpty("an environment variable name") })])
  )
})

/** The `viewer` section as the server uses it. */
export interface ViewerConfig {
  /** False only when the file says `"enabled": false`, or the provider is not the outbox. */
  readonly enabled: boolean
  /** The admin token, plain or `sha256:<hex>`, with `{"env"}` read. */
  readonly token: string | undefined
}

/** Checks what the schema cannot: an environment variable that is not set, a token that is an API credential. */
export const viewerSection = (
  section: typeof Viewer.Type | undefined,
  providerKind: string,
  credentials: ReadonlyArray<string>,
  env: Readonly<Record<string, string | undefined>>
): { readonly value: ViewerConfig; readonly problems: ReadonlyArray<string> } => {
  const problems: Array<string> = []
  let token: string | undefined
  if (typeof section?.token === "string") token = section.token
  else if (section?.token !== undefined) {
    token = env[section.token.env]
    if (token === undefined || token.trim() === "") {
      problems.push(`viewer.token: the environment variable ${section.token.env} is not set`)
      token = undefined
    }
  }
  const malformed = hashedSecretProblems(token, "viewer.token")
  if (malformed.length > 0) {
    problems.push(...malformed)
    token = undefined
  }
  // The viewer shows every organisation's mail: one organisation's key must never open it.
  const digest = (value: string) =>
    value.startsWith("sha256:") ? value.slice(7).toLowerCase() : createHash("sha256").update(value).digest("hex")
  if (token !== undefined && credentials.some((credential) => digest(credential) === digest(token))) {
    problems.push("viewer.token: is also an organisation's API key or access token; choose a token of its own")
  }
  if (section?.enabled === true && providerKind !== "outbox") {
    problems.push(`viewer.enabled: the viewer shows the outbox's messages, and provider.kind is ${providerKind}`)
  }
  return { value: { enabled: section?.enabled !== false && providerKind === "outbox", token }, problems }
}
