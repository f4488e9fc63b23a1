// `GET /healthz` (the process answers) and `GET /readyz` (what a send needs can be reached: storage,
// the organisations' database, the message records' database, each Redis, the provider: its
// configuration, its key or its server), for load balancers.
import { MailroomError, MessageLog, ObjectStore, Organizations } from "@mailroom/core"
import { Clock, Duration, Effect, Layer } from "effect"
import { Redis } from "effect/persistence"

/** The URL without its credentials. */
const describeUrl = (url: string) => {
  const { protocol, host } = new URL(url)
  return `${protocol}//${host}`
}

/** One check: undefined when ready, else why not (safe to show: no credential, no URL password). */
export type Check = Effect.Effect<
  string | undefined,
  never,
  ObjectStore.ObjectStore | Organizations.Organizations | MessageLog.MessageLog
>

const bounded = (check: Check, what: string): Check =>
  check.pipe(
    Effect.timeoutOrElse({
      duration: Duration.seconds(2),
      orElse: () => Effect.succeed(`${what} did not answer within 2 s`)
    })
  )

const storage: Check = Effect.flatMap(ObjectStore.ObjectStore, (store) =>
  store.head("_mailroom/readyz").pipe(
    Effect.as(undefined),
    Effect.catch((error) =>
      Effect.succeed(
        error._tag === "ObjectNotFound" ? undefined : `the object store cannot be reached: ${error.message}`
      )
    )
  )
)

// A lookup of an organisation that does not exist reaches the database (a miss is cached for at most
// `cacheSeconds`); an outage is `Unavailable`, which is all this looks at.
const database: Check = Effect.flatMap(Organizations.Organizations, (organizations) =>
  organizations.find("_mailroom_readyz").pipe(
    Effect.as(undefined),
    Effect.catch((error) =>
      Effect.succeed(MailroomError.isMailroomError(error) && error._tag === "Unavailable" ? error.message : undefined)
    )
  )
)

// A lookup of a message that does not exist reaches the records' database (nothing caches it).
const records: Check = Effect.flatMap(MessageLog.MessageLog, (log) =>
  log.find("_mailroom_readyz", "00000000-0000-7000-8000-000000000000").pipe(
    Effect.as(undefined),
    Effect.catch((error) => Effect.succeed(error.message))
  )
)

/**
 * `check` made at most once a minute while it passes and every 5 seconds while it fails: a vendor counts
 * each call against the account's rate limit (Resend: 2 requests a second for the whole team), which
 * probes from every instance every few seconds would otherwise spend.
 */
export const throttled = (check: Check): Check => {
  let last: { readonly at: number; readonly problem: string | undefined } | undefined
  return Effect.flatMap(Clock.currentTimeMillis, (now) => {
    if (last !== undefined && now - last.at < (last.problem === undefined ? 60_000 : 5_000)) {
      return Effect.succeed(last.problem)
    }
    return Effect.tap(check, (problem) =>
      Effect.sync(() => {
        last = { at: now, problem }
      })
    )
  })
}

/**
 * The checks, filled in while the layers are built: each Redis connection registers its PING here, so
 * readiness asks the very connections the stores use.
 */
export const make = (options: {
  readonly postgres: boolean
  /** What holds the message records, when it is a database that can be down ("SQLite", "PostgreSQL"). */
  readonly messages: string | undefined
  readonly providerProblem: () => string | undefined
  /** A call that reaches the provider itself and sends nothing (SMTP: connect and EHLO; Resend: an authenticated read). */
  readonly providerCheck?: { readonly what: string; readonly check: Check }
}) => {
  const pings = new Map<string, Check>()
  /** A layer that registers the PING of the Redis it is given; provide it the store's own connection layer. */
  const watchRedis = (url: string): Layer.Layer<never, never, Redis.Redis> =>
    Layer.effectDiscard(
      Effect.map(Redis.Redis, (redis) => {
        pings.set(
          url,
          redis.send<string>("PING").pipe(
            Effect.as(undefined),
            Effect.catch(() => Effect.succeed(`Redis at ${describeUrl(url)} cannot be reached`))
          )
        )
      })
    )
  const checks = (): ReadonlyArray<readonly [string, Check]> => [
    ["storage", bounded(storage, "the object store")],
    ...(options.postgres ? [["organizations", bounded(database, "PostgreSQL")] as const] : []),
    ...(options.messages === undefined ? [] : [["messages", bounded(records, options.messages)] as const]),
    ...[...pings].map(
      ([url, ping], i) =>
        [pings.size === 1 ? "redis" : `redis${i + 1}`, bounded(ping, `Redis at ${describeUrl(url)}`)] as const
    ),
    [
      "provider",
      options.providerCheck === undefined
        ? Effect.sync(options.providerProblem)
        : bounded(
            Effect.flatMap(Effect.sync(options.providerProblem), (problem) =>
              problem === undefined
                ? (options.providerCheck as { readonly check: Check }).check
                : Effect.succeed(problem)
            ),
            options.providerCheck.what
          )
    ]
  ]
  /** `{ready, checks: {name: "ok" | why}}`, every check run at once. */
  const readiness = Effect.gen(function* () {
    const named = checks()
    const results = yield* Effect.forEach(named, ([, check]) => check, { concurrency: "unbounded" })
    const body: Record<string, string> = {}
    named.forEach(([name], i) => {
      body[name] = results[i] ?? "ok"
    })
    return { ready: results.every((r) => r === undefined), checks: body }
  })
  return { watchRedis, readiness }
}
