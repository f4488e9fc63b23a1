// The schema PostgresOrganizations reads, shipped as plain SQL files (`migrations/NNNN_name.sql`), and
// the runner that applies the ones a database has not seen yet, recording each in mailroom_migrations.
import { readdir, readFile } from "node:fs/promises"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Migrator from "effect/sql/Migrator"
import * as SqlClient from "effect/sql/SqlClient"
import type * as SqlError from "effect/sql/SqlError"
import { statements } from "./internal/statements.js"

/** The folder of the SQL files, for a migration tool of your own: apply them in file-name order. */
export const directory: string = fileURLToPath(new URL("../migrations/", import.meta.url))

/**
 * Where applied migrations are recorded. Not Effect's default `effect_sql_migrations`, so a workspace
 * application that migrates its own tables with Effect in the same database keeps its own history.
 */
export const table = "mailroom_migrations"

const loader: Migrator.Loader = Effect.tryPromise({
  try: async () => {
    const files = (await readdir(directory)).filter((file) => /^\d+_[^.]+\.sql$/.test(file)).sort()
    return files.map((file): Migrator.ResolvedMigration => {
      const [, id, name] = /^(\d+)_([^.]+)\.sql$/.exec(file) ?? []
      const migration = Effect.flatMap(
        Effect.promise(() => readFile(join(directory, file), "utf8")),
        (text) =>
          Effect.flatMap(SqlClient.SqlClient, (sql) =>
            // The protocol sends one statement at a time; the migrator wraps them all in one transaction.
            Effect.forEach(statements(text), (statement) => sql.unsafe(statement).unprepared, { discard: true })
          )
      )
      return [Number(id), String(name), Effect.succeed(migration)]
    })
  },
  catch: (cause) =>
    new Migrator.MigrationError({ kind: "ImportError", message: `cannot read the migrations in ${directory}`, cause })
})

/**
 * Applies every migration the database has not seen, in one transaction, and answers the ones it
 * applied (`[[1, "organizations"]]`, or `[]` when the schema is current). Safe to run from several
 * instances at once: the table is locked while it runs.
 */
export const run: Effect.Effect<
  ReadonlyArray<readonly [id: number, name: string]>,
  Migrator.MigrationError | SqlError.SqlError,
  SqlClient.SqlClient
> = Migrator.make({})({ loader, table })

/** Runs the migrations while the layer is built, e.g. before the layer that serves requests. */
export const layer: Layer.Layer<never, Migrator.MigrationError | SqlError.SqlError, SqlClient.SqlClient> =
  Layer.effectDiscard(run)
