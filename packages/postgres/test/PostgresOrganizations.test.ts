import { execFile } from "node:child_process"
import { createHash } from "node:crypto"
import { existsSync } from "node:fs"
import { PgClient } from "@effect/sql-pg"
import { MailroomError, Organizations } from "@mailroom/core"
import { expectConfigError, OrganizationsSuite } from "@mailroom/core/testing"
import { type PostgresCluster as Cluster, startPostgresCluster as startCluster } from "@mailroom/test-support"
import { Config, ConfigProvider, Context, Effect, Exit, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { afterAll, assert, beforeAll, describe, it, onTestFinished } from "vitest"
import { PostgresOrganizations } from "../src/index.js"
import { migrate } from "./support/migrate.js"

const sha256Hex = (value: string) => createHash("sha256").update(value, "utf8").digest("hex")
const apiKey = (value: string): Organizations.Credential => ({ kind: "apiKey", value })
const accessToken = (value: string): Organizations.Credential => ({ kind: "accessToken", value })
const acme = { orgId: "org_acme", slug: "acme" }

let cluster: Cluster

/** What a workspace application does when it creates a key: stores the SHA-256 of it, never the key. */
const insertKey = (orgId: string, key: string, table = "mailroom_api_keys", revokedAt = "NULL") =>
  cluster.psql(
    `INSERT INTO ${table} (organization_id, sha256, name, revoked_at) VALUES ('${orgId}', '${sha256Hex(key)}', 'test', ${revokedAt})`
  )
const revoke = (key: string, table = "mailroom_api_keys") =>
  cluster.psql(`UPDATE ${table} SET revoked_at = now() WHERE sha256 = '${sha256Hex(key)}'`)

/**
 * `count` instances of the organisations, each with a pool of its own, as separate servers would have.
 * With `testClock`, their caches' time moves only by `TestClock.adjust`: a test of the cache time
 * neither waits it out nor depends on how fast the machine is (the database is still real).
 */
const instances = <A, E>(
  count: number,
  options: Partial<PostgresOrganizations.CommonOptions>,
  use: (instances: ReadonlyArray<Organizations.Organizations>) => Effect.Effect<A, E>,
  clock: "live" | "testClock" = "live"
): Promise<A> =>
  Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const built: Array<Organizations.Organizations> = []
        for (let i = 0; i < count; i++) {
          const context = yield* Layer.build(
            PostgresOrganizations.layer({ url: cluster.url, serviceDomain: "mailroom.test", ...options })
          )
          built.push(Context.get(context, Organizations.Organizations))
        }
        return yield* use(built)
      })
    ).pipe(clock === "testClock" ? Effect.provide(TestClock.layer()) : (effect) => effect)
  )
const instance = <A, E>(
  options: Partial<PostgresOrganizations.CommonOptions>,
  use: (organizations: Organizations.Organizations) => Effect.Effect<A, E>,
  clock: "live" | "testClock" = "live"
) => instances(1, options, ([organizations]) => use(organizations as Organizations.Organizations), clock)

/** The error an effect failed with, or a test failure when it succeeded. */
const failure = <E>(effect: Effect.Effect<unknown, E>) =>
  Effect.map(Effect.exit(effect), (exit) =>
    Exit.isFailure(exit) && exit.cause.reasons[0]?._tag === "Fail"
      ? (exit.cause.reasons[0].error as E)
      : assert.fail(`expected a failure, got ${String(exit)}`)
  )

beforeAll(async () => {
  cluster = await startCluster()
  assert.deepStrictEqual(await migrate(cluster.url), [[1, "organizations"]])
  await cluster.psql(
    `INSERT INTO mailroom_organizations (id, slug) VALUES ('org_acme', 'acme'), ('org_globex', 'globex')`
  )
  await cluster.psql(
    `INSERT INTO mailroom_verified_domains (organization_id, domain) VALUES ('org_acme', 'acme.example'), ('org_acme', 'xn--bcher-kva.example')`
  )
  await insertKey("org_acme", "mr_live_acme")
  await insertKey("org_acme", "tok_acme", "mailroom_access_tokens")
  await insertKey("org_globex", "mr_live_globex")
}, 60_000)

