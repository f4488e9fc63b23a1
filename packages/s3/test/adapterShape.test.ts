// The adapter shape, checked by the compiler (CONTRIBUTING.md): `pnpm run typecheck` fails when a
// module drifts from it; vitest only runs the file.
import type { ObjectStore } from "@mailroom/core"
import type * as Adapter from "@mailroom/core/adapter"
import { describe, expectTypeOf, it } from "vitest"
import { S3ObjectStore } from "../src/index.js"

describe("the adapter shape", () => {
  it("S3ObjectStore is an AdapterModule of ObjectStore", () => {
    expectTypeOf(S3ObjectStore).toExtend<
      Adapter.AdapterModule<typeof ObjectStore.ObjectStore, S3ObjectStore.ConfigOptions, S3ObjectStore.ClientOptions>
    >()
  })
})
