// The adapter shape, checked by the compiler (CONTRIBUTING.md): `pnpm run typecheck` fails when a
// module drifts from it; vitest only runs the file.
import type { EmailProvider, IdempotencyStore, MailroomError, ObjectStore } from "@mailroom/core"
import type * as Adapter from "@mailroom/core/adapter"
import type { PersistedQueue } from "effect/persistence"
import { describe, expectTypeOf, it } from "vitest"
import { DiskIdempotencyStore, DiskObjectStore, DiskQueueStore, OutboxEmailProvider } from "../src/index.js"

describe("the adapter shape", () => {
  it("OutboxEmailProvider is an AdapterModule of EmailProvider", () => {
    expectTypeOf(OutboxEmailProvider).toExtend<
      Adapter.AdapterModule<typeof EmailProvider.EmailProvider, OutboxEmailProvider.ConfigOptions>
    >()
  })

  it("DiskObjectStore is an AdapterModule of ObjectStore", () => {
    expectTypeOf(DiskObjectStore).toExtend<
      Adapter.AdapterModule<typeof ObjectStore.ObjectStore, DiskObjectStore.ConfigOptions>
    >()
  })

  it("the disk stores connect: a directory that cannot be used is an outage", () => {
    expectTypeOf(DiskIdempotencyStore).toExtend<
      Adapter.AdapterModule<
        typeof IdempotencyStore.IdempotencyStore,
        DiskIdempotencyStore.ConfigOptions,
        never,
        MailroomError.Unavailable
      >
    >()
    expectTypeOf(DiskQueueStore).toExtend<
      Adapter.AdapterModule<
        typeof PersistedQueue.PersistedQueueStore,
        DiskQueueStore.ConfigOptions,
        never,
        PersistedQueue.PersistedQueueError
      >
    >()
  })
})
