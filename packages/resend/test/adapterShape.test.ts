// The adapter shape, checked by the compiler (CONTRIBUTING.md): `pnpm run typecheck` fails when a
// module drifts from it; vitest only runs the file.
import type { EmailProvider, EventSource } from "@mailroom/core"
import type * as Adapter from "@mailroom/core/adapter"
import { describe, expectTypeOf, it } from "vitest"
import { ResendEmailProvider, ResendEventSource } from "../src/index.js"

describe("the adapter shape", () => {
  it("ResendEmailProvider is an AdapterModule of EmailProvider", () => {
    expectTypeOf(ResendEmailProvider).toExtend<
      Adapter.AdapterModule<
        typeof EmailProvider.EmailProvider,
        ResendEmailProvider.ConfigOptions,
        ResendEmailProvider.ClientOptions
      >
    >()
  })

  it("ResendEventSource has make", () => {
    expectTypeOf(ResendEventSource).toExtend<
      Adapter.AdapterConstructor<EventSource.EventSource, ResendEventSource.Options>
    >()
  })
})
