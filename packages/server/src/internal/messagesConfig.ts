// The config's `messages` section: where message records and suppression lists live (SQLite beside the
// local store by default, PostgreSQL for a fleet, or memory) and how long records are kept.
import { resolve } from "node:path"
import * as Duration from "effect/Duration"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { type Decoded, databaseUrl, decodeKind, nonEmpty, PostgresUrl } from "./decode.js"

/** A duration above zero as Effect writes it: `"30 days"`, `"12 hours"`. */
const Retention = Schema.String.pipe(
  Schema.check(
    Schema.makeFilter((s: string) => {
      const duration = /^\d+(\.\d+)? [a-z]+$/.test(s) ? Duration.fromInput(s as Duration.Input) : Option.none()
      return Option.isSome(duration) && Duration.isFinite(duration.value) && Duration.isPositive(duration.value)
        ? undefined
        : 'must be a duration above zero such as "30 days" or "12 hours"'
    })
  )
)

/** The queue of scheduled sends on the records' database: its worker, and how it shares the looks. */
const SqlQueue = Schema.Struct({
  /** Scheduled messages this instance sends at once, 1 to 1000 (each a fiber from start-up). Default 16. */
  concurrency: Schema.optionalKey(
    Schema.Number.pipe(
      Schema.check(
        Schema.makeFilter((n: number) =>
          Number.isInteger(n) && n >= 1 && n <= 1000 ? undefined : "must be a whole number from 1 to 1000"
        )
      )
    )
  ),
  /** How long a look held by an instance that stopped stays locked before another takes it. Default "30 seconds". */
  lockExpiration: Schema.optionalKey(Retention),
  /** How often an idle worker asks the database for due looks. Default "1 second". */
  pollInterval: Schema.optionalKey(Retention)
})
const MemoryQueue = Schema.Struct({ concurrency: SqlQueue.fields.concurrency })

/** Message records in memory: one process, forgotten on restart. */
export const MemoryMessages = Schema.Struct({
  kind: Schema.Literal("memory"),
  retention: Schema.optionalKey(Retention),
  queue: Schema.optionalKey(MemoryQueue)
})
/** Message records in SQLite at `path`: one machine, kept across restarts (the default). */
export const SqliteMessages = Schema.Struct({
  kind: Schema.Literal("sqlite"),
  /** Default: `mailroom.db` beside the local store's directory, else `.mailroom/mailroom.db`. */
  path: Schema.optionalKey(nonEmpty("a file path")),
  retention: Schema.optionalKey(Retention),
  queue: Schema.optionalKey(SqlQueue)
})
/** Message records in PostgreSQL at `url`: shared by a fleet. */
export const PostgresMessages = Schema.Struct({
  kind: Schema.Literal("postgres"),
  /** Default: the DATABASE_URL environment variable, so the file need not hold the password. */
  url: Schema.optionalKey(PostgresUrl),
  retention: Schema.optionalKey(Retention),
  queue: Schema.optionalKey(SqlQueue)
})

/** The messages section with its defaults filled, its path resolved and its URL read. */
export type MessagesConfig = {
  /** How long a record is kept from its creation, as Effect writes a duration. Default `"30 days"`. */
  readonly retention: string
  /** The queue of scheduled sends, when the section sets it: on the records' database (in memory with memory records). */
  readonly queue?: typeof SqlQueue.Type
} & (
  | { readonly kind: "memory" }
  | { readonly kind: "sqlite"; readonly path: string }
  | { readonly kind: "postgres"; readonly url: string }
)

export const defaultRetention = "30 days"

/**
 * The messages section. Absent: SQLite, at `mailroom.db` beside the local store's directory
 * (`.mailroom/mailroom.db` for `.mailroom/storage`), else at `.mailroom/mailroom.db` beside the
 * config file, so that a single instance that restarts forgets nothing it accepted.
 */
export const messagesSection = (
  value: unknown,
  localStorageDir: string | undefined,
  at: (path: string) => string,
  env: Readonly<Record<string, string | undefined>>
): Decoded<MessagesConfig> => {
  const besideStorage = localStorageDir === undefined ? undefined : resolve(localStorageDir, "..", "mailroom.db")
  const defaultPath = besideStorage ?? at(".mailroom/mailroom.db")
  const decoded = decodeKind("messages", value ?? { kind: "sqlite" }, {
    memory: MemoryMessages,
    sqlite: SqliteMessages,
    postgres: PostgresMessages
  })
  const section = decoded.value as
    | typeof MemoryMessages.Type
    | typeof SqliteMessages.Type
    | typeof PostgresMessages.Type
    | undefined
  if (section === undefined) return { problems: decoded.problems }
  const retention = section.retention ?? defaultRetention
  const queue = section.queue === undefined ? {} : { queue: section.queue }
  switch (section.kind) {
    case "memory":
      return { value: { kind: "memory", retention, ...queue }, problems: [] }
    case "sqlite":
      return {
        value: {
          kind: "sqlite",
          path: section.path === undefined ? defaultPath : at(section.path),
          retention,
          ...queue
        },
        problems: []
      }
    case "postgres": {
      const url = databaseUrl(section.url, "messages.url", env)
      return url.value === undefined
        ? { problems: url.problems }
        : { value: { kind: "postgres", url: url.value, retention, ...queue }, problems: [] }
    }
  }
}
