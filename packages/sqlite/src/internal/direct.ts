// SqliteClient's direct path: batches of statements run straight on node:sqlite, with no effect per
// statement, and the transactions begun in one turn of the event loop committed together.
import type { DatabaseSync, StatementSync } from "node:sqlite"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Semaphore from "effect/Semaphore"
import type * as Errors from "effect/sql/SqlError"
import type { DirectConnection, SqliteClient } from "../SqliteClient.js"
import { attempt, bind, prepare } from "./statements.js"

type Control = "BEGIN IMMEDIATE" | "COMMIT" | "ROLLBACK" | "SAVEPOINT direct" | "RELEASE direct" | "ROLLBACK TO direct"

/** A write transaction open to the transactions that begin while it waits for the end of the turn. */
interface Group {
  open: boolean
  /** How many transactions have joined so far. */
  joined: number
  /** One member's function at a time. */
  readonly members: Semaphore.Semaphore
  /** Done once the group's COMMIT is: a member answers only then. */
  readonly committed: Deferred.Deferred<void, Errors.SqlError>
}

/**
 * The most turns a group stays open. It stays open for another turn only while the last one brought a
 * member: alone (one caller at a time) it commits at the end of its first turn, as it always did; under
 * load, the transactions a server begins over a few turns (each request's step resumes in a turn of
 * its own) share one commit, where one turn caught about three of them (`pnpm bench records`).
 */
const maxTurns = 4

/**
 * Group commit: the first `directTransaction` of a turn takes the client's permit, begins, runs its
 * function, then waits for the end of the turn (`setImmediate`), and of the next while transactions
 * keep joining (`maxTurns`); those that begin meanwhile run theirs
 * in the same transaction, each within a savepoint (one that fails is rolled back alone), and all
 * answer once the one COMMIT is done (when it fails, all fail, nothing of theirs written). Concurrent
 * sends then share a commit and the pages it writes. A transaction left open by a failed cleanup
 * (every other one holds the permit for its whole length) is rolled back first, as the client's
 * own lease does.
 */
export const make = (
  db: DatabaseSync,
  semaphore: Semaphore.Semaphore,
  whileBusy: <A>(effect: Effect.Effect<A, Errors.SqlError>) => Effect.Effect<A, Errors.SqlError>,
  committed: () => void = () => undefined
): Pick<SqliteClient, "direct" | "directTransaction"> => {
  // Kept by text, the oldest forgotten past 500 (a statement's text varies with its list lengths).
  const statements = new Map<string, StatementSync>()
  const statementOf = (sql: string) => {
    let statement = statements.get(sql)
    if (statement === undefined) {
      statement = prepare(db, sql)
      if (statements.size >= 500) statements.delete(statements.keys().next().value as string)
      statements.set(sql, statement)
    }
    return statement
  }
  const connection: DirectConnection = {
    execute: <A extends object>(sql: string, params: ReadonlyArray<unknown>) =>
      attempt(
        "execute",
        "Failed to execute statement",
        () => statementOf(sql).all({}, ...bind(params)) as unknown as ReadonlyArray<A>
      )
  }
  const control = (sql: Control) =>
    attempt("execute", `Failed to run ${sql}`, () => {
      statementOf(sql).run()
    })
  const clean = Effect.suspend(() => (db.isTransaction ? control("ROLLBACK") : Effect.void))
  const begin = Effect.andThen(clean, whileBusy(control("BEGIN IMMEDIATE")))
  const endOfTurn = Effect.callback<void>((resume) => {
    const handle = setImmediate(() => resume(Effect.void))
    return Effect.sync(() => clearImmediate(handle))
  })

  let current: Group | undefined

  const member = <A, E, R>(group: Group, f: (connection: DirectConnection) => Effect.Effect<A, E, R>) => {
    group.joined++
    return Effect.uninterruptible(
      Effect.flatMap(
        Effect.exit(
          group.members.withPermit(
            Effect.andThen(
              control("SAVEPOINT direct"),
              Effect.onExit(
                Effect.suspend(() => f(connection)),
                (exit) =>
                  Exit.isSuccess(exit)
                    ? control("RELEASE direct")
                    : Effect.andThen(control("ROLLBACK TO direct"), control("RELEASE direct"))
              )
            )
          )
        ),
        (exit) => Effect.andThen(Deferred.await(group.committed), exit)
      )
    )
  }

  const lead = <A, E, R>(f: (connection: DirectConnection) => Effect.Effect<A, E, R>) =>
    semaphore.withPermit(
      Effect.uninterruptibleMask((restore) =>
        Effect.gen(function* () {
          yield* restore(begin)
          const own = yield* Effect.exit(Effect.suspend(() => f(connection)))
          // Nobody has joined yet: a failure is the whole transaction's.
          if (Exit.isFailure(own)) return yield* Effect.andThen(Effect.ignore(clean), own)
          const group: Group = {
            open: true,
            joined: 0,
            members: Semaphore.makeUnsafe(1),
            committed: Deferred.makeUnsafe()
          }
          current = group
          for (let turn = 0, seen = -1; turn < maxTurns && group.joined > seen; turn++) {
            seen = group.joined
            yield* endOfTurn
          }
          group.open = false
          current = undefined
          const commit = yield* Effect.exit(group.members.withPermit(control("COMMIT")))
          if (Exit.isSuccess(commit)) committed()
          else yield* Effect.ignore(clean)
          yield* Deferred.done(group.committed, commit)
          return yield* Effect.andThen(commit, own)
        })
      )
    )

  return {
    // Between the statements of an open group (it holds the permit), or with the permit.
    direct: (f) =>
      Effect.suspend(() => {
        const group = current
        return group?.open === true
          ? group.members.withPermit(Effect.suspend(() => f(connection)))
          : semaphore.withPermit(
              Effect.andThen(
                clean,
                Effect.suspend(() => f(connection))
              )
            )
      }),
    directTransaction: (f) =>
      Effect.suspend(() => {
        const group = current
        return group?.open === true ? member(group, f) : lead(f)
      })
  }
}
