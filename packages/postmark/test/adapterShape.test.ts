// The adapter shape, checked by the compiler (CONTRIBUTING.md): `pnpm run typecheck` fails when a
// module drifts from it; vitest only runs the file.
import type { EmailProvider, EventSource } from "@mailroom/core"
import type * as Adapter from "@mailroom/core/adapter"
import { describe, expectTypeOf, it } from "vitest"
import { PostmarkEmailProvider, PostmarkEventSource } from "../src/index.js"

describe("the adapter shape", () => {
  it("PostmarkEmailProvider is an AdapterModule of EmailProvider", () => {
    expectTypeOf(PostmarkEmailProvider).toExtend<
      Adapter.AdapterModule<
        typeof EmailProvider.EmailProvider,
        PostmarkEmailProvider.ConfigOptions,
        PostmarkEmailProvider.ClientOptions
      >
    >()
  })

  it("PostmarkEventSource has make", () => {
    expectTypeOf(PostmarkEventSource).toExtend<
      Adapter.AdapterConstructor<EventSource.EventSource, PostmarkEventSource.Options>
    >()
  })
})
