// mailroom's Organizations read from PostgreSQL (the schema of migrations/), where a workspace
// application creates and revokes keys; answers are cached briefly, so a revocation is seen within seconds.
import { createHash } from "node:crypto"
import { PgClient } from "@effect/sql-pg"
import { MailroomError, Organizations } from "@mailroom/core"
import * as Adapter from "@mailroom/core/adapter"
import * as Cache from "effect/Cache"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import * as SqlClient from "effect/sql/SqlClient"
import type * as SqlError from "effect/sql/SqlError"
import * as Errors from "./internal/errors.js"
import * as Check from "./internal/options.js"

/** The options a pool of its own and a client of yours both take. */
export interface CommonOptions {
  /** Every organisation may send from `{slug}.{serviceDomain}`. */
  readonly serviceDomain: string
  /**
   * How long an answer from the database is reused, and so the longest a revoked key keeps working
   * on an instance. Unknown keys are remembered as long; a lookup that failed is not remembered.
   * Default 5 seconds.
   */
  readonly cacheTtl?: Duration.Input | undefined
  /** Credentials and organisations remembered, each; the least recently used go first. Default 10 000. */
  readonly cacheCapacity?: number | undefined
  /** The longest a lookup may take, connecting included, before the request is answered 503. Default 3 seconds. */
  readonly timeout?: Duration.Input | undefined
}

/** Where the database is: what the pool of its own connects to. */
export interface ConnectionOptions {
  /** `postgres://user:password@host:5432/database`; `?sslmode=require` for TLS. Plain or `Redacted`. */
  readonly url: Adapter.Secret
  /** Connections in the pool, opened when needed. Default 10. */
  readonly maxConnections?: number | undefined
}

/** What `layerConfig` reads: the organisations over a pool of their own. */
export interface ConfigOptions extends CommonOptions, ConnectionOptions {}

/** An `SqlClient` of your own (one your application already has, on a database migrated with `PostgresMigrations`). */
export interface ClientOptions extends CommonOptions {
  readonly client: SqlClient.SqlClient
}

/** What `make` and `layer` take: a database URL, or a client of your own. */
export type Options = ConfigOptions | ClientOptions

interface Organization {
  readonly principal: Organizations.Principal
  readonly domains: ReadonlyArray<string>
}

const sha256Hex = (value: string) => createHash("sha256").update(value, "utf8").digest("hex")

const unknownCredential = () => new MailroomError.Unauthorized({ message: "missing, invalid or revoked credential" })

interface Settings {
  readonly rules: Organizations.DomainRules
  readonly cacheTtl: Duration.Duration
  readonly timeout: Duration.Duration
  readonly capacity: number
}

const settingsOf = (options: CommonOptions): Effect.Effect<Settings, Config.ConfigError> =>
  Effect.gen(function* () {
    const rules = yield* Effect.try({
      try: () => Organizations.makeDomainRules(options.serviceDomain),
      catch: () => Adapter.invalidOption("serviceDomain", "must be a domain name, such as mail.example.com")
    })
    return {
      rules,
      cacheTtl: yield* Adapter.duration("cacheTtl", options.cacheTtl ?? "5 seconds", { zero: true }),
      timeout: yield* Adapter.duration("timeout", options.timeout ?? "3 seconds"),
      capacity: yield* Adapter.positiveInteger("cacheCapacity", options.cacheCapacity ?? 10_000)
    }
  })

