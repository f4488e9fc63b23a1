// The SESv2Client built from the adapter's options, shared by the provider and the quota reader so
// both reach the same account and region with the same credentials, and refuse the same bad options.
import { SESv2Client } from "@aws-sdk/client-sesv2"
import * as Adapter from "@mailroom/core/adapter"
import type * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { notBlank } from "./options.js"

/** The account, region and credentials: what the provider and the quota reader build their client from. */
export interface ConnectionOptions {
  /** AWS region of the SES account, e.g. `"eu-west-1"`. Default: the SDK's own lookup (`AWS_REGION`, profile). */
  readonly region?: string | undefined
  /** Another SES endpoint, e.g. an emulator's `http://127.0.0.1:8005`. Default: the region's SES endpoint. */
  readonly endpoint?: string | undefined
  /** Given together with `secretAccessKey`. Default: the SDK's credential chain (env, profile, SSO, instance role...). */
  readonly accessKeyId?: Adapter.Secret | undefined
  /** Given together with `accessKeyId`, plain or `Redacted`. Default: the SDK's credential chain. */
  readonly secretAccessKey?: Adapter.Secret | undefined
  /** For temporary credentials only, with `accessKeyId` and `secretAccessKey`. Default: none. */
  readonly sessionToken?: Adapter.Secret | undefined
}

const isHttpUrl = (text: string) => URL.canParse(text) && /^https?:$/.test(new URL(text).protocol)

/**
 * The client for `options`, destroyed when the scope closes. Without credentials, the SDK's own chain
 * finds them; half a credential is refused rather than silently completed from that chain.
 */
export const acquireClient = (
  options: ConnectionOptions,
  maxAttempts: number
): Effect.Effect<SESv2Client, Config.ConfigError, Scope.Scope> =>
  Effect.gen(function* () {
    const { region, endpoint, accessKeyId, secretAccessKey, sessionToken } = options
    if (region !== undefined && !/^[a-z0-9][a-z0-9-]*$/.test(region)) {
      return yield* Effect.fail(Adapter.invalidOption("region", "must be an AWS region, such as eu-west-1"))
    }
    if (endpoint !== undefined && !isHttpUrl(endpoint)) {
      return yield* Effect.fail(Adapter.invalidOption("endpoint", "must be an http or https URL"))
    }
    if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
      return yield* Effect.fail(
        Adapter.invalidOption(
          accessKeyId === undefined ? "accessKeyId" : "secretAccessKey",
          "must be given with the other of accessKeyId and secretAccessKey, or neither to use the AWS SDK's credential chain"
        )
      )
    }
    if (sessionToken !== undefined && accessKeyId === undefined) {
      return yield* Effect.fail(
        Adapter.invalidOption("sessionToken", "is taken only with accessKeyId and secretAccessKey")
      )
    }
    const secrets = { accessKeyId, secretAccessKey, sessionToken }
    for (const [option, secret] of Object.entries(secrets)) {
      yield* notBlank(option, secret === undefined ? undefined : Adapter.secretValue(secret))
    }
    const client = yield* Effect.acquireRelease(
      Effect.sync(
        () =>
          new SESv2Client({
            maxAttempts,
            ...(region === undefined ? {} : { region }),
            ...(endpoint === undefined ? {} : { endpoint }),
            ...(accessKeyId === undefined || secretAccessKey === undefined
              ? {}
              : {
                  credentials: {
                    accessKeyId: Adapter.secretValue(accessKeyId),
                    secretAccessKey: Adapter.secretValue(secretAccessKey),
                    ...(sessionToken === undefined ? {} : { sessionToken: Adapter.secretValue(sessionToken) })
                  }
                })
          })
      ),
      (client) => Effect.sync(() => client.destroy())
    )
    if (accessKeyId === undefined) yield* fromChain(client)
    return client
  })

const chainHint =
  "no AWS credentials were found: give accessKeyId and secretAccessKey, or make credentials available to the AWS SDK's chain (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE, an SSO session, an instance or task role)"

/** The SDK's chain resolved once, so that a machine without credentials fails at start-up, not on every send. */
const fromChain = (client: SESv2Client): Effect.Effect<void, Config.ConfigError> =>
  Adapter.credentialsFromChain(() => (client.config.credentials as () => Promise<unknown>)(), "accessKeyId", chainHint)
