// core's Suppressions on SQL (SQLite or PostgreSQL, the schema of SqlMigrations): one row per
// organisation and address, the primary key deciding which of concurrent adds of one address wins.
import { type MailroomError, Suppressions } from "@mailroom/core"
import * as Adapter from "@mailroom/core/adapter"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as SqlClient from "effect/sql/SqlClient"
import { type Database, type Options as DatabaseOptions, fixed, open, placeholders } from "./internal/database.js"

/** What `layerConfig` reads: the deadline of each operation. The client always comes from the context. */
export interface ConfigOptions extends DatabaseOptions {}

/** What `make` and `layer` take: the same. */
export type Options = ConfigOptions

const columns = "email, reason, created_at, message_id, detail"

const build = ({ sql, read, run }: Database): Suppressions.Suppressions =>
  Suppressions.Suppressions.of({
    add: (organizationId, entries, now) => {
      // Normalised first, so that two spellings of one address in one call add it once.
      const fresh = new Map<string, Suppressions.NewSuppression>()
      for (const entry of entries) {
        const email = Suppressions.normalize(entry.email)
        if (!fresh.has(email)) fresh.set(email, { ...entry, email })
      }
      const [first, ...rest] = [...fresh.values()].map((entry) => ({
        organization_id: organizationId,
        email: entry.email,
        reason: entry.reason,
        created_at: now,
        message_id: entry.messageId ?? null,
        detail: entry.detail ?? null
      }))
      if (first === undefined) return Effect.succeed([])
      return run(
        "adding suppressions",
        sql<Suppressions.Suppression>`INSERT INTO mailroom_suppressions ${sql.insert([first, ...rest])}
          ON CONFLICT (organization_id, email) DO NOTHING RETURNING ${sql.literal(columns)}`
      )
    },

    remove: (organizationId, email) =>
      run(
        "removing a suppression",
        Effect.map(
          sql`DELETE FROM mailroom_suppressions
            WHERE organization_id = ${organizationId} AND email = ${Suppressions.normalize(email)} RETURNING email`,
          (rows) => rows.length > 0
        )
      ),

    list: (organizationId, query) =>
      Effect.flatMap(Adapter.decodeCursor(query.cursor, 2), (after) =>
        run(
          "listing suppressions",
          Effect.gen(function* () {
            const where = [sql`organization_id = ${organizationId}`]
            if (query.reason !== undefined) where.push(sql`reason = ${query.reason}`)
            if (after !== undefined) {
              const [createdAt, email] = after
              where.push(sql`created_at <= ${createdAt} AND (created_at < ${createdAt} OR email < ${email})`)
            }
            const rows = yield* sql<Suppressions.Suppression>`SELECT ${sql.literal(columns)} FROM mailroom_suppressions
              WHERE ${sql.and(where)} ORDER BY created_at DESC, email DESC LIMIT ${query.limit + 1}`
            const page = rows.slice(0, query.limit)
            const last = page[page.length - 1]
            return {
              data: page,
              next_cursor:
                rows.length > query.limit && last !== undefined
                  ? Adapter.encodeCursor([last.created_at, last.email])
                  : null
            }
          })
        )
      ),

    check: (organizationId, emails) => {
      const wanted = [...new Set(emails.map(Suppressions.normalize))]
      if (wanted.length === 0) return Effect.succeed([])
      // On every send: straight on the connection where the client offers it (see `Database.write`).
      return run(
        "checking suppressions",
        read((execute) =>
          execute(
            fixed<Suppressions.Suppression>(
              `SELECT ${columns} FROM mailroom_suppressions
                WHERE organization_id = ? AND email IN ${placeholders(wanted.length)}`,
              [organizationId, ...wanted]
            )
          )
        )
      )
    }
  })

/**
 * The suppressions on the `SqlClient` in context, their table created or brought up to date first
 * (`SqlMigrations`). Fails with a `ConfigError` naming `timeout` when it is not a duration above zero,
 * or `Unavailable` when the schema cannot be brought up to date.
 */
export const make = (
  options: Options = {}
): Effect.Effect<Suppressions.Suppressions, Config.ConfigError | MailroomError.Unavailable, SqlClient.SqlClient> =>
  Effect.map(open(options), build)

/** Provides core's `Suppressions` on the `SqlClient` your application provides. */
export const layer = (
  options: Options = {}
): Layer.Layer<Suppressions.Suppressions, Config.ConfigError | MailroomError.Unavailable, SqlClient.SqlClient> =>
  Layer.effect(Suppressions.Suppressions, make(options))

/** As `layer`, with the options read from `Config`. */
export const layerConfig = (
  config: Config.Wrap<ConfigOptions>
): Layer.Layer<Suppressions.Suppressions, Config.ConfigError | MailroomError.Unavailable, SqlClient.SqlClient> =>
  Layer.effect(Suppressions.Suppressions, Effect.flatMap(Config.unwrap(config), make))
