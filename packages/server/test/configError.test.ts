import * as Adapter from "@mailroom/core/adapter"
import { Context, Effect, Layer, ManagedRuntime } from "effect"
import { assert, describe, it } from "vitest"
import { ServerConfig } from "../src/index.js"
import { inSection } from "../src/internal/configError.js"

const Store = Context.Service<{ readonly bucket: string }>("test/Store")

describe("an adapter's ConfigError in the server", () => {
  it("becomes a ServerConfigError naming the section and the option, as building the runtime rejects", async () => {
    const refused = Layer.effect(
      Store,
      Effect.fail(Adapter.invalidOption(["credentials", "private_key"], "is not a PEM private key"))
    )
    const runtime = ManagedRuntime.make(inSection("storage", refused))
    const error: unknown = await runtime.runPromise(Effect.service(Store)).then(
      () => undefined,
      (cause: unknown) => cause
    )
    await runtime.dispose()
    assert.instanceOf(error, ServerConfig.ServerConfigError)
    assert.deepStrictEqual((error as ServerConfig.ServerConfigError).problems, [
      "storage.credentials.private_key: is not a PEM private key"
    ])
    assert.include((error as Error).message, "storage.credentials.private_key: is not a PEM private key")
  })

  it("leaves other failures as they are", async () => {
    class Down extends Error {}
    const runtime = ManagedRuntime.make(inSection("storage", Layer.effect(Store, Effect.fail(new Down("down")))))
    const error = await runtime.runPromise(Effect.service(Store)).catch((cause: unknown) => cause)
    await runtime.dispose()
    assert.instanceOf(error, Down)
  })
})
