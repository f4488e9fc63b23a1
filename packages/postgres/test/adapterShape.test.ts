// The adapter shape, checked by the compiler (CONTRIBUTING.md): `pnpm run typecheck` fails when a
// module drifts from it; vitest only runs the file.
import type { Organizations } from "@mailroom/core"
import type * as Adapter from "@mailroom/core/adapter"
import type { SqlClient, SqlError } from "effect/sql"
import { describe, expectTypeOf, it } from "vitest"
import { PostgresOrganizations } from "../src/index.js"

describe("the adapter shape", () => {
  it("PostgresOrganizations is an AdapterModule of Organizations, with a client of your own or from the context", () => {
    expectTypeOf(PostgresOrganizations).toExtend<
      Adapter.AdapterModule<
        typeof Organizations.Organizations,
        PostgresOrganizations.ConfigOptions,
        PostgresOrganizations.ClientOptions,
        SqlError.SqlError
      > &
        Adapter.AdapterFromClient<
          typeof Organizations.Organizations,
          PostgresOrganizations.CommonOptions,
          SqlClient.SqlClient
        >
    >()
  })
})
