// The SESv2Client built from the adapter's options, shared by the provider and the quota reader so
// both reach the same account and region with the same credentials.
import { SESv2Client } from "@aws-sdk/client-sesv2"
import { Redacted } from "effect"

export interface ClientOptions {
  readonly region?: string | undefined
  readonly endpoint?: string | undefined
  readonly accessKeyId?: string | Redacted.Redacted<string> | undefined
  readonly secretAccessKey?: string | Redacted.Redacted<string> | undefined
  readonly sessionToken?: string | Redacted.Redacted<string> | undefined
}

export const reveal = (secret: string | Redacted.Redacted<string>): string =>
  Redacted.isRedacted(secret) ? Redacted.value(secret) : secret

/** Without credentials, the SDK's own chain finds them. */
export const buildClient = (options: ClientOptions, maxAttempts: number): SESv2Client =>
  new SESv2Client({
    maxAttempts,
    ...(options.region === undefined ? {} : { region: options.region }),
    ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }),
    ...(options.accessKeyId === undefined || options.secretAccessKey === undefined
      ? {}
      : {
          credentials: {
            accessKeyId: reveal(options.accessKeyId),
            secretAccessKey: reveal(options.secretAccessKey),
            ...(options.sessionToken === undefined ? {} : { sessionToken: reveal(options.sessionToken) })
          }
        })
  })
