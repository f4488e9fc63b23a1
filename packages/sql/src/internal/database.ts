// What SqlMessageLog and SqlSuppressions share on the client they are given: the schema brought up to
// date, a deadline on every operation, each failure as `Unavailable`, and locked read-modify-write.

import type { MailroomError } from "@mailroom/core"
import * as Adapter from "@mailroom/core/adapter"
import * as Clock from "effect/Clock"
import type * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as SqlClient from "effect/sql/SqlClient"
import * as SqlError from "effect/sql/SqlError"
import type * as Statement from "effect/sql/Statement"
import * as SqlMigrations from "../SqlMigrations.js"
import { toUnavailable } from "./errors.js"

/** The options both services take. */
export interface Options {
  /**
   * How long one operation may take, waiting for a connection included, before it fails with
   * `Unavailable`. Default 5 seconds. The operation is then interrupted, and a transaction rolls
   * back; only one whose commit was already sent to a server that stopped answering may complete.
   */
  readonly timeout?: Duration.Input | undefined
}

/**
 * A statement of fixed text, `?` for each parameter in order (numbered `$1`, `$2`... on PostgreSQL):
 * for the statements of every send, whose text is then made once, where a `Statement` is built and
 * compiled on each run (which costs more than SQLite takes to run the short ones, `pnpm bench records`).
 */
export class Fixed<A extends object> {
  /** The row type only. */
  declare readonly row?: A
  constructor(
    readonly text: string,
    readonly params: ReadonlyArray<unknown>
  ) {}
}

/** A statement of fixed text (see `Fixed`); `text` must hold no other `?` than its parameters'. */
export const fixed = <A extends object = Record<string, unknown>>(
  text: string,
  params: ReadonlyArray<unknown>
): Fixed<A> => new Fixed<A>(text, params)

const texts = new Map<string, string>()
/** `count` groups of `size` placeholders, `(?, ?), (?, ?)`; made once per shape. */
export const placeholders = (count: number, size = 1): string => {
  const key = `${count}x${size}`
  let text = texts.get(key)
  if (text === undefined) {
    const group = size === 1 ? "?" : `(${Array.from({ length: size }, () => "?").join(", ")})`
    text = Array.from({ length: count }, () => group).join(", ")
    if (size === 1) text = `(${text})`
    texts.set(key, text)
  }
  return text
}

/** Runs one statement, its rows answered: as the client runs it, or straight on its connection (`write`). */
export type Execute = <A extends object>(
  statement: Statement.Statement<A> | Fixed<A>
) => Effect.Effect<ReadonlyArray<A>, SqlError.SqlError>

export interface Database {
  /** The client, without the caller's name transforms: the columns are read as the schema names them. */
  readonly sql: SqlClient.SqlClient
  /** ` FOR UPDATE` on PostgreSQL, where a read that is about to be written locks its rows; nothing on SQLite. */
  readonly forUpdate: Statement.Fragment
  /** The same, as text for a `Fixed` statement. */
  readonly forUpdateText: string
  /** Runs a statement as the client runs it, outside `write` and `read`. */
  readonly execute: Execute
  /**
   * A transaction whose writes cannot interleave with another instance's: on SQLite it takes the
   * database's write lock as it begins (`BEGIN IMMEDIATE`), whatever the client's own default is.
   */
  readonly transaction: <A, E>(effect: Effect.Effect<A, E>) => Effect.Effect<A, E | SqlError.SqlError>
  /**
   * A write transaction as `transaction` makes one, its statements run through `execute`: on
   * `@mailroom/sqlite`'s client, straight on the connection (`directTransaction`), one effect for the
   * whole batch instead of a span, a compilation and a lease for each statement, which cost several
   * times what SQLite does for the short statements of a send's record (`pnpm bench records`).
   */
  readonly write: <A, E>(
    body: (execute: Execute) => Effect.Effect<A, E | SqlError.SqlError>
  ) => Effect.Effect<A, E | SqlError.SqlError>
  /** As `write`, outside a transaction: for reads. */
  readonly read: <A, E>(
    body: (execute: Execute) => Effect.Effect<A, E | SqlError.SqlError>
  ) => Effect.Effect<A, E | SqlError.SqlError>
  /** True on `@mailroom/sqlite`'s client, whose writes begun together share one commit. */
  readonly sharesCommits: boolean
  /** Runs `effect` against the deadline; a database failure or a missed deadline is `Unavailable`. */
  readonly run: <A, E>(
    operation: string,
    effect: Effect.Effect<A, E | SqlError.SqlError>
  ) => Effect.Effect<A, Exclude<E, SqlError.SqlError> | MailroomError.Unavailable>
}

/** `@mailroom/sqlite`'s connection to itself (its `SqliteClient.DirectConnection`), named here without depending on it. */
interface DirectConnection {
  readonly execute: <A extends object>(
    sql: string,
    params: ReadonlyArray<unknown>
  ) => Effect.Effect<ReadonlyArray<A>, SqlError.SqlError>
}

/** A client that runs batches straight on its connection: `@mailroom/sqlite`'s `SqliteClient`. */
interface DirectClient {
  readonly direct: <A, E>(
    f: (connection: DirectConnection) => Effect.Effect<A, E>
  ) => Effect.Effect<A, E | SqlError.SqlError>
  readonly directTransaction: <A, E>(
    f: (connection: DirectConnection) => Effect.Effect<A, E>
  ) => Effect.Effect<A, E | SqlError.SqlError>
}