const build = Effect.fnUntraced(function* ({ rules, cacheTtl, timeout, capacity }: Settings) {
  const sql = yield* SqlClient.SqlClient

  // An outage fails every request; the log hears of it once per ten seconds, not once per request.
  const logOutage = Adapter.outageLog()
  const unavailable = (what: string, cause: unknown) =>
    Effect.andThen(
      logOutage(
        `[mailroom] the organisations database cannot be reached (${what}): ${Adapter.describeCause(cause)}; answering 503`
      ),
      Effect.fail(Errors.toUnavailable(what, cause))
    )

  /**
   * A query with a deadline. It runs in a fiber of its own that is only abandoned at the deadline:
   * interrupting a query waits for the server to answer, and a server that stalls never does.
   */
  const query = <A>(what: string, effect: Effect.Effect<A, SqlError.SqlError>) =>
    Effect.flatMap(Effect.forkDetach(effect), (fiber) =>
      Fiber.join(fiber).pipe(
        Effect.timeoutOrElse({
          duration: timeout,
          orElse: () =>
            Effect.andThen(
              Effect.forkDetach(Fiber.interrupt(fiber)),
              Effect.fail(new Error(`no answer within ${Duration.format(timeout)}`))
            )
        }),
        Effect.catch((cause) => unavailable(what, cause))
      )
    )

  /** A principal whose row breaks the schema's checks (which someone dropped) is refused, loudly. */
  const principalOf = (row: { readonly id: string; readonly slug: string }) =>
    Organizations.isValidId(row.id) && Organizations.isValidSlug(row.slug)
      ? Effect.succeed(Option.some<Organizations.Principal>({ orgId: row.id, slug: row.slug }))
      : Effect.as(
          Effect.logError(`[mailroom] organisation ${JSON.stringify(row.id)} has an invalid id or slug; refused`),
          Option.none<Organizations.Principal>()
        )

  // Keyed by the credential's kind and digest: the cache never holds a credential itself.
  const credentials = yield* Cache.makeWith(
    (key: string) => {
      const [kind, digest] = key.split(":") as [Organizations.Credential["kind"], string]
      const rows =
        kind === "apiKey"
          ? sql<{ id: string; slug: string }>`SELECT o.id, o.slug FROM mailroom_api_keys k
              JOIN mailroom_organizations o ON o.id = k.organization_id
              WHERE k.sha256 = ${digest} AND (k.revoked_at IS NULL OR k.revoked_at > now())`
          : sql<{ id: string; slug: string }>`SELECT o.id, o.slug FROM mailroom_access_tokens t
              JOIN mailroom_organizations o ON o.id = t.organization_id
              WHERE t.sha256 = ${digest} AND (t.revoked_at IS NULL OR t.revoked_at > now())`
      return Effect.flatMap(query("credentials", rows), (found) =>
        found[0] === undefined ? Effect.succeed(Option.none()) : principalOf(found[0])
      )
    },
    { capacity, timeToLive: (exit) => (Exit.isSuccess(exit) ? cacheTtl : Duration.zero) }
  )

  const organizations = yield* Cache.makeWith(
    (orgId: string) =>
      Effect.gen(function* () {
        const rows = yield* query(
          "sender domains",
          sql<{ id: string; slug: string; domain: string | null }>`SELECT o.id, o.slug, d.domain
            FROM mailroom_organizations o LEFT JOIN mailroom_verified_domains d ON d.organization_id = o.id
            WHERE o.id = ${orgId} ORDER BY d.domain`
        )
        const first = rows[0]
        if (first === undefined) return Option.none<Organization>()
        const principal = yield* principalOf(first)
        if (Option.isNone(principal)) return Option.none<Organization>()
        const domains: Array<string> = []
        for (const row of rows) {
          if (row.domain === null) continue
          const checked = rules.check(row.domain)
          if ("domain" in checked) domains.push(checked.domain)
          else
            yield* Effect.logWarning(`[mailroom] ${orgId}: verified domain ${row.domain} ignored: ${checked.problem}`)
        }
        domains.push(rules.own(principal.value.slug))
        return Option.some<Organization>({ principal: principal.value, domains })
      }),
    { capacity, timeToLive: (exit) => (Exit.isSuccess(exit) ? cacheTtl : Duration.zero) }
  )

  return Organizations.Organizations.of({
    authenticate: (credential) =>
      credential.value === ""
        ? Effect.fail(unknownCredential())
        : Effect.flatMap(Cache.get(credentials, `${credential.kind}:${sha256Hex(credential.value)}`), (found) =>
            Option.isSome(found) ? Effect.succeed(found.value) : Effect.fail(unknownCredential())
          ),
    find: (orgId) =>
      Effect.flatMap(Cache.get(organizations, orgId), (found) =>
        Option.isSome(found)
          ? Effect.succeed(found.value.principal)
          : Effect.fail(new MailroomError.NotFound({ message: `no organization ${orgId}` }))
      ),
    verifiedDomains: (principal) =>
      Effect.map(Cache.get(organizations, principal.orgId), (found) =>
        Option.isSome(found) ? found.value.domains : []
      )
  })
})

/** Over a pool of its own, the options checked before it connects; closed with the scope. */
const poolOf = (
  options: ConnectionOptions
): Effect.Effect<SqlClient.SqlClient, Config.ConfigError | SqlError.SqlError, Scope.Scope> =>
  Effect.gen(function* () {
    const url = yield* Check.databaseUrl(options.url)
    const maxConnections =
      options.maxConnections === undefined
        ? {}
        : { maxConnections: yield* Adapter.positiveInteger("maxConnections", options.maxConnections) }
    const pool = yield* Layer.build(
      PgClient.layer({ url: Redacted.make(url), ...maxConnections, applicationName: "mailroom" })
    )
    return Context.get(pool, SqlClient.SqlClient)
  })

/**
 * The organisations, on a pool of their own to `url` (closed with the scope) or on the `client` given,
 * a database migrated with `PostgresMigrations` either way. Every option is checked before anything
 * connects: a `ConfigError` naming it when `serviceDomain` is not a domain name, `url` not a
 * PostgreSQL URL, `cacheTtl` or `timeout` not a finite duration (`timeout` above zero), or
 * `cacheCapacity` or `maxConnections` not a whole number above zero.
 */
export const make = (
  options: Options
): Effect.Effect<Organizations.Organizations, Config.ConfigError | SqlError.SqlError, Scope.Scope> =>
  Effect.gen(function* () {
    const settings = yield* settingsOf(options)
    const client = "client" in options ? options.client : yield* poolOf(options)
    return yield* Effect.provideService(build(settings), SqlClient.SqlClient, client)
  })

/** Provides core's `Organizations` (the server's `"organizations": { "kind": "postgres" }`). */
export const layer = (
  options: Options
): Layer.Layer<Organizations.Organizations, Config.ConfigError | SqlError.SqlError> =>
  Layer.effect(Organizations.Organizations, make(options))

/**
 * As `layer`, with options read from `Config`, e.g.
 * `layerConfig({ url: Config.Redacted("DATABASE_URL"), serviceDomain: Config.String("SERVICE_DOMAIN") })`.
 */
export const layerConfig = (
  config: Config.Wrap<ConfigOptions>
): Layer.Layer<Organizations.Organizations, Config.ConfigError | SqlError.SqlError> =>
  Layer.effect(Organizations.Organizations, Effect.flatMap(Config.unwrap(config), make))

/** Provides core's `Organizations` on the `SqlClient` in the context (one your application already has). */
export const layerFromClient = (
  options: CommonOptions
): Layer.Layer<Organizations.Organizations, Config.ConfigError, SqlClient.SqlClient> =>
  Layer.effect(Organizations.Organizations, Effect.flatMap(settingsOf(options), build))
