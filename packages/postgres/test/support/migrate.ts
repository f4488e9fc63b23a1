// Applies mailroom's organisations schema to a test cluster with the package's own runner.
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import * as PostgresMigrations from "../../src/PostgresMigrations.js"

/** Applies the schema; answers the migrations it applied. */
export const migrate = (url: string): Promise<ReadonlyArray<readonly [number, string]>> =>
  Effect.runPromise(PostgresMigrations.run.pipe(Effect.provide(PgClient.layer({ url: Redacted.make(url) }))))
