// The provider's `verify`: one `GET /server` with the server token. Any answer but a refused token
// proves Postmark is reached and the token works; no answer names what the connection failed with.
import { ProviderError } from "@mailroom/core"
import * as Effect from "effect/Effect"
import type { ServerClient } from "postmark"

/** The first `code` along an error's `cause` chain ("ECONNREFUSED"), else its innermost message ("bad port"). */
const transportCause = (error: unknown): string => {
  let message = error instanceof Error ? error.message : "no answer"
  for (let at = error, depth = 0; typeof at === "object" && at !== null && depth < 8; depth++) {
    const { code, cause } = at as { code?: unknown; cause?: unknown }
    if (typeof code === "string") return code
    if (at instanceof Error && at.message !== "") message = at.message
    at = cause
  }
  return message
}

const failure = (reason: ProviderError.Reason, cause: unknown) =>
  new ProviderError.ProviderError({ provider: "postmark", reason, cause })

/** Fails only when a send would fail for the same reason: a refused token, or no Postmark to reach. */
export const verify = (
  connect: () => { readonly client: ServerClient; readonly transportError: () => unknown },
  host: string
): Effect.Effect<void, ProviderError.ProviderError> =>
  Effect.suspend(() => {
    const { client, transportError } = connect()
    return Effect.tryPromise({
      try: () => client.getServer(),
      catch: (error) => {
        const status = (error as { statusCode?: unknown }).statusCode
        if (status === 401) {
          return failure(new ProviderError.Unknown({ message: "the Postmark server token was refused" }), error)
        }
        if (status === 0 || typeof status !== "number") {
          const cause = transportCause(transportError() ?? error)
          return failure(
            new ProviderError.Unavailable({
              message: `Postmark at ${host} could not be reached (${cause})`,
              possiblySent: false
            }),
            error
          )
        }
        return undefined
      }
    }).pipe(
      Effect.asVoid,
      // Any other answer came from Postmark itself: it is reached and took the token.
      Effect.catch((error) => (error === undefined ? Effect.void : Effect.fail(error)))
    )
  })
