// The runner that brings the tables of SqlMessageLog and SqlSuppressions up to date (both layers run
// it when built), recording each migration applied in its own table; the migrations are in schema.ts.
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as Migrator from "effect/sql/Migrator"
import * as SqlClient from "effect/sql/SqlClient"
import * as SqlError from "effect/sql/SqlError"
import { migrations } from "./internal/schema.js"

/**
 * Where applied migrations are recorded: neither Effect's default `effect_sql_migrations` nor
 * `@mailroom/postgres`'s `mailroom_migrations`, so each keeps its own history in a shared database.
 */
export const table = "mailroom_sql_migrations"

const loader = Migrator.fromRecord(migrations)
/** The id of the last migration: the schema is current once the table records it. */
const latest = Object.keys(migrations).length

/**
 * Whether the table records the last migration: one read, so that a start on a current database (the
 * usual one) skips the Migrator's transaction, its lock and its own reads. Anything else (no table yet,
 * an older schema, an error) answers false, and the Migrator decides, under its lock, what to apply.
 */
const isCurrent = (sql: SqlClient.SqlClient) =>
  sql<{ readonly latest: number | string | null }>`SELECT MAX(migration_id) AS latest FROM ${sql(table)}`.pipe(
    Effect.map((rows) => Number(rows[0]?.latest ?? 0) >= latest),
    Effect.orElseSucceed(() => false)
  )

/** Whether SQLite's write lock stayed held past the client's busy timeout. */
const isLocked = (error: Migrator.MigrationError | SqlError.SqlError) =>
  SqlError.isSqlError(error) && error.reason._tag === "LockTimeoutError"

/** How long an instance waits for another's migration on SQLite: rebuilding tables takes seconds per million rows. */
const lockedFor = Schedule.max([Schedule.spaced("200 millis"), Schedule.during("10 minutes")])

/**
 * Migrates under SQLite's write lock, taken as the transaction begins (`BEGIN IMMEDIATE`). An instance
 * that finds it held past its client's busy timeout (another instance migrating a large log) tries again
 * until it gets the lock, then finds nothing to do, where it would fail to start.
 */
const onSqlite = <A>(
  migrate: Effect.Effect<A, Migrator.MigrationError | SqlError.SqlError, SqlClient.SqlClient>
): Effect.Effect<A, Migrator.MigrationError | SqlError.SqlError, SqlClient.SqlClient> => {
  const once = Effect.provideService(migrate, SqlClient.BeginTransaction, "BEGIN IMMEDIATE")
  return Effect.catchIf(once, isLocked, () =>
    Effect.andThen(
      Effect.logWarning(
        "[mailroom] the message database is write-locked, another instance updating its schema: waiting"
      ),
      Effect.retry(once, { schedule: lockedFor, while: isLocked })
    )
  )
}

/**
 * Applies every migration the database has not seen, in one transaction, and answers the ones it
 * applied (`[[1, "messages"], [2, "queue"], [3, "clustered"]]`, or `[]` when the schema is current).
 * Safe to run from several instances at once: PostgreSQL locks the migrations table meanwhile; on
 * SQLite the transaction takes the write lock when it begins, so another instance waits (`onSqlite`),
 * then finds nothing to do. A database that records the last migration costs one read, without the
 * Migrator's transaction.
 */
export const run: Effect.Effect<
  ReadonlyArray<readonly [id: number, name: string]>,
  Migrator.MigrationError | SqlError.SqlError,
  SqlClient.SqlClient
> = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.flatMap(isCurrent(sql), (current) =>
    current
      ? Effect.succeed([])
      : Migrator.make({})({ loader, table }).pipe(
          sql.onDialectOrElse({ sqlite: () => onSqlite, orElse: () => (effect) => effect })
        )
  )
)

/** Runs the migrations while the layer is built (`SqlMessageLog` and `SqlSuppressions` do it themselves). */
export const layer: Layer.Layer<never, Migrator.MigrationError | SqlError.SqlError, SqlClient.SqlClient> =
  Layer.effectDiscard(run)
