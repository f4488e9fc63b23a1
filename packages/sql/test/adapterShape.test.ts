// The adapter shape, checked by the compiler (CONTRIBUTING.md): `pnpm run typecheck` fails when a
// module drifts from it; vitest only runs the file.
import type { MailroomError, MessageLog, Suppressions } from "@mailroom/core"
import type * as Adapter from "@mailroom/core/adapter"
import type { SqlClient } from "effect/sql"
import { describe, expectTypeOf, it } from "vitest"
import { SqlMessageLog, SqlSuppressions } from "../src/index.js"

describe("the adapter shape", () => {
  it("SqlMessageLog and SqlSuppressions are AdapterModules on the SqlClient in the context", () => {
    expectTypeOf(SqlMessageLog).toExtend<
      Adapter.AdapterModule<
        typeof MessageLog.MessageLog,
        SqlMessageLog.ConfigOptions,
        never,
        MailroomError.Unavailable,
        SqlClient.SqlClient
      >
    >()
    expectTypeOf(SqlSuppressions).toExtend<
      Adapter.AdapterModule<
        typeof Suppressions.Suppressions,
        SqlSuppressions.ConfigOptions,
        never,
        MailroomError.Unavailable,
        SqlClient.SqlClient
      >
    >()
  })
})
