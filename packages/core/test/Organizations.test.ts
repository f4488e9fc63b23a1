import { createHash } from "node:crypto"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { MailroomError, Organizations } from "../src/index.js"
import { OrganizationsSuite } from "../src/testing/index.js"

const sha256Hex = (value: string) => createHash("sha256").update(value, "utf8").digest("hex")

OrganizationsSuite("static", { layer: Organizations.layerStatic })

// The same, each credential configured as its hash: the configuration need not hold the keys.
OrganizationsSuite("static, credentials as sha256:<hex>", {
  layer: ({ serviceDomain, organizations }) =>
    Organizations.layerStatic({
      serviceDomain,
      organizations: organizations.map((org) => ({
        ...org,
        apiKeys: org.apiKeys.map((key) => `sha256:${sha256Hex(key)}`),
        accessTokens: org.accessTokens.map((token) => `sha256:${sha256Hex(token)}`)
      }))
    })
})

const acme = { orgId: "org_acme", slug: "acme" }
const globex = { orgId: "org-globex", slug: "globex" }

const organizations = Organizations.makeStatic({
  serviceDomain: "mailroom.test",
  organizations: [
    {
      id: "org_acme",
      slug: "acme",
      verifiedDomains: ["Acme.Example", "bücher.example"],
      apiKeys: ["mr_test_acme"],
      accessTokens: ["tok_acme"]
    },
    {
      id: "org-globex",
      slug: "globex",
      // Configured as hashes: the configuration never holds the keys themselves.
      apiKeys: [`sha256:${sha256Hex("mr_test_globex")}`],
      accessTokens: [`sha256:${sha256Hex("tok_globex")}`]
    }
  ]
})

const apiKey = (value: string): Organizations.Credential => ({ kind: "apiKey", value })
const accessToken = (value: string): Organizations.Credential => ({ kind: "accessToken", value })

/** The message `makeStatic` throws for a configuration, or a failure when it does not throw. */
const configurationError = (organizations: ReadonlyArray<Organizations.OrganizationConfig>): string => {
  try {
    Organizations.makeStatic({ serviceDomain: "mailroom.test", organizations })
  } catch (error) {
    return (error as Error).message
  }
  return assert.fail("expected the configuration to be refused")
}

