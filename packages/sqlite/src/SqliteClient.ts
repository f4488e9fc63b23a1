// Stands in for @effect/sql-sqlite-node, which has no release for effect 4.1's module paths: retire this
// package when one ships, and switch the import (the API below mirrors its SqliteClient).
// A SqlClient on Node's built-in node:sqlite (no native build): one connection per client, statements
// serialised, WAL by default, a busy database waited for with Effect's sleep, never the event loop's.
import { mkdirSync } from "node:fs"
import { dirname, resolve } from "node:path"
import type { DatabaseSync, StatementSync } from "node:sqlite"
import * as Cache from "effect/Cache"
import * as Cause from "effect/Cause"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
// The module, not the `effect/reactivity` barrel, which also loads Atom, AtomHttpApi and AtomRpc (60 to 90 ms).
import * as Reactivity from "effect/reactivity/Reactivity"
import type * as Scope from "effect/Scope"
import * as Semaphore from "effect/Semaphore"
import * as Stream from "effect/Stream"
import * as Client from "effect/sql/SqlClient"
import type * as SqlConnection from "effect/sql/SqlConnection"
import type * as Errors from "effect/sql/SqlError"
import * as Statement from "effect/sql/Statement"
import * as Checkpoints from "./internal/checkpoints.js"
import * as Direct from "./internal/direct.js"
import { attempt, bind, prepare, retryWhileBusy, toSqlError } from "./internal/statements.js"

// Checked before node:sqlite is touched, so an older Node gets this message rather than a missing module.
const loadNodeSqlite = () => {
  const [major = 0, minor = 0] = process.versions.node.split(".").map(Number)
  if (major < 22 || major === 23 || (major === 22 && minor < 16)) {
    throw new Error(
      `@mailroom/sqlite needs Node.js 22.16 or later, or 24 or later (node:sqlite without a flag, with ` +
        `StatementSync.columns and setReturnArrays); this is Node.js ${process.versions.node}`
    )
  }
  return process.getBuiltinModule("node:sqlite")
}

const sqlite = loadNodeSqlite()

/** Marks a `SqliteClient` value. */
export const TypeId = "~@mailroom/sqlite/SqliteClient" as const
/** Marks a `SqliteClient` value. */
export type TypeId = typeof TypeId

