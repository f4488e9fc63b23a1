// The provider's `verify`: one GetAccount call. Any answer SES signs off on proves the endpoint is
// reached and the credentials are genuine, even a refusal of the permission; only a refused credential fails.
import { GetAccountCommand, type SESv2Client } from "@aws-sdk/client-sesv2"
import { ProviderError } from "@mailroom/core"
import * as Effect from "effect/Effect"

// SES's answers when it does not accept the credentials themselves (as opposed to their permissions).
const refusedCredentials = new Set([
  "UnrecognizedClientException",
  "InvalidClientTokenId",
  "InvalidSignatureException",
  "SignatureDoesNotMatch",
  "IncompleteSignatureException",
  "MissingAuthenticationTokenException",
  "ExpiredTokenException"
])

interface SdkError {
  readonly name?: unknown
  readonly message?: unknown
  readonly $metadata?: { readonly httpStatusCode?: number }
}

const scrub = (message: string, secrets: ReadonlyArray<string>) =>
  secrets.reduce((m, secret) => (secret.length >= 4 ? m.split(secret).join("<redacted>") : m), message)

const failure = (reason: ProviderError.Reason, cause: unknown) =>
  Effect.fail(new ProviderError.ProviderError({ provider: "ses", reason, cause }))

/** Fails only when a send would fail for the same reason: no credentials, refused ones, or no SES to reach. */
export const verify = (
  client: SESv2Client,
  secrets: ReadonlyArray<string>
): Effect.Effect<void, ProviderError.ProviderError> =>
  Effect.tryPromise({
    try: (signal) => client.send(new GetAccountCommand({}), { abortSignal: signal }),
    catch: (error) => error
  }).pipe(
    Effect.asVoid,
    Effect.catch((error) => {
      const sdk: SdkError = typeof error === "object" && error !== null ? error : {}
      const name = typeof sdk.name === "string" ? sdk.name : ""
      const message = scrub(typeof sdk.message === "string" ? sdk.message : String(error), secrets)
      const status = sdk.$metadata?.httpStatusCode
      if (name === "CredentialsProviderError" || name === "TokenProviderError") {
        return failure(
          new ProviderError.Unavailable({ message: `could not load AWS credentials: ${message}`, possiblySent: false }),
          error
        )
      }
      if (status === undefined) {
        return failure(
          new ProviderError.Unavailable({ message: `could not reach SES: ${message}`, possiblySent: false }),
          error
        )
      }
      if (refusedCredentials.has(name) || status === 401) {
        return failure(
          new ProviderError.Unknown({ message: `SES refused the credentials (${name}): ${message}` }),
          error
        )
      }
      // Throttled, denied ses:GetAccount, or an endpoint that does not know the call: SES answered.
      return Effect.void
    })
  )
