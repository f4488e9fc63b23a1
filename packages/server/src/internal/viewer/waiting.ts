// What the viewer shows beside the outbox: the messages that are not in it because they wait for their
// time or were cancelled, read from the message log for each organisation of the config file.
import { MessageLog } from "@mailroom/core"
import * as Effect from "effect/Effect"
import type * as ManagedRuntime from "effect/ManagedRuntime"

/** At most this many of each state per organisation: the viewer is for looking, not for paging. */
const perState = 50

/** The scheduled and cancelled messages of `organizations()`, newest first. */
export const make =
  (
    runtime: ManagedRuntime.ManagedRuntime<MessageLog.MessageLog, unknown>,
    organizations: () => ReadonlyArray<string>
  ) =>
  (): Promise<ReadonlyArray<MessageLog.EmailRecord>> =>
    runtime.runPromise(
      Effect.flatMap(MessageLog.MessageLog, (log) =>
        Effect.forEach(
          organizations().flatMap((id) => (["scheduled", "cancelled"] as const).map((status) => [id, status] as const)),
          ([id, status]) => Effect.map(log.list(id, { limit: perState, status }), (page) => page.data),
          { concurrency: 4 }
        )
      ).pipe(Effect.map((pages) => pages.flat().sort((a, b) => b.created_at.localeCompare(a.created_at))))
    )
