// The adapter shape, checked by the compiler (CONTRIBUTING.md): `pnpm run typecheck` fails when a
// module drifts from it; vitest only runs the file.
import type { ObjectStore } from "@mailroom/core"
import type * as Adapter from "@mailroom/core/adapter"
import { describe, expectTypeOf, it } from "vitest"
import { GcsObjectStore } from "../src/index.js"

describe("the adapter shape", () => {
  it("GcsObjectStore is an AdapterModule of ObjectStore", () => {
    expectTypeOf(GcsObjectStore).toExtend<
      Adapter.AdapterModule<typeof ObjectStore.ObjectStore, GcsObjectStore.ConfigOptions, GcsObjectStore.ClientOptions>
    >()
  })
})