describe("Organizations.makeStatic", () => {
  describe("authenticate", () => {
    it.effect("an API key authenticates as its organization", () =>
      Effect.gen(function* () {
        assert.deepStrictEqual(yield* organizations.authenticate(apiKey("mr_test_acme")), acme)
      })
    )

    it.effect("an access token authenticates as its organization", () =>
      Effect.gen(function* () {
        assert.deepStrictEqual(yield* organizations.authenticate(accessToken("tok_acme")), acme)
      })
    )

    it.effect("keys configured as sha256:<hex> authenticate with the plain key", () =>
      Effect.gen(function* () {
        assert.deepStrictEqual(yield* organizations.authenticate(apiKey("mr_test_globex")), globex)
        assert.deepStrictEqual(yield* organizations.authenticate(accessToken("tok_globex")), globex)
      })
    )

    it.effect("the configured sha256:<hex> string itself does not authenticate", () =>
      Effect.gen(function* () {
        const error = yield* Effect.flip(organizations.authenticate(apiKey(`sha256:${sha256Hex("mr_test_globex")}`)))
        assert.instanceOf(error, MailroomError.Unauthorized)
      })
    )

    it.effect("an API key presented as an access token is Unauthorized, and the reverse", () =>
      Effect.gen(function* () {
        for (const credential of [accessToken("mr_test_acme"), apiKey("tok_acme"), accessToken("mr_test_globex")]) {
          const error = yield* Effect.flip(organizations.authenticate(credential))
          assert.instanceOf(error, MailroomError.Unauthorized)
        }
      })
    )

    it.effect("an unknown or empty credential is Unauthorized", () =>
      Effect.gen(function* () {
        for (const credential of [apiKey("mr_test_unknown"), apiKey(""), accessToken(""), apiKey("mr_test_acme ")]) {
          const error = yield* Effect.flip(organizations.authenticate(credential))
          assert.instanceOf(error, MailroomError.Unauthorized)
        }
      })
    )

    it.effect("Unauthorized never repeats the presented credential", () =>
      Effect.gen(function* () {
        for (const credential of [apiKey("mr_live_secret_value"), accessToken("mr_test_acme")]) {
          const error = yield* Effect.flip(organizations.authenticate(credential))
          assert.isNotEmpty(error.message)
          assert.notInclude(error.message, credential.value)
          assert.notInclude(String(error), credential.value)
          assert.notInclude(JSON.stringify(error), credential.value)
        }
      })
    )
  })

  describe("verifiedDomains", () => {
    it.effect("are the configured domains in lower-case ASCII, plus {slug}.{serviceDomain}", () =>
      Effect.gen(function* () {
        const domains = yield* organizations.verifiedDomains(acme)
        assert.deepStrictEqual([...domains].sort(), ["acme.example", "acme.mailroom.test", "xn--bcher-kva.example"])
      })
    )

    it.effect("an organization without configured domains still has {slug}.{serviceDomain}", () =>
      Effect.gen(function* () {
        assert.deepStrictEqual(yield* organizations.verifiedDomains(globex), ["globex.mailroom.test"])
      })
    )

    it.effect("the service domain is lower-cased too", () =>
      Effect.gen(function* () {
        const shouting = Organizations.makeStatic({
          serviceDomain: "MailRoom.TEST",
          organizations: [{ id: "org_acme", slug: "acme" }]
        })
        assert.deepStrictEqual(yield* shouting.verifiedDomains(acme), ["acme.mailroom.test"])
      })
    )
  })

  describe("find", () => {
    it.effect("returns the organization's principal", () =>
      Effect.gen(function* () {
        assert.deepStrictEqual(yield* organizations.find("org_acme"), acme)
        assert.deepStrictEqual(yield* organizations.find("org-globex"), globex)
      })
    )

    it.effect("an unknown id is NotFound", () =>
      Effect.gen(function* () {
        const error = yield* Effect.flip(organizations.find("org_unknown"))
        assert.instanceOf(error, MailroomError.NotFound)
      })
    )
  })

  describe("an invalid configuration throws, naming the field", () => {
    it("an id with characters other than letters, digits, _ and -", () => {
      for (const id of ["org acme", "org/acme", "org.acme", ""]) {
        assert.strictEqual(
          configurationError([{ id, slug: "acme" }]),
          'organizations[0].id: must be 1-64 letters, digits, "_" or "-"'
        )
      }
    })

    it("a slug that is not a lower-case DNS label", () => {
      for (const slug of ["Acme", "-acme", "acme-", "acme.corp", "ac me", ""]) {
        assert.strictEqual(
          configurationError([
            { id: "org_globex", slug: "globex" },
            { id: "org_acme", slug }
          ]),
          "organizations[1].slug: must be a lower-case DNS label"
        )
      }
    })

    it("an id used twice", () => {
      assert.strictEqual(
        configurationError([
          { id: "org_acme", slug: "acme" },
          { id: "org_acme", slug: "acme-two" }
        ]),
        'organizations[1].id: "org_acme" is used twice (ids are compared without case)'
      )
      // On a case-insensitive disk these would share one storage prefix.
      assert.strictEqual(
        configurationError([
          { id: "org_acme", slug: "acme" },
          { id: "ORG_ACME", slug: "acme-two" }
        ]),
        'organizations[1].id: "ORG_ACME" is used twice (ids are compared without case)'
      )
    })

    it("a credential that could not be sent in its header", () => {
      assert.strictEqual(
        configurationError([{ id: "org_acme", slug: "acme", accessTokens: ["tok acme"] }]),
        "organizations[0].accessTokens[0]: must be a Bearer token (letters, digits, - . _ ~ + / and trailing =)"
      )
      assert.strictEqual(
        configurationError([{ id: "org_acme", slug: "acme", apiKeys: ["mr key"] }]),
        "organizations[0].apiKeys[0]: must be visible ASCII characters without spaces"
      )
    })

    it("a slug used twice: both would send as {slug}.{serviceDomain}", () => {
      assert.strictEqual(
        configurationError([
          { id: "org_acme", slug: "acme" },
          { id: "org_other", slug: "acme" }
        ]),
        'organizations[1].slug: "acme" is used twice'
      )
    })

    it("a verified domain under the service domain, which would reach other organisations' subdomains", () => {
      for (const domain of ["mailroom.test", "acme.mailroom.test", "MAILROOM.test"]) {
        assert.match(
          configurationError([{ id: "org_globex", slug: "globex", verifiedDomains: [domain] }]),
          /^organizations\[0\]\.verifiedDomains\[0\]: .* belongs to the service domain$/
        )
      }
    })

    it("a credential configured twice, even once as its hash", () => {
      const twice: ReadonlyArray<ReadonlyArray<Organizations.OrganizationConfig>> = [
        [
          { id: "org_acme", slug: "acme", apiKeys: ["mr_test_shared"] },
          { id: "org_globex", slug: "globex", apiKeys: ["mr_test_shared"] }
        ],
        [
          { id: "org_acme", slug: "acme", apiKeys: ["mr_test_shared"] },
          { id: "org_globex", slug: "globex", accessTokens: [`sha256:${sha256Hex("mr_test_shared")}`] }
        ]
      ]
      assert.deepStrictEqual(twice.map(configurationError), [
        "organizations[1].apiKeys[0]: is already configured",
        "organizations[1].accessTokens[0]: is already configured"
      ])
    })

    it("an empty credential, which would let an empty header in", () => {
      assert.strictEqual(
        configurationError([{ id: "org_acme", slug: "acme", apiKeys: ["mr_test_acme", " "] }]),
        "organizations[0].apiKeys[1]: must not be empty"
      )
      assert.strictEqual(
        configurationError([{ id: "org_acme", slug: "acme", accessTokens: [""] }]),
        "organizations[0].accessTokens[0]: must not be empty"
      )
    })

    it("a hashed credential that is not sha256: and 64 hex digits, which no key could match", () => {
      const problem = 'a hashed secret must be "sha256:" followed by exactly 64 hex digits (the SHA-256 of the secret)'
      for (const entry of ["sha256:abcd", "sha256:", `sha256:${sha256Hex("k")}0`, `sha256:${"g".repeat(64)}`]) {
        assert.strictEqual(
          configurationError([{ id: "org_acme", slug: "acme", apiKeys: ["mr_test_acme"], accessTokens: [entry] }]),
          `organizations[0].accessTokens[0]: ${problem}`
        )
        assert.strictEqual(
          configurationError([{ id: "org_acme", slug: "acme", apiKeys: [entry] }]),
          `organizations[0].apiKeys[0]: ${problem}`
        )
      }
    })

    it("a verified domain that is not a domain name", () => {
      for (const domain of ["not a domain", "localhost", "acme.example/path", "alice@acme.example", "127.0.0.1"]) {
        assert.strictEqual(
          configurationError([{ id: "org_acme", slug: "acme", verifiedDomains: ["acme.example", domain] }]),
          "organizations[0].verifiedDomains[1]: not a domain name"
        )
      }
    })
  })
})

describe("the layers of the configured sources", () => {
  it.effect("layerStatic fails with a ConfigError naming the field, not a defect", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        Layer.build(
          Organizations.layerStatic({
            serviceDomain: "mailroom.test",
            organizations: [{ id: "org acme", slug: "acme" }]
          })
        ).pipe(Effect.scoped)
      )
      assert.strictEqual(error._tag, "ConfigError")
      assert.include(error.message, 'must be 1-64 letters, digits, "_" or "-"')
      assert.include(error.message, `["organizations"][0]["id"]`)
    })
  )

  it.effect("single fails with a ConfigError naming `domains`", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(Layer.build(Organizations.single({ domains: [] })).pipe(Effect.scoped))
      assert.strictEqual(error._tag, "ConfigError")
      assert.include(error.message, "give at least one domain to send from")
      assert.include(error.message, `["domains"]`)
    })
  )
})