/** A `SqlClient` on one SQLite file, with backup and extension loading. `updateValues` has no SQLite form. */
export interface SqliteClient extends Client.SqlClient {
  readonly [TypeId]: TypeId
  /** The options the client was made with. */
  readonly config: SqliteClientConfig
  /** Copies the live database to `destination` (node:sqlite's online backup). */
  readonly backup: (destination: string) => Effect.Effect<BackupMetadata, Errors.SqlError>
  /** Loads a SQLite extension; SQL's own `load_extension()` stays off. */
  readonly loadExtension: (path: string) => Effect.Effect<void, Errors.SqlError>
  /** Not supported by SQLite. */
  readonly updateValues: never
  /**
   * Runs `f` with the connection to itself, in one write transaction (`BEGIN IMMEDIATE`, committed when
   * `f` succeeds, rolled back when it fails or is interrupted). Its statements run straight on
   * node:sqlite, with no span, compilation or lease each: for a batch of short statements, where those
   * cost more than SQLite does. Not within the client's own `withTransaction`, whose lease it waits for.
   */
  readonly directTransaction: <A, E, R>(
    f: (connection: DirectConnection) => Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E | Errors.SqlError, R>
  /** Copies the WAL into the database file now (a PASSIVE checkpoint, in the background when it runs there). */
  readonly checkpoint: Effect.Effect<Checkpoints.CheckpointResult, Errors.SqlError>
  /** As `directTransaction`, outside a transaction: for reads. */
  readonly direct: <A, E, R>(
    f: (connection: DirectConnection) => Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E | Errors.SqlError, R>
}

/** The connection `direct` and `directTransaction` hand over, usable only while their function runs. */
export interface DirectConnection {
  /** The rows of one statement, prepared once per SQL text, bound as the client binds; integers as numbers. */
  readonly execute: <A extends object = Record<string, unknown>>(
    sql: string,
    params: ReadonlyArray<unknown>
  ) => Effect.Effect<ReadonlyArray<A>, Errors.SqlError>
}

/** What a backup copied. */
export interface BackupMetadata {
  readonly totalPages: number
  readonly remainingPages: number
}

/** The service key of the client; `layer` provides it beside `SqlClient.SqlClient`. */
export const SqliteClient = Context.Service<SqliteClient>("@mailroom/sqlite/SqliteClient")

/** Options of `make`, `layer` and `layerConfig`, as `@effect/sql-sqlite-node` names them. */
export interface SqliteClientConfig {
  /** Path of the database file (its directory is created), or `":memory:"`. */
  readonly filename: string
  /** Open read-only: no WAL switch, no directory created, plain `BEGIN`. Default `false`. */
  readonly readonly?: boolean | undefined
  /** How many prepared statements to keep. Default 200. */
  readonly prepareCacheSize?: number | undefined
  /** How long an unused prepared statement is kept. Default 10 minutes. */
  readonly prepareCacheTTL?: Duration.Input | undefined
  /** Keep SQLite's rollback journal instead of switching the file to WAL. Default `false`. */
  readonly disableWAL?: boolean | undefined
  /**
   * Where the WAL is copied into the database file: `"background"`, a worker thread with its own
   * connection, asked every 100 commits of `directTransaction` (SQLite's own checkpoint stays, at
   * 4000 pages, for a log that grows faster); or `"inline"`, SQLite's own checkpoint (every 1000
   * pages), on the thread that commits, two fsyncs and the copy blocking the event loop. Default
   * `"background"` for a file in WAL mode.
   */
  readonly walCheckpoint?: "background" | "inline" | undefined
  /**
   * How long a statement waits for another connection's write lock before failing with a
   * `LockTimeoutError`. Default 5 seconds. Waited with Effect's `sleep`, so the event loop keeps running.
   */
  readonly busyTimeout?: Duration.Input | undefined
  /** Added to every span the client records. */
  readonly spanAttributes?: Record<string, unknown> | undefined
  /** Renames result columns (e.g. `String.snakeToCamel`). */
  readonly transformResultNames?: ((str: string) => string) | undefined
  /** Renames identifiers in queries (e.g. `String.camelToSnake`). */
  readonly transformQueryNames?: ((str: string) => string) | undefined
}

interface SqliteConnection extends SqlConnection.Connection {
  readonly backup: (destination: string) => Effect.Effect<BackupMetadata, Errors.SqlError>
  readonly loadExtension: (path: string) => Effect.Effect<void, Errors.SqlError>
}

/**
 * Opens the database and builds the client; the database closes with the scope. Fails with a `SqlError`
 * when the file cannot be opened.
 */
export const make = (
  options: SqliteClientConfig
): Effect.Effect<SqliteClient, Errors.SqlError, Scope.Scope | Reactivity.Reactivity> =>
  Effect.gen(function* () {
    const whileBusy = retryWhileBusy(options.busyTimeout ?? Duration.seconds(5))
    const db = yield* attempt("open", "Failed to open database", () => open(options))
    yield* Effect.addFinalizer(() => Effect.sync(() => db.isOpen && db.close()))
    // Savepoints' journals (each transaction of a group commit has one) and temporary tables in memory:
    // on a file, each transaction holding a savepoint otherwise created, wrote and deleted a temporary
    // file of its own, about a tenth of the time of a send's record (`pnpm bench records`).
    yield* attempt("open", "Failed to keep temporary data in memory", () => db.exec("PRAGMA temp_store = MEMORY"))
    const wal = options.readonly !== true && options.disableWAL !== true
    if (wal) {
      yield* whileBusy(attempt("open", "Failed to switch to WAL", () => db.exec("PRAGMA journal_mode = WAL")))
    }
    const checkpoints =
      wal && isFile(options.filename) && options.walCheckpoint !== "inline"
        ? Checkpoints.make(resolve(options.filename), 100)
        : undefined
    if (checkpoints !== undefined) {
      yield* attempt("open", "Failed to set wal_autocheckpoint", () => db.exec("PRAGMA wal_autocheckpoint = 4000"))
      yield* Effect.addFinalizer(() => Effect.promise(checkpoints.close))
    }
    const connection = yield* makeConnection(db, options, whileBusy)
    const semaphore = yield* Semaphore.make(1)
    const acquirers = Client.makeSqliteAcquirers({
      connection: Effect.succeed(connection),
      semaphore,
      isTransaction: () => db.isTransaction
    })
    const client = yield* Client.make({
      ...acquirers,
      compiler: Statement.makeCompilerSqlite(options.transformQueryNames),
      driver: "sqlite-node",
      // IMMEDIATE takes the write lock at BEGIN, so a transaction never fails half-way upgrading a read lock.
      beginTransaction: options.readonly === true ? "BEGIN" : "BEGIN IMMEDIATE",
      prepareTransactionControls: true,
      releaseSavepoint: (name) => `RELEASE SAVEPOINT ${name}`,
      spanAttributes: [...Object.entries(options.spanAttributes ?? {}), ["db.system.name", "sqlite"]],
      transformRows: options.transformResultNames
        ? Statement.defaultTransforms(options.transformResultNames).array
        : undefined
    })
    const leased = <A>(f: (connection: SqliteConnection) => Effect.Effect<A, Errors.SqlError>) =>
      Effect.scoped(Effect.flatMap(acquirers.acquirer, f))
    return Object.assign(client, {
      [TypeId]: TypeId,
      config: options,
      backup: (destination: string) => leased((c) => c.backup(destination)),
      loadExtension: (path: string) => leased((c) => c.loadExtension(path)),
      checkpoint:
        checkpoints === undefined
          ? leased(() => inlineCheckpoint(db))
          : Effect.tryPromise({
              try: checkpoints.now,
              catch: (cause) => toSqlError(cause, "checkpoint", "Failed to checkpoint the WAL")
            }),
      ...Direct.make(db, semaphore, whileBusy, checkpoints?.committed)
    }) as SqliteClient
  })

/** A layer of `SqliteClient` and Effect's `SqlClient`, the database closed when the layer's scope closes. */
export const layer = (config: SqliteClientConfig): Layer.Layer<SqliteClient | Client.SqlClient, Errors.SqlError> =>
  layerFrom(make(config))

/** As `layer`, with the options read through Effect `Config`. */
export const layerConfig = (
  config: Config.Wrap<SqliteClientConfig>
): Layer.Layer<SqliteClient | Client.SqlClient, Config.ConfigError | Errors.SqlError> =>
  layerFrom(Effect.flatMap(Config.unwrap(config), make))

const layerFrom = <E>(acquire: Effect.Effect<SqliteClient, E, Scope.Scope | Reactivity.Reactivity>) =>
  Layer.effectContext(
    Effect.map(acquire, (client) => Context.make(SqliteClient, client).pipe(Context.add(Client.SqlClient, client)))
  ).pipe(Layer.provide(Reactivity.layer))

// internal

const makeConnection = (
  db: DatabaseSync,
  options: SqliteClientConfig,
  whileBusy: <A>(effect: Effect.Effect<A, Errors.SqlError>) => Effect.Effect<A, Errors.SqlError>
) =>
  Effect.gen(function* () {
    const cache = yield* Cache.make({
      capacity: options.prepareCacheSize ?? 200,
      timeToLive: options.prepareCacheTTL ?? Duration.minutes(10),
      lookup: (sql: string) => whileBusy(attempt("prepare", "Failed to prepare statement", () => prepare(db, sql)))
    })
    // A failed prepare is not kept: the table it named may exist by the next call.
    const prepared = (sql: string) => Effect.tapError(Cache.get(cache, sql), () => Cache.invalidate(cache, sql))
    const unprepared = (sql: string) =>
      whileBusy(attempt("prepare", "Failed to prepare statement", () => prepare(db, sql)))

    const run = (statement: StatementSync, params: ReadonlyArray<unknown>, mode: "rows" | "raw" | "values") =>
      Effect.withFiber((fiber) => {
        const safeIntegers = fiber.getRef(Client.SafeIntegers)
        return whileBusy(
          attempt("execute", "Failed to execute statement", (): ReadonlyArray<unknown> | RawResult => {
            statement.setReadBigInts(safeIntegers)
            statement.setReturnArrays(mode === "values")
            if (mode === "raw" && statement.columns().length === 0) {
              const { changes, lastInsertRowid } = statement.run({}, ...bind(params))
              return { changes, lastInsertRowid }
            }
            return statement.all({}, ...bind(params))
          })
        )
      })
    const rows = (statement: Effect.Effect<StatementSync, Errors.SqlError>, params: ReadonlyArray<unknown>) =>
      Effect.flatMap(statement, (s) => run(s, params, "rows")) as Effect.Effect<ReadonlyArray<never>, Errors.SqlError>
    const values = (statement: Effect.Effect<StatementSync, Errors.SqlError>, params: ReadonlyArray<unknown>) =>
      Effect.flatMap(statement, (s) => run(s, params, "values")) as Effect.Effect<
        ReadonlyArray<ReadonlyArray<unknown>>,
        Errors.SqlError
      >
    const transformed = <A>(effect: Effect.Effect<ReadonlyArray<A>, Errors.SqlError>, transform?: Transform) =>
      transform ? Effect.map(effect, (r) => transform(r as ReadonlyArray<object>)) : effect

    return {
      execute: (sql, params, transform) => transformed(rows(prepared(sql), params), transform),
      executeRaw: (sql, params) => Effect.flatMap(prepared(sql), (s) => run(s, params, "raw")),
      executeValues: (sql, params) => values(prepared(sql), params),
      executeValuesUnprepared: (sql, params) => values(unprepared(sql), params),
      executeUnprepared: (sql, params, transform) => transformed(rows(unprepared(sql), params ?? []), transform),
      executeStream: (sql, params, transform) => stream(unprepared(sql), params, transform),
      backup: (destination) =>
        Effect.tryPromise({
          try: () => sqlite.backup(db, destination),
          catch: (cause) => toSqlError(cause, "backup", "Failed to back up database")
        }).pipe(Effect.map((totalPages): BackupMetadata => ({ totalPages, remainingPages: 0 }))),
      loadExtension: (path) =>
        Effect.acquireUseRelease(
          Effect.sync(() => db.enableLoadExtension(true)),
          () => attempt("loadExtension", "Failed to load extension", () => db.loadExtension(path)),
          () => Effect.sync(() => db.enableLoadExtension(false))
        )
    } satisfies SqliteConnection
  })

type Transform = <A extends object>(rows: ReadonlyArray<A>) => ReadonlyArray<A>

interface RawResult {
  readonly changes: number | bigint
  readonly lastInsertRowid: number | bigint
}

// Rows are read in chunks from one iterator; the stream holds the connection until it ends.
const stream = (
  statement: Effect.Effect<StatementSync, Errors.SqlError>,
  params: ReadonlyArray<unknown>,
  transform: Transform | undefined
): Stream.Stream<object, Errors.SqlError> =>
  Stream.unwrap(
    Effect.gen(function* () {
      const s = yield* statement
      const safeIntegers = yield* Client.SafeIntegers
      const iterator = yield* Effect.acquireRelease(
        attempt("execute", "Failed to execute statement", () => {
          s.setReadBigInts(safeIntegers)
          return s.iterate({}, ...bind(params))
        }),
        (iterator) => Effect.sync(() => iterator.return?.())
      )
      const chunk = Effect.flatMap(
        attempt("execute", "Failed to execute statement", () => {
          const rows: Array<object> = []
          for (let next = iterator.next(); !next.done; next = iterator.next()) {
            rows.push(next.value)
            if (rows.length === 256) break
          }
          return rows
        }),
        (rows) => (rows.length === 0 ? Cause.done() : Effect.succeed(transform ? transform(rows) : rows))
      )
      return Stream.fromIterableEffectRepeat(chunk)
    })
  )

const isFile = (filename: string) => filename !== "" && filename !== ":memory:" && !filename.startsWith("file:")

const inlineCheckpoint = (db: DatabaseSync) =>
  attempt("checkpoint", "Failed to checkpoint the WAL", () => {
    const row = db.prepare("PRAGMA wal_checkpoint(PASSIVE)").get() as { log: number; checkpointed: number }
    return { log: row.log, checkpointed: row.checkpointed }
  })

const open = (options: SqliteClientConfig) => {
  const { filename } = options
  if (options.readonly !== true && isFile(filename)) {
    mkdirSync(dirname(filename), { recursive: true })
  }
  return new sqlite.DatabaseSync(filename, {
    readOnly: options.readonly ?? false,
    enableForeignKeyConstraints: true,
    allowExtension: true
  })
}
