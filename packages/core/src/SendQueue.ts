// The queue of scheduled sends: Effect's PersistedQueue says when to look at a message (the message log
// holds its state), and the worker looks, sends through the Mailer, and sweeps up what was missed.
import { createHash } from "node:crypto"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as PersistedQueue from "effect/persistence/PersistedQueue"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as SqlClient from "effect/sql/SqlClient"
import type * as SqlError from "effect/sql/SqlError"
import { SendQueue } from "./internal/sendQueueService.js"
import { Mailer } from "./Mailer.js"
import { Unavailable } from "./MailroomError.js"
import * as MailroomMetrics from "./MailroomMetrics.js"
import { type Due, MessageLog } from "./MessageLog.js"

export { type Attempt, SendQueue } from "./internal/sendQueueService.js"

/** How a queue keeps its looks: its name and how often a look is tried. */
export interface Options {
  /** The queue's name in its store. Default "mailroom-sends". */
  readonly name?: string
  /** Looks at one message and time before it is given up (the message is then `failed`). Default 10. */
  readonly maxAttempts?: number
}

const Queued = Schema.Struct({ id: Schema.String, organizationId: Schema.String, scheduledAt: Schema.String })

/** A UUID-shaped digest of the message and its time: the stores keep ids of at most 36 characters. */
const lookId = (due: Due) => {
  const hex = createHash("sha256").update(`${due.id}\n${due.scheduledAt}`).digest("hex")
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`
}

const unavailable = (message: string) => (cause: unknown) =>
  new Unavailable({ message, cause, retryAfter: Duration.seconds(1) })

/**
 * The queue on the `PersistedQueueStore` in context: the store decides where looks are kept.
 * `check` is how readiness reaches that store (default: nothing to reach).
 */
export const make = (
  options: Options = {},
  check: Effect.Effect<void, Unavailable> = Effect.void
): Effect.Effect<SendQueue, never, PersistedQueue.PersistedQueueStore> =>
  Effect.gen(function* () {
    const maxAttempts = Math.max(1, options.maxAttempts ?? 10)
    // A factory of its own on the store in context: `PersistedQueue.layer` is one value, so a layer
    // of it would be built once per runtime and bound to whichever store came first (the webhooks').
    const factory = yield* PersistedQueue.makeFactory
    const queue = yield* factory.make({
      name: options.name ?? "mailroom-sends",
      schema: Queued,
      maxAttempts,
      retrySchedule: Schedule.min([Schedule.exponential("1 second"), Schedule.spaced("5 minutes")])
    })
    return SendQueue.of({
      offer: (due) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => {
          const delay = Date.parse(due.scheduledAt) - now
          return queue.offer(due, { id: lookId(due), ...(delay > 0 ? { delay: Duration.millis(delay) } : {}) })
        }).pipe(Effect.asVoid, Effect.mapError(unavailable("the send queue could not take the message"))),
      take: (handle) =>
        queue
          .take((due, { attempts }) => handle(due, { attempts, last: attempts >= maxAttempts }))
          .pipe(
            Effect.catchIf(
              (error): error is PersistedQueue.PersistedQueueError =>
                error instanceof PersistedQueue.PersistedQueueError,
              (error) => Effect.fail(unavailable("the send queue could not be read")(error))
            )
          ),
      check
    })
  })

/** The queue on the `PersistedQueueStore` in context. */
export const layer = (options: Options = {}): Layer.Layer<SendQueue, never, PersistedQueue.PersistedQueueStore> =>
  Layer.effect(SendQueue, make(options))

/**
 * The queue in memory: for tests, and a single process whose message log is in memory too. Completed
 * looks are forgotten after 2 days.
 */
export const layerMemory = (options: Options = {}): Layer.Layer<SendQueue> =>
  layer(options).pipe(
    Layer.merge(PersistedQueue.layerCleanup({ timeToLive: "2 days" })),
    // Fresh: the memory store is one value too, and this queue's store is its own.
    Layer.provide(Layer.fresh(PersistedQueue.layerStoreMemory))
  )

/** A queue on the records' SQL database: its table and how often an idle worker asks it. */
export interface SqlOptions extends Options {
  /** The table of the looks. Default "mailroom_send_queue". */
  readonly tableName?: string
  /** How often an idle worker asks the database for due looks. Default 1 second. */
  readonly pollInterval?: Duration.Input
  /**
   * How long a look taken by an instance that stopped stays locked before another takes it. Default
   * 30 seconds (each live instance renews its own every 10). The message it held is then found
   * `sending`: see `EmailProvider.deduplicatesByKey`.
   */
  readonly lockExpiration?: Duration.Input
}

/**
 * The queue on the database of the `SqlClient` in context (SQLite or PostgreSQL; the message log's),
 * shared by every instance: each due look is taken by one, and delays are counted in whole seconds by
 * the database's clock. Completed looks are kept 2 days (a repeated offer then adds nothing), then deleted.
 */
export const layerSql = (options: SqlOptions = {}): Layer.Layer<SendQueue, SqlError.SqlError, SqlClient.SqlClient> => {
  const lockExpiration = Duration.fromInputUnsafe(options.lockExpiration ?? "30 seconds")
  const store = PersistedQueue.layerStoreSql({
    tableName: options.tableName ?? "mailroom_send_queue",
    pollInterval: options.pollInterval ?? "1 second",
    lockExpiration,
    lockRefreshInterval: Duration.max(Duration.millis(100), Duration.divideUnsafe(lockExpiration, 3))
  })
  const tableName = options.tableName ?? "mailroom_send_queue"
  const queue = Layer.effect(
    SendQueue,
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      make(
        options,
        sql`SELECT 1 FROM ${sql(tableName)} LIMIT 1`.pipe(
          Effect.timeout("5 seconds"),
          Effect.asVoid,
          Effect.mapError(unavailable("the send queue's database cannot be reached"))
        )
      )
    )
  )
  return queue.pipe(Layer.merge(PersistedQueue.layerCleanup({ timeToLive: "2 days" })), Layer.provide(store))
}

/** How much one instance's worker sends at once, and how often it sweeps. */
export interface WorkerOptions {
  /** Messages sent at once by this instance. Default 16. */
  readonly concurrency?: number
  /** How often the log is swept for what the queue missed, and for sends that stalled. Default 1 minute. */
  readonly sweepInterval?: Duration.Input
  /** A message still `scheduled` this long after its time is sent by the sweep (its look was lost). Default 15 minutes. */
  readonly missedAfter?: Duration.Input
  /**
   * A message `sending` for this long was left by an instance that stopped: it is sent again where the
   * provider de-duplicates by key, else recorded `unknown` (never sent twice). Default 10 minutes.
   */
  readonly stalledAfter?: Duration.Input
  /** A missed message not sent after this long past its time is `failed`. Default 24 hours. */
  readonly giveUpAfter?: Duration.Input
  /** How often the backlog gauges are refreshed. Default 10 seconds. */
  readonly metricsInterval?: Duration.Input
}

const millis = (input: Duration.Input | undefined, fallback: Duration.Input) =>
  Duration.toMillis(Duration.fromInputUnsafe(input ?? fallback))

const counted = (outcome: string) =>
  Metric.update(Metric.withAttributes(MailroomMetrics.scheduledSends, { outcome }), 1)

/** Logs what failed and goes on: a worker never stops for one message or one outage. */
const survive =
  (what: string) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<void, never, R> =>
    Effect.catchCause(Effect.asVoid(effect), (cause) =>
      Cause.hasInterruptsOnly(cause)
        ? Effect.failCause(cause as Cause.Cause<never>)
        : Effect.logWarning(`[mailroom] send queue: ${what}: ${Cause.pretty(cause)}`)
    )

/**
 * The worker, in the current scope: `concurrency` fibers taking due looks, and one that sweeps the log
 * for what the queue missed and for stalled sends, and refreshes the backlog gauges. Run it in every
 * instance: each look is taken by one of them, and the log's claim lets each message leave once.
 */
export const worker = (
  options: WorkerOptions = {}
): Effect.Effect<void, never, SendQueue | Mailer | MessageLog | Scope.Scope> =>
  Effect.gen(function* () {
    const queue = yield* SendQueue
    const mailer = yield* Mailer
    const log = yield* MessageLog
    const missedAfter = millis(options.missedAfter, "15 minutes")
    const stalledAfter = millis(options.stalledAfter, "10 minutes")
    const giveUpAfter = millis(options.giveUpAfter, "24 hours")
    const iso = (ms: number) => new Date(ms).toISOString()

    const take = queue
      .take((due, attempt) => Effect.flatMap(mailer.dispatch(due, attempt), counted))
      .pipe(
        Effect.tapError(() => counted("retried")),
        // A failed look is tried again by the queue; a store out of reach is waited out.
        Effect.catch((error) =>
          Effect.andThen(Effect.logDebug(`[mailroom] ${error.message}`), Effect.sleep("1 second"))
        ),
        survive("a look failed"),
        Effect.forever
      )
    for (let i = 0; i < Math.max(1, options.concurrency ?? 16); i++) yield* Effect.forkScoped(take)

    const sweep = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      for (const due of yield* log.due(iso(now - missedAfter), 100)) {
        const last = now - Date.parse(due.scheduledAt) > giveUpAfter
        yield* mailer.dispatch(due, { attempts: 1, last }).pipe(Effect.flatMap(counted), survive(`message ${due.id}`))
      }
      for (const id of yield* log.stalled(iso(now - stalledAfter), 100)) {
        yield* mailer.recover(id).pipe(Effect.flatMap(counted), survive(`message ${id}`))
      }
    })
    const gauges = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const backlog = yield* log.backlog(iso(now))
      yield* Metric.update(MailroomMetrics.scheduledMessages, backlog.scheduled)
      const late = backlog.oldestDue === null ? 0 : Math.max(0, (now - Date.parse(backlog.oldestDue)) / 1000)
      yield* Metric.update(MailroomMetrics.oldestDueSeconds, late)
    })
    const every = (interval: Duration.Input, effect: Effect.Effect<void, Unavailable>, what: string) =>
      Effect.forkScoped(Effect.repeat(survive(what)(effect), Schedule.spaced(Duration.fromInputUnsafe(interval))))
    yield* every(options.sweepInterval ?? "1 minute", sweep, "the sweep failed")
    yield* every(options.metricsInterval ?? "10 seconds", gauges, "the backlog could not be counted")
  })

/** The worker as a layer: it runs while the layer is in use. */
export const layerWorker = (options: WorkerOptions = {}): Layer.Layer<never, never, SendQueue | Mailer | MessageLog> =>
  Layer.effectDiscard(worker(options))
