// A config around one `provider` section, and the problems parsing one finds: what the tests of each
// provider kind's section (smtp, failover) read.
import { ServerConfig } from "../../src/index.js"

const organizations = [{ id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"], apiKeys: ["mr_test_acme"] }]

/** A config on the local store with `provider` as its provider section. */
export const configFor = (provider: Record<string, unknown>) => ({
  port: 0,
  serviceDomain: "mailroom.test",
  organizations,
  storage: { kind: "local", dir: "storage", signingSecret: "test-secret" },
  provider
})

/** The problems `ServerConfig.parse` names for `input`, none when it parses. */
export const problemsOf = (input: unknown, env: Record<string, string> = {}): ReadonlyArray<string> => {
  try {
    ServerConfig.parse(input, { env })
    return []
  } catch (error) {
    if (!ServerConfig.isServerConfigError(error)) throw error
    return error.problems
  }
}
