// `GET /healthz` (the process answers) and `GET /readyz` (what a send needs can be reached: storage,
// the organisations' database, the message records' database and its send queue, each Redis, the provider's own verify;
// the local disk and the outbox can be written), for load balancers.
import { randomUUID } from "node:crypto"
import { mkdir, open, rm } from "node:fs/promises"
import { join } from "node:path"
import { EmailProvider, MailroomError, MessageLog, ObjectStore, Organizations, SendQueue } from "@mailroom/core"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redis from "effect/persistence/Redis"

/** The URL without its credentials. */
const describeUrl = (url: string) => {
  const { protocol, host } = new URL(url)
  return `${protocol}//${host}`
}

type Requirements =
  | ObjectStore.ObjectStore
  | Organizations.Organizations
  | EmailProvider.EmailProvider
  | MessageLog.MessageLog
  | SendQueue.SendQueue

/** One check: undefined when ready, else why not (safe to show: no credential, no URL password). */
export type Check = Effect.Effect<string | undefined, never, Requirements>

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

/**
 * Whether a file can be written in `dir`: one byte in a file of its own, then removed. A full disk
 * (ENOSPC) or one made read-only fails here before it fails an upload or a send. No path is shown.
 */
const writable = (dir: string, what: string): Check =>
  Effect.promise(async () => {
    const file = join(dir, `.readyz-${process.pid}-${randomUUID()}.tmp`)
    try {
      await mkdir(dir, { recursive: true })
      const handle = await open(file, "wx")
      try {
        await handle.write(probe)
      } finally {
        await handle.close()
      }
      return undefined
    } catch (error) {
      const code = (error as { readonly code?: unknown }).code
      return `${what} cannot be written${typeof code === "string" ? ` (${code})` : ""}`
    } finally {
      await rm(file, { force: true }).catch(() => undefined)
    }
  })
const probe = new Uint8Array([0x0a])

/** The first problem of two checks run together. */
const both = (first: Check, second: Check): Check =>
  Effect.map(Effect.all([first, second], { concurrency: 2 }), ([a, b]) => a ?? b)

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

// A provider's own `verify` (credentials resolve, the vendor answers and takes them).
const verified = (provider: EmailProvider.EmailProvider): Effect.Effect<string | undefined> =>
  (provider.verify ?? Effect.void).pipe(
    Effect.as(undefined),
    Effect.catch((error) => Effect.succeed(`${error.provider}: ${error.message}`))
  )

// A lookup of a message that does not exist reaches the records' database (nothing caches it).
const records: Check = Effect.flatMap(MessageLog.MessageLog, (log) =>
  log.find("_mailroom_readyz", "00000000-0000-7000-8000-000000000000").pipe(
    Effect.as(undefined),
    Effect.catch((error) => Effect.succeed(error.message))
  )
)

// A read of the queue's table: a database that cannot be reached, or a table that is gone.
const queue: Check = Effect.flatMap(SendQueue.SendQueue, (service) =>
  service.check.pipe(
    Effect.as(undefined),
    Effect.catch((error) => Effect.succeed(error.message))
  )
)

/**
 * `check` made at most every 15 seconds while it passes and every 5 seconds while it fails: a vendor
 * counts each call against the account's rate limit (Resend: 2 requests a second for the whole team),
 * which probes from every instance every few seconds would otherwise spend; 15 s is still within the
 * time a load balancer takes to act on a few failed probes.
 */
export const throttled = (check: Check): Check => {
  let last: { readonly at: number; readonly problem: string | undefined } | undefined
  return Effect.flatMap(Clock.currentTimeMillis, (now) => {
    if (last !== undefined && now - last.at < (last.problem === undefined ? 15_000 : 5_000)) {
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
  /** Where the local disk store writes its uploads, when storage is local. */
  readonly storageDir?: string | undefined
  /** The outbox's directory, when the provider is the outbox. */
  readonly outboxDir?: string | undefined
}) => {
  const { storageDir, outboxDir } = options
  const pings = new Map<string, Check>()
  // Throttled, each on its own: a vendor counts each verify against the account's limits (Resend: 2
  // requests a second for the whole team; an SMTP server: a connection each).
  const verifies = new Map<EmailProvider.EmailProvider, Check>()
  const verifyOf = (provider: EmailProvider.EmailProvider, what: string): Check => {
    let check = verifies.get(provider)
    if (check === undefined) {
      check = throttled(bounded(verified(provider), what))
      verifies.set(provider, check)
    }
    return check
  }
  /**
   * `provider`: its verify, then what the server knows of it (the SES quota could not be read at the
   * last try). A failover's providers each get `provider.{name}` too; it is ready when one of them is.
   */
  const providerChecks = Effect.flatMap(
    EmailProvider.EmailProvider,
    (service): Effect.Effect<ReadonlyArray<readonly [string, string | undefined, boolean]>, never, Requirements> => {
      const members = service.members
      if (members === undefined) {
        return Effect.map(verifyOf(service, "the email provider"), (problem) => [
          ["provider", problem ?? options.providerProblem(), true]
        ])
      }
      return Effect.map(
        Effect.forEach(members, (member) => verifyOf(member, `the ${member.name} provider`), {
          concurrency: "unbounded"
        }),
        (problems) => [
          [
            "provider",
            problems.some((p) => p === undefined)
              ? options.providerProblem()
              : "no provider of the failover is ready (see provider.*)",
            true
          ],
          ...members.map((member, i) => [`provider.${member.name}`, problems[i], false] as const)
        ]
      )
    }
  )
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
    [
      "storage",
      bounded(
        storageDir === undefined ? storage : both(storage, writable(storageDir, "the storage directory")),
        "the object store"
      )
    ],
    ...(outboxDir === undefined
      ? []
      : [["outbox", bounded(writable(outboxDir, "the outbox directory"), "the outbox directory")] as const]),
    ...(options.postgres ? [["organizations", bounded(database, "PostgreSQL")] as const] : []),
    ...(options.messages === undefined
      ? []
      : [
          ["messages", bounded(records, options.messages)] as const,
          ["queue", bounded(queue, options.messages)] as const
        ]),
    ...[...pings].map(
      ([url, ping], i) =>
        [pings.size === 1 ? "redis" : `redis${i + 1}`, bounded(ping, `Redis at ${describeUrl(url)}`)] as const
    )
  ]
  /**
   * `{ready, checks: {name: "ok" | why}}`, every check run at once. A failover's `provider.{name}`
   * entries inform: the failover's own `provider` entry decides.
   */
  const readiness = Effect.gen(function* () {
    const named = checks()
    const [results, provider] = yield* Effect.all(
      [Effect.forEach(named, ([, check]) => check, { concurrency: "unbounded" }), providerChecks],
      { concurrency: "unbounded" }
    )
    const entries = [...named.map(([name], i) => [name, results[i], true] as const), ...provider]
    const body: Record<string, string> = {}
    for (const [name, problem] of entries) body[name] = problem ?? "ok"
    return { ready: entries.every(([, problem, decides]) => problem === undefined || !decides), checks: body }
  })
  return { watchRedis, readiness }
}
