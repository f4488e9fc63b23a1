// The adapter shape, checked by the compiler (CONTRIBUTING.md): `pnpm run typecheck` fails when a
// module drifts from it; vitest only runs the file.
import type { EmailProvider, EventSource, MailroomError } from "@mailroom/core"
import type * as Adapter from "@mailroom/core/adapter"
import type { Effect } from "effect"
import { describe, expectTypeOf, it } from "vitest"
import { SesEmailProvider, SesEventSource, SesSendQuota } from "../src/index.js"

describe("the adapter shape", () => {
  it("SesEmailProvider is an AdapterModule of EmailProvider", () => {
    expectTypeOf(SesEmailProvider).toExtend<
      Adapter.AdapterModule<
        typeof EmailProvider.EmailProvider,
        SesEmailProvider.ConfigOptions,
        SesEmailProvider.ClientOptions
      >
    >()
  })

  it("SesEventSource and SesSendQuota have make", () => {
    expectTypeOf(SesEventSource).toExtend<Adapter.AdapterConstructor<EventSource.EventSource, SesEventSource.Options>>()
    expectTypeOf(SesSendQuota).toExtend<
      Adapter.AdapterConstructor<Effect.Effect<SesSendQuota.SendQuota, MailroomError.Unavailable>, SesSendQuota.Options>
    >()
  })
})
