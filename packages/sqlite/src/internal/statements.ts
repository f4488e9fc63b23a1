// How SqliteClient runs a statement on node:sqlite, shared by its effect per statement and its direct
// path: one statement per text, parameters bound as other drivers bind them, errors as SqlError.
import type { DatabaseSync, SQLInputValue } from "node:sqlite"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import * as Errors from "effect/sql/SqlError"

// node:sqlite compiles the first statement of a string and silently drops the rest: refuse instead.
export const prepare = (db: DatabaseSync, sql: string) => {
  const statement = db.prepare(sql)
  const rest = sql.startsWith(statement.sourceSQL) ? sql.slice(statement.sourceSQL.length) : ""
  if (!/^(?:\s|;|--[^\n]*(?:\n|$)|\/\*[\s\S]*?\*\/)*$/.test(rest)) {
    throw new Error("node:sqlite runs one statement per query: split the SQL, one statement per query")
  }
  return statement
}

// Positional parameters after an empty named-parameter object: node:sqlite would otherwise read an
// object in first place (a Date, say) as named parameters and bind NULL. node:sqlite binds every number
// as REAL (42 reads back as "42.0" in text and JSON); whole numbers go in as INTEGER, as other drivers
// bind them. Booleans become 1 and 0, undefined NULL.
export const bind = (params: ReadonlyArray<unknown>): Array<SQLInputValue> =>
  params.map((value) => {
    switch (typeof value) {
      case "number":
        return Number.isSafeInteger(value) ? BigInt(value) : value
      case "boolean":
        return value ? 1n : 0n
      case "undefined":
        return null
      default:
        return value as SQLInputValue
    }
  })

export const attempt = <A>(operation: string, message: string, f: () => A): Effect.Effect<A, Errors.SqlError> =>
  Effect.try({ try: f, catch: (cause) => toSqlError(cause, operation, message) })

export const toSqlError = (cause: unknown, operation: string, message: string) => {
  // classifySqliteError reads SQLite's result code from `errno`; node:sqlite names it `errcode`.
  if (typeof cause === "object" && cause !== null && "errcode" in cause && !("errno" in cause)) {
    Object.assign(cause, { errno: cause.errcode })
  }
  const detail = cause instanceof Error ? `: ${cause.message}` : ""
  return new Errors.SqlError({
    reason: Errors.classifySqliteError(cause, { message: `${message}${detail}`, operation })
  })
}

// SQLITE_BUSY is retried, as SQLite's own busy handler would, but after an Effect sleep: node:sqlite's
// busy_timeout would block the thread, and with it the other client in this process holding the lock.
// SQLITE_BUSY_SNAPSHOT (517) is left alone: only a new transaction gets past it. The retry machinery is
// entered only once a statement has failed busy: a statement that succeeds (nearly all) pays nothing.
const isBusy = (error: Errors.SqlError) => {
  const code = (error.reason.cause as { readonly errcode?: unknown } | undefined)?.errcode
  return typeof code === "number" && (code & 0xff) === 5 && code !== 517
}

export const retryWhileBusy = (timeout: Duration.Input) => {
  const schedule = Schedule.max([
    Schedule.min([Schedule.exponential("1 millis"), Schedule.spaced("50 millis")]),
    Schedule.during(timeout)
  ])
  return <A>(effect: Effect.Effect<A, Errors.SqlError>): Effect.Effect<A, Errors.SqlError> =>
    Effect.catchIf(effect, isBusy, () => Effect.retry(effect, { schedule, while: isBusy }))
}