const directOf = (sql: SqlClient.SqlClient): DirectClient | undefined => {
  const candidate = sql as Partial<DirectClient>
  return typeof candidate.direct === "function" && typeof candidate.directTransaction === "function"
    ? (candidate as DirectClient)
    : undefined
}

/** The current time as the records write it: ISO 8601, UTC, to the millisecond. */
export const now: Effect.Effect<string> = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms).toISOString())

/**
 * Checks the options, migrates, and answers the database. Fails with a `ConfigError` naming a bad
 * option (before anything touches the database), or `Unavailable` when the schema cannot be brought
 * up to date.
 */
export const open = (
  options: Options
): Effect.Effect<Database, Config.ConfigError | MailroomError.Unavailable, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const timeout = yield* Adapter.duration("timeout", options.timeout ?? "5 seconds")
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()
    yield* SqlMigrations.run.pipe(
      Effect.provideService(SqlClient.SqlClient, sql),
      Effect.mapError((cause) =>
        toUnavailable(
          "creating or updating the message tables",
          cause,
          "the database cannot be reached or refused a change (the cause says which)"
        )
      ),
      Effect.tapError((error) => Effect.logError(`[mailroom] ${error.message}: ${Adapter.describeCause(error.cause)}`))
    )

    // An outage fails every operation; the log hears of it once per ten seconds, not once per request.
    const logOutage = Adapter.outageLog()
    const unavailable = (operation: string, cause: unknown) =>
      Effect.andThen(
        logOutage(`[mailroom] the message database failed (${operation}): ${Adapter.describeCause(cause)}`),
        Effect.fail(toUnavailable(operation, cause))
      )

    const late = (operation: string) =>
      unavailable(operation, new Error(`no answer within ${Duration.format(timeout)}`))
    // setTimeout takes at most 2^31 - 1 ms (about 24 days), and fires at once past it.
    const millis = Math.min(Duration.toMillis(timeout), 2_147_483_647)
    // In a fiber of its own, left to finish at the deadline: interrupting a query waits for the server
    // to answer, and a server that stalls never does. Interrupted before it commits, a transaction
    // rolls back whenever it gets to. The deadline is one timer beside the fiber's observer, not
    // `Effect.timeoutOrElse`, whose race forks two more fibers: on every operation of every send, those
    // cost several times what the timer does (`pnpm bench records`). A wall-clock timer, as a deadline
    // on a database is: moving a test's clock does not make queries late.
    const deadline = <A, E>(operation: string, effect: Effect.Effect<A, E>) =>
      Effect.flatMap(Effect.forkDetach(effect), (fiber) =>
        Effect.callback<A, E | MailroomError.Unavailable>((resume) => {
          const timer = setTimeout(() => {
            stop()
            resume(Effect.andThen(Effect.forkDetach(Fiber.interrupt(fiber)), late(operation)))
          }, millis)
          const stop = fiber.addObserver((exit) => {
            clearTimeout(timer)
            resume(exit)
          })
          return Effect.sync(() => {
            clearTimeout(timer)
            stop()
          })
        })
      )
    const run = <A, E>(operation: string, effect: Effect.Effect<A, E | SqlError.SqlError>) =>
      deadline(operation, effect).pipe(
        Effect.catchIf(SqlError.isSqlError, (error) => unavailable(operation, error))
      ) as Effect.Effect<A, Exclude<E, SqlError.SqlError> | MailroomError.Unavailable>

    const transaction: Database["transaction"] = sql.onDialectOrElse({
      sqlite: () => (effect) =>
        sql.withTransaction(effect).pipe(Effect.provideService(SqlClient.BeginTransaction, "BEGIN IMMEDIATE")),
      orElse: () => (effect) => sql.withTransaction(effect)
    })

    const direct = directOf(sql)
    const forUpdateText = sql.onDialectOrElse({ pg: () => " FOR UPDATE", orElse: () => "" })
    // PostgreSQL numbers its parameters: each text converted once.
    const numbered = new Map<string, string>()
    const textOf = sql.onDialectOrElse({
      pg: () => (text: string) => {
        let converted = numbered.get(text)
        if (converted === undefined) {
          let n = 0
          converted = text.replace(/\?/g, () => `$${++n}`)
          numbered.set(text, converted)
        }
        return converted
      },
      orElse: () => (text: string) => text
    })
    const asClientRuns: Execute = <A extends object>(statement: Statement.Statement<A> | Fixed<A>) =>
      statement instanceof Fixed
        ? sql.unsafe<A>(textOf(statement.text), statement.params)
        : (statement as Statement.Statement<A>)
    const straight =
      (connection: DirectConnection): Execute =>
      <A extends object>(statement: Statement.Statement<A> | Fixed<A>) => {
        if (statement instanceof Fixed) {
          return connection.execute<A>(statement.text, statement.params)
        }
        const [text, params] = (statement as Statement.Statement<A>).compile()
        return connection.execute<A>(text, params)
      }

    return {
      sql,
      forUpdate: sql.literal(forUpdateText),
      forUpdateText,
      execute: asClientRuns,
      transaction,
      write:
        direct === undefined
          ? (body) => transaction(body(asClientRuns))
          : (body) => direct.directTransaction((connection) => body(straight(connection))),
      read:
        direct === undefined
          ? (body) => body(asClientRuns)
          : (body) => direct.direct((connection) => body(straight(connection))),
      sharesCommits: direct !== undefined,
      run
    }
  })
