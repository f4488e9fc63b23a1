// The adapter shape, checked by the compiler (CONTRIBUTING.md): `pnpm run typecheck` fails when the
// module drifts from it; vitest only runs the file. Its option names stay `@effect/sql-sqlite-node`'s.
import type * as Adapter from "@mailroom/core/adapter"
import type { Reactivity } from "effect/reactivity"
import type { SqlError } from "effect/sql"
import { describe, expectTypeOf, it } from "vitest"
import { SqliteClient } from "../src/index.js"

describe("the adapter shape", () => {
  it("SqliteClient is an AdapterModule of its client", () => {
    expectTypeOf(SqliteClient).toExtend<
      Adapter.AdapterModule<
        typeof SqliteClient.SqliteClient,
        SqliteClient.SqliteClientConfig,
        never,
        SqlError.SqlError,
        Reactivity.Reactivity
      >
    >()
  })
})