afterAll(() => cluster?.destroy())

// The suite's organisations inserted as a workspace application would: rows, keys as their SHA-256.
OrganizationsSuite("postgres", {
  layer: ({ serviceDomain, organizations }) =>
    Layer.unwrap(
      Effect.promise(async () => {
        for (const org of organizations) {
          await cluster.psql(`INSERT INTO mailroom_organizations (id, slug) VALUES ('${org.id}', '${org.slug}')`)
          for (const domain of org.verifiedDomains) {
            await cluster.psql(
              `INSERT INTO mailroom_verified_domains (organization_id, domain) VALUES ('${org.id}', '${domain}')`
            )
          }
          for (const key of org.apiKeys) await insertKey(org.id, key)
          for (const token of org.accessTokens) await insertKey(org.id, token, "mailroom_access_tokens")
        }
        return PostgresOrganizations.layer({ url: cluster.url, serviceDomain })
      })
    )
})

describe("PostgresMigrations", () => {
  it("created the documented tables, recorded the migration, and a second run applies nothing", async () => {
    const tables = await cluster.psql(
      `SELECT table_name FROM information_schema.tables WHERE table_name LIKE 'mailroom_%' ORDER BY table_name`
    )
    assert.deepStrictEqual(tables.flat(), [
      "mailroom_access_tokens",
      "mailroom_api_keys",
      "mailroom_migrations",
      "mailroom_organizations",
      "mailroom_verified_domains"
    ])
    assert.deepStrictEqual(await cluster.psql(`SELECT migration_id, name FROM mailroom_migrations`), [
      ["1", "organizations"]
    ])
    assert.deepStrictEqual(await migrate(cluster.url), [])
  })

  it("the schema refuses a plain key, an id that would merge with another, and a domain not in ASCII lower case", async () => {
    const cases: ReadonlyArray<readonly [constraint: string, table: string, columns: string, values: string]> = [
      ["mailroom_api_keys_sha256_shape", "mailroom_api_keys", "organization_id, sha256", "'org_acme', 'mr_live_plain'"],
      [
        "mailroom_api_keys_sha256_shape",
        "mailroom_api_keys",
        "organization_id, sha256",
        `'org_acme', '${sha256Hex("x").toUpperCase()}'`
      ],
      ["mailroom_organizations_id_without_case", "mailroom_organizations", "id, slug", "'ORG_ACME', 'acme2'"],
      ["mailroom_organizations_id_shape", "mailroom_organizations", "id, slug", "'org/../x', 'x'"],
      [
        "mailroom_verified_domains_domain_shape",
        "mailroom_verified_domains",
        "organization_id, domain",
        "'org_acme', 'Acme.Example'"
      ]
    ]
    for (const [constraint, table, columns, values] of cases) {
      const sql = `INSERT INTO ${table} (${columns}) VALUES (${values})`
      const error = await cluster.psql(sql).then(
        () => assert.fail(`accepted: ${sql}`),
        (e: Error) => e
      )
      assert.include(error.message, constraint)
    }
  })
})

describe("the mailroom-postgres command", () => {
  const bin = new URL("../dist/bin.js", import.meta.url).pathname
  const migrate = (env: Record<string, string>) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        [bin, "migrate"],
        { env: { PATH: process.env.PATH, ...env } },
        (error, stdout, stderr) => resolve({ code: error === null ? 0 : (error.code as number), stdout, stderr })
      )
    })

  it("migrate applies the schema to the database at DATABASE_URL, then finds it current", async () => {
    assert.isTrue(existsSync(bin), `${bin} is missing: the test command builds the packages first`)
    await cluster.psql("CREATE DATABASE deploy_step")
    const url = cluster.url.replace(/\/postgres$/, "/deploy_step")
    assert.deepStrictEqual(await migrate({ DATABASE_URL: url }), {
      code: 0,
      stdout: "applied 0001_organizations\n",
      stderr: ""
    })
    assert.deepStrictEqual(await migrate({ DATABASE_URL: url }), {
      code: 0,
      stdout: "the mailroom schema is current\n",
      stderr: ""
    })
    const missing = await migrate({})
    assert.strictEqual(missing.code, 2)
    assert.include(missing.stderr, "DATABASE_URL is not set")
  })
})

