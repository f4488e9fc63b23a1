#!/usr/bin/env node
// `mailroom-postgres migrate`: applies the schema PostgresOrganizations reads to the database at
// DATABASE_URL, for a deploy step that runs before the instances start.
import { PgClient } from "@effect/sql-pg"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as PostgresMigrations from "./PostgresMigrations.js"

const usage = "usage: DATABASE_URL=postgres://user:password@host:5432/database mailroom-postgres migrate"
const url = process.env.DATABASE_URL
if (process.argv[2] !== "migrate" || process.argv.length > 3) {
  console.error(usage)
  process.exit(2)
}
if (url === undefined || url === "") {
  console.error(`DATABASE_URL is not set\n${usage}`)
  process.exit(2)
}

try {
  const applied = await Effect.runPromise(
    PostgresMigrations.run.pipe(
      Effect.provide(
        PgClient.layer({ url: Redacted.make(url), maxConnections: 1, applicationName: "mailroom-migrate" })
      )
    )
  )
  console.log(
    applied.length === 0
      ? "the mailroom schema is current"
      : `applied ${applied.map(([id, name]) => `${String(id).padStart(4, "0")}_${name}`).join(", ")}`
  )
} catch (cause) {
  console.error(`migration failed: ${(cause as Error)?.message ?? String(cause)}`)
  process.exit(1)
}
