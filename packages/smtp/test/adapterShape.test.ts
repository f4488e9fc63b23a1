// The adapter shape, checked by the compiler (CONTRIBUTING.md): `pnpm run typecheck` fails when a
// module drifts from it; vitest only runs the file.
import type { EmailProvider, ProviderError } from "@mailroom/core"
import type * as Adapter from "@mailroom/core/adapter"
import type { Config, Effect } from "effect"
import { describe, expectTypeOf, it } from "vitest"
import { SmtpEmailProvider } from "../src/index.js"

describe("the adapter shape", () => {
  it("SmtpEmailProvider is an AdapterModule of EmailProvider", () => {
    expectTypeOf(SmtpEmailProvider).toExtend<
      Adapter.AdapterModule<
        typeof EmailProvider.EmailProvider,
        SmtpEmailProvider.ConfigOptions,
        SmtpEmailProvider.ClientOptions
      >
    >()
  })

  it("verify takes where the server is and how to log in, nothing else", () => {
    expectTypeOf(SmtpEmailProvider.verify).parameter(0).toEqualTypeOf<SmtpEmailProvider.ConnectionOptions>()
    expectTypeOf(SmtpEmailProvider.verify).returns.toEqualTypeOf<
      Effect.Effect<void, ProviderError.ProviderError | Config.ConfigError>
    >()
  })
})