describe("PostgresOrganizations", () => {
  it("an API key and an access token authenticate as their organisation, each only as its own kind", () =>
    instance({}, (organizations) =>
      Effect.gen(function* () {
        assert.deepStrictEqual(yield* organizations.authenticate(apiKey("mr_live_acme")), acme)
        assert.deepStrictEqual(yield* organizations.authenticate(accessToken("tok_acme")), acme)
        assert.deepStrictEqual(yield* organizations.authenticate(apiKey("mr_live_globex")), {
          orgId: "org_globex",
          slug: "globex"
        })
        const crossed = yield* failure(organizations.authenticate(accessToken("mr_live_acme")))
        assert.strictEqual(crossed._tag, "Unauthorized")
        const tokenAsKey = yield* failure(organizations.authenticate(apiKey("tok_acme")))
        assert.strictEqual(tokenAsKey._tag, "Unauthorized")
      })
    ))

  it("unknown, empty, revoked and hash-as-key credentials are Unauthorized; a key revoked for later still works", async () => {
    await insertKey("org_acme", "mr_live_revoked", "mailroom_api_keys", "now() - interval '1 minute'")
    await insertKey("org_acme", "mr_live_rolling", "mailroom_api_keys", "now() + interval '1 hour'")
    await instance({}, (organizations) =>
      Effect.gen(function* () {
        for (const value of ["mr_live_unknown", "", "mr_live_revoked", sha256Hex("mr_live_acme")]) {
          const error = yield* failure(organizations.authenticate(apiKey(value)))
          assert.strictEqual(error._tag, "Unauthorized", value)
          assert.strictEqual(error.message, "missing, invalid or revoked credential")
        }
        assert.deepStrictEqual(yield* organizations.authenticate(apiKey("mr_live_rolling")), acme)
      })
    )
  })

  it("verified domains are the organisation's rows plus {slug}.{serviceDomain}; none under the service domain", async () => {
    await cluster.psql(
      `INSERT INTO mailroom_verified_domains (organization_id, domain) VALUES ('org_globex', 'other.mailroom.test'), ('org_globex', 'globex.example')`
    )
    await instance({}, (organizations) =>
      Effect.gen(function* () {
        assert.deepStrictEqual(yield* organizations.verifiedDomains(acme), [
          "acme.example",
          "xn--bcher-kva.example",
          "acme.mailroom.test"
        ])
        const globex = yield* organizations.find("org_globex")
        assert.deepStrictEqual(globex, { orgId: "org_globex", slug: "globex" })
        assert.deepStrictEqual(yield* organizations.verifiedDomains(globex), ["globex.example", "globex.mailroom.test"])
        const missing = yield* failure(organizations.find("org_nobody"))
        assert.instanceOf(missing, MailroomError.NotFound)
        assert.deepStrictEqual(yield* organizations.verifiedDomains({ orgId: "org_nobody", slug: "nobody" }), [])
      })
    )
  })

  it("a key revoked in the database stops working on two instances within the cache time", async () => {
    await insertKey("org_acme", "mr_live_soon_revoked")
    await instances(
      2,
      { cacheTtl: "10 seconds" },
      (both) =>
        Effect.gen(function* () {
          const key = apiKey("mr_live_soon_revoked")
          for (const organizations of both) assert.deepStrictEqual(yield* organizations.authenticate(key), acme)
          yield* Effect.promise(() => revoke("mr_live_soon_revoked"))
          // Within the cache time the remembered answer still stands: the database is not asked per request.
          yield* TestClock.adjust("9999 millis")
          for (const organizations of both) assert.deepStrictEqual(yield* organizations.authenticate(key), acme)
          // Once it has passed, each instance asks again and refuses the key, and goes on refusing it.
          yield* TestClock.adjust("1 millis")
          for (const organizations of both) {
            assert.strictEqual((yield* failure(organizations.authenticate(key)))._tag, "Unauthorized")
            assert.strictEqual((yield* failure(organizations.authenticate(key)))._tag, "Unauthorized")
          }
        }),
      "testClock"
    )
  })

  it("with no cacheTtl, a key revoked in the database stops working after 5 seconds", async () => {
    await insertKey("org_acme", "mr_live_default_ttl")
    await instance(
      {},
      (organizations) =>
        Effect.gen(function* () {
          const key = apiKey("mr_live_default_ttl")
          assert.deepStrictEqual(yield* organizations.authenticate(key), acme)
          yield* Effect.promise(() => revoke("mr_live_default_ttl"))
          // 5 s is the documented default.
          yield* TestClock.adjust("4999 millis")
          assert.deepStrictEqual(yield* organizations.authenticate(key), acme)
          yield* TestClock.adjust("1 millis")
          assert.strictEqual((yield* failure(organizations.authenticate(key)))._tag, "Unauthorized")
        }),
      "testClock"
    )
  })

  it("a verified domain added or removed in the database is seen within the cache time", () =>
    instance(
      { cacheTtl: "10 seconds" },
      (organizations) =>
        Effect.gen(function* () {
          const domains = () => organizations.verifiedDomains(acme)
          assert.notInclude(yield* domains(), "new.acme.example")
          yield* Effect.promise(() =>
            cluster.psql(
              `INSERT INTO mailroom_verified_domains (organization_id, domain) VALUES ('org_acme', 'new.acme.example')`
            )
          )
          yield* TestClock.adjust("9 seconds")
          assert.notInclude(yield* domains(), "new.acme.example", "remembered for the cache time")
          yield* TestClock.adjust("1 second")
          assert.include(yield* domains(), "new.acme.example")
          yield* Effect.promise(() =>
            cluster.psql(`DELETE FROM mailroom_verified_domains WHERE domain = 'new.acme.example'`)
          )
          yield* TestClock.adjust("10 seconds")
          assert.notInclude(yield* domains(), "new.acme.example")
        }),
      "testClock"
    ))

  it("the cache is bounded: past its capacity the least recently used answer is asked again", async () => {
    await insertKey("org_acme", "mr_live_evicted")
    await instance({ cacheTtl: "1 hour", cacheCapacity: 3 }, (organizations) =>
      Effect.gen(function* () {
        const key = apiKey("mr_live_evicted")
        assert.deepStrictEqual(yield* organizations.authenticate(key), acme)
        yield* Effect.promise(() => revoke("mr_live_evicted"))
        // Remembered for an hour...
        assert.deepStrictEqual(yield* organizations.authenticate(key), acme)
        // ...until three other credentials take its place.
        for (const other of ["mr_live_a", "mr_live_b", "mr_live_c"])
          yield* Effect.exit(organizations.authenticate(apiKey(other)))
        assert.strictEqual((yield* failure(organizations.authenticate(key)))._tag, "Unauthorized")
      })
    )
  })

  it("a database that is down or stalls is Unavailable, never Unauthorized, and the failure is not remembered", async () => {
    // Whatever happens below, the next tests find the database up.
    onTestFinished(async () => {
      cluster.resume()
      await cluster.start()
    })
    await instance({ cacheTtl: "1 hour", timeout: "1 second" }, (organizations) =>
      Effect.gen(function* () {
        // A cached answer would hide the outage; these are asked for the first time below.
        yield* Effect.promise(() => cluster.stop())
        const down = yield* failure(organizations.authenticate(apiKey("mr_live_acme")))
        assert.instanceOf(down, MailroomError.Unavailable)
        assert.include(down.message, "cannot be checked right now")
        const domains = yield* failure(organizations.verifiedDomains(acme))
        assert.instanceOf(domains, MailroomError.Unavailable)
        const find = yield* failure(organizations.find("org_globex"))
        assert.instanceOf(find, MailroomError.Unavailable)

        // Back up: the very same lookups answer at once, although failures are within the hour's cache time.
        yield* Effect.promise(() => cluster.start())
        assert.deepStrictEqual(yield* organizations.authenticate(apiKey("mr_live_acme")), acme)
        assert.include(yield* organizations.verifiedDomains(acme), "acme.example")

        // Frozen: connections stay open, nothing answers; the deadline answers instead.
        cluster.pause()
        const started = Date.now()
        const stalled = yield* failure(organizations.authenticate(accessToken("tok_acme"))).pipe(
          Effect.ensuring(Effect.sync(() => cluster.resume()))
        )
        assert.instanceOf(stalled, MailroomError.Unavailable)
        assert.isAtMost(Date.now() - started, 2500)
        assert.deepStrictEqual(yield* organizations.authenticate(accessToken("tok_acme")), acme)
      })
    )
  })

  describe("options", () => {
    /** Building `layer` fails with a ConfigError naming `option`, never the password. */
    const refused = <A, E>(layer: Layer.Layer<A, E>, option: string) =>
      Effect.runPromise(expectConfigError(layer, option, { secrets: ["hunter2"] }))
    // Nothing listens on port 1: a ConfigError rather than a connection failure shows the options are
    // checked before anything connects.
    const closed = "postgres://postgres:hunter2@127.0.0.1:1/postgres"
    const refusals: ReadonlyArray<readonly [Partial<PostgresOrganizations.ConfigOptions>, string]> = [
      [{ serviceDomain: "not a domain!" }, "serviceDomain"],
      [{ cacheTtl: "-1 seconds" }, "cacheTtl"],
      [{ timeout: 0 }, "timeout"],
      [{ cacheCapacity: 0 }, "cacheCapacity"],
      [{ maxConnections: 2.5 }, "maxConnections"],
      [{ url: "mysql://root:hunter2@127.0.0.1:3306/app" }, "url"],
      [{ url: Redacted.make("127.0.0.1:5432") }, "url"]
    ]

    it("layer refuses each unusable option with a ConfigError naming it, never the password, before connecting", async () => {
      for (const [bad, option] of refusals) {
        await refused(PostgresOrganizations.layer({ url: closed, serviceDomain: "mailroom.test", ...bad }), option)
      }
    })

    it("layerFromClient refuses the same options on a client of your own", async () => {
      const client = PgClient.layer({ url: Redacted.make(cluster.url), maxConnections: 1 })
      for (const [bad, option] of refusals.filter(([bad]) => !("url" in bad) && !("maxConnections" in bad))) {
        await refused(
          PostgresOrganizations.layerFromClient({ serviceDomain: "mailroom.test", ...bad }).pipe(Layer.provide(client)),
          option
        )
      }
    })

    it("make({ client }) and layerFromClient answer on a client of your own", async () => {
      const principals = await Effect.runPromise(
        Effect.gen(function* () {
          const client = yield* SqlClient.SqlClient
          const given = yield* PostgresOrganizations.make({ client, serviceDomain: "mailroom.test" })
          const fromContext = yield* Effect.provide(
            Organizations.Organizations,
            PostgresOrganizations.layerFromClient({ serviceDomain: "mailroom.test" })
          )
          const credential = { kind: "apiKey", value: "mr_live_acme" } as const
          return [yield* given.authenticate(credential), yield* fromContext.authenticate(credential)]
        }).pipe(Effect.scoped, Effect.provide(PgClient.layer({ url: Redacted.make(cluster.url), maxConnections: 1 })))
      )
      assert.deepStrictEqual(principals, [
        { orgId: "org_acme", slug: "acme" },
        { orgId: "org_acme", slug: "acme" }
      ])
    })

    it("layerConfig fails alike for a value it read but cannot use", async () => {
      const layer = PostgresOrganizations.layerConfig({
        url: Config.Redacted("DATABASE_URL"),
        serviceDomain: Config.String("SERVICE_DOMAIN")
      })
      for (const [values, option] of [
        [{ DATABASE_URL: cluster.url, SERVICE_DOMAIN: "not a domain!" }, "serviceDomain"],
        [{ DATABASE_URL: "mysql://root:hunter2@127.0.0.1:3306/app", SERVICE_DOMAIN: "mailroom.test" }, "url"]
      ] as const) {
        await refused(layer.pipe(Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown(values)))), option)
      }
    })
  })
})
