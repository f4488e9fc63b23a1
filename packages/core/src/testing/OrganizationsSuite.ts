// The conformance suite every Organizations source runs against its real store: credentials by kind,
// nothing repeated of a refused one, the sender domains the send path checks, one organisation at a time.
import { createHash, randomUUID } from "node:crypto"
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import { isNotFound, isUnauthorized } from "../MailroomError.js"
import { type Credential, Organizations, type Principal } from "../Organizations.js"

/** One organisation as the suite sets it up: plain credentials, domains in ASCII lower case. */
export interface OrganizationsFixture {
  readonly id: string
  readonly slug: string
  readonly verifiedDomains: ReadonlyArray<string>
  readonly apiKeys: ReadonlyArray<string>
  readonly accessTokens: ReadonlyArray<string>
}

export interface OrganizationsSuiteOptions {
  /**
   * Builds the source holding exactly these organisations under `serviceDomain` (inserted into the
   * database, or configured). Ids, slugs and credentials are fresh per run, so a shared database
   * may keep those of earlier runs.
   */
  readonly layer: (fixture: {
    readonly serviceDomain: string
    readonly organizations: ReadonlyArray<OrganizationsFixture>
  }) => Layer.Layer<Organizations, unknown>
}

export const OrganizationsSuite = (name: string, options: OrganizationsSuiteOptions): void => {
  const run = randomUUID().slice(0, 8)
  const serviceDomain = "mailroom.test"
  const acme: OrganizationsFixture = {
    id: `org_${run}_acme`,
    slug: `acme-${run}`,
    verifiedDomains: ["acme.example", "xn--bcher-kva.example"],
    apiKeys: [`mr_test_${run}_acme`],
    accessTokens: [`tok_${run}_acme`]
  }
  const globex: OrganizationsFixture = {
    id: `org_${run}_globex`,
    slug: `globex-${run}`,
    verifiedDomains: [],
    apiKeys: [`mr_test_${run}_globex`, `mr_test_${run}_globex_2`],
    accessTokens: []
  }
  const principal = (org: OrganizationsFixture): Principal => ({ orgId: org.id, slug: org.slug })
  const apiKey = (value: string): Credential => ({ kind: "apiKey", value })
  const accessToken = (value: string): Credential => ({ kind: "accessToken", value })
  const authenticate = (credential: Credential) => Effect.flatMap(Organizations, (o) => o.authenticate(credential))
  const refused = (credential: Credential) =>
    Effect.flatMap(Effect.flip(authenticate(credential)), (error) =>
      isUnauthorized(error) ? Effect.succeed(error) : Effect.die(`expected Unauthorized, got ${String(error)}`)
    )

  describe(`OrganizationsSuite: ${name}`, () => {
    layer(options.layer({ serviceDomain, organizations: [acme, globex] }), {
      timeout: 60_000,
      excludeTestServices: true
    })((it) => {
      it.effect("an API key and an access token authenticate as their organisation", () =>
        Effect.gen(function* () {
          assert.deepStrictEqual(yield* authenticate(apiKey(`mr_test_${run}_acme`)), principal(acme))
          assert.deepStrictEqual(yield* authenticate(accessToken(`tok_${run}_acme`)), principal(acme))
          for (const key of globex.apiKeys) assert.deepStrictEqual(yield* authenticate(apiKey(key)), principal(globex))
        })
      )

      it.effect("a credential authenticates only as its own kind", () =>
        Effect.gen(function* () {
          yield* refused(accessToken(`mr_test_${run}_acme`))
          yield* refused(apiKey(`tok_${run}_acme`))
        })
      )

      it.effect("an unknown, empty, padded or hashed credential is Unauthorized, and never repeated", () =>
        Effect.gen(function* () {
          const digest = createHash("sha256").update(`mr_test_${run}_acme`).digest("hex")
          for (const value of [`mr_test_${run}_unknown`, "", ` mr_test_${run}_acme`, digest, `sha256:${digest}`]) {
            const error = yield* refused(apiKey(value))
            assert.isNotEmpty(error.message)
            if (value !== "") {
              assert.notInclude(error.message, value)
              assert.notInclude(JSON.stringify(error), value)
            }
          }
          yield* refused(accessToken(""))
        })
      )

      it.effect("an organisation's sender domains are its own and {slug}.{serviceDomain}, in ASCII lower case", () =>
        Effect.gen(function* () {
          const organizations = yield* Organizations
          assert.deepStrictEqual([...(yield* organizations.verifiedDomains(principal(acme)))].sort(), [
            `acme-${run}.${serviceDomain}`,
            "acme.example",
            "xn--bcher-kva.example"
          ])
          assert.deepStrictEqual(yield* organizations.verifiedDomains(principal(globex)), [
            `globex-${run}.${serviceDomain}`
          ])
          const nobody = { orgId: `org_${run}_nobody`, slug: `nobody-${run}` }
          assert.deepStrictEqual(yield* organizations.verifiedDomains(nobody), [])
        })
      )

      it.effect("find answers an organisation's principal, and NotFound for an id no one has", () =>
        Effect.gen(function* () {
          const organizations = yield* Organizations
          assert.deepStrictEqual(yield* organizations.find(acme.id), principal(acme))
          assert.deepStrictEqual(yield* organizations.find(globex.id), principal(globex))
          const missing = yield* Effect.flip(organizations.find(`org_${run}_nobody`))
          assert.isTrue(isNotFound(missing), String(missing))
        })
      )
    })
  })
}
