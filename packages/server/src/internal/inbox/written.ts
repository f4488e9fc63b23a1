// The outbox provider as the server runs it: each message it writes is told to the inbox's index at once,
// so a list or a wait that comes after the send's answer sees it.
import { EmailProvider } from "@mailroom/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/** The provider, telling `written` of each message it wrote (the outbox's inbox index reads it at once). */
export const observed = <E, R>(
  provider: Layer.Layer<EmailProvider.EmailProvider, E, R>,
  written: (messageId: string) => void
): Layer.Layer<EmailProvider.EmailProvider, E, R> =>
  Layer.effect(
    EmailProvider.EmailProvider,
    Effect.map(EmailProvider.EmailProvider, (inner) =>
      EmailProvider.EmailProvider.of({
        ...inner,
        send: (email) => Effect.tap(inner.send(email), ({ messageId }) => Effect.sync(() => written(messageId)))
      })
    )
  ).pipe(Layer.provide(provider))
