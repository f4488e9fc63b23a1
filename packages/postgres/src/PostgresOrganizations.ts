// mailroom's Organizations read from PostgreSQL (the schema of migrations/), where a workspace
// application creates and revokes keys; answers are cached briefly, so a revocation is seen within seconds.
import { createHash } from "node:crypto"
import { PgClient } from "@effect/sql-pg"
import { MailroomError, Organizations } from "@mailroom/core"
import { Cache, Clock, Config, Duration, Effect, Exit, Fiber, Layer, Option, Redacted } from "effect"
import { SqlClient, type SqlError } from "effect/sql"

export interface Options {
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

export interface ConnectionOptions {
  /** `postgres://user:password@host:5432/database`; `?sslmode=require` for TLS. */
  readonly url: string | Redacted.Redacted<string>
  /** Connections in the pool, opened when needed. Default 10. */
  readonly maxConnections?: number | undefined
}

interface Organization {
  readonly principal: Organizations.Principal
  readonly domains: ReadonlyArray<string>
}

const sha256Hex = (value: string) => createHash("sha256").update(value, "utf8").digest("hex")

/** "PgConnection: Failed to connect: connect ECONNREFUSED 127.0.0.1:5432": each distinct message down the causes. */
const describe = (cause: unknown): string => {
  const messages: Array<string> = []
  for (let at = cause, depth = 0; at instanceof Error && depth < 4; at = at.cause, depth++) {
    if (at.message !== "" && !messages.some((m) => m.includes(at.message))) messages.push(at.message)
  }
  return messages.length === 0 ? String(cause) : messages.join(": ")
}

const unknownCredential = () => new MailroomError.Unauthorized({ message: "missing, invalid or revoked credential" })

/**
 * The organisations; needs an `SqlClient` on a database migrated with `PostgresMigrations`. Throws
 * when `serviceDomain` is not a domain name.
 */
export const make = Effect.fnUntraced(function* (options: Options) {
  const sql = yield* SqlClient.SqlClient
  const rules = Organizations.makeDomainRules(options.serviceDomain)
  const cacheTtl = Duration.fromInputUnsafe(options.cacheTtl ?? "5 seconds")
  const timeout = options.timeout ?? "3 seconds"
  const capacity = options.cacheCapacity ?? 10_000

  // An outage fails every request; the log hears of it once per ten seconds, not once per request.
  let lastLogged = Number.NEGATIVE_INFINITY
  const unavailable = (what: string, cause: unknown) =>
    Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      if (now - lastLogged >= 10_000) {
        lastLogged = now
        yield* Effect.logError(
          `[mailroom] the organisations database cannot be reached (${what}): ${describe(cause)}; answering 503`
        )
      }
      return yield* new MailroomError.Unavailable({
        message: `${what} cannot be checked right now; nothing was done, so the request may be tried again`,
        cause
      })
    })

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
              Effect.fail(new Error(`no answer within ${Duration.format(Duration.fromInputUnsafe(timeout))}`))
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

/** Provides core's `Organizations` from an `SqlClient` of your own (one your application already has). */
export const layerFromClient = (
  options: Options
): Layer.Layer<Organizations.Organizations, never, SqlClient.SqlClient> =>
  Layer.effect(Organizations.Organizations, make(options))

/** Provides core's `Organizations` over a pool of its own, closed with the layer. */
export const layer = (
  options: Options & ConnectionOptions
): Layer.Layer<Organizations.Organizations, SqlError.SqlError> =>
  layerFromClient(options).pipe(
    Layer.provide(
      PgClient.layer({
        url: typeof options.url === "string" ? Redacted.make(options.url) : options.url,
        ...(options.maxConnections === undefined ? {} : { maxConnections: options.maxConnections }),
        applicationName: "mailroom"
      })
    )
  )

/**
 * The same, with options read from `Config`, e.g.
 * `layerConfig({ url: Config.Redacted("DATABASE_URL"), serviceDomain: Config.String("SERVICE_DOMAIN") })`.
 */
export const layerConfig = (
  options: Config.Wrap<Options & ConnectionOptions>
): Layer.Layer<Organizations.Organizations, Config.ConfigError | SqlError.SqlError> =>
  Layer.unwrap(Effect.map(Config.unwrap(options), layer))
