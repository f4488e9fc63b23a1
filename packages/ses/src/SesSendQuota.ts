// The account's sending quota as SES reports it (GetAccount): `maxSendRate` is the recipients per second
// the account may send, which a SendRateLimiter paces every instance to.
import { GetAccountCommand } from "@aws-sdk/client-sesv2"
import { MailroomError } from "@mailroom/core"
import { Duration, Effect, type Redacted, type Scope } from "effect"
import { buildClient } from "./internal/client.js"

export interface SendQuota {
  /** Recipients per second (SES counts each recipient of a message). */
  readonly maxSendRate: number
  readonly max24HourSend: number
  readonly sentLast24Hours: number
}

/** The account and region, as `SesEmailProvider` takes them. Secrets plain or `Redacted`. */
export interface Options {
  readonly region?: string | undefined
  readonly endpoint?: string | undefined
  readonly accessKeyId?: string | Redacted.Redacted<string> | undefined
  readonly secretAccessKey?: string | Redacted.Redacted<string> | undefined
  readonly sessionToken?: string | Redacted.Redacted<string> | undefined
  /** How long one GetAccount may take. Default 10 s. */
  readonly timeout?: Duration.Input | undefined
}

/**
 * A reader of the quota on one client, closed with the scope. Fails with `Unavailable` when SES cannot
 * be asked (no `ses:GetAccount` permission, no network) or answers no quota.
 */
export const make = (
  options: Options = {}
): Effect.Effect<Effect.Effect<SendQuota, MailroomError.Unavailable>, never, Scope.Scope> =>
  Effect.map(
    Effect.acquireRelease(
      Effect.sync(() => buildClient(options, 2)),
      (client) => Effect.sync(() => client.destroy())
    ),
    (client) => {
      const timeout = Duration.toMillis(Duration.fromInputUnsafe(options.timeout ?? "10 seconds"))
      return Effect.tryPromise({
        try: (signal) =>
          client.send(new GetAccountCommand({}), {
            abortSignal: AbortSignal.any([signal, AbortSignal.timeout(timeout)])
          }),
        catch: (cause) =>
          new MailroomError.Unavailable({
            message: `SES's sending quota cannot be read (GetAccount): ${(cause as Error)?.name ?? "error"}`,
            cause
          })
      }).pipe(
        Effect.flatMap((account) => {
          const quota = account.SendQuota
          const rate = quota?.MaxSendRate
          return rate === undefined || !(rate > 0)
            ? Effect.fail(new MailroomError.Unavailable({ message: "SES answered GetAccount without a SendQuota" }))
            : Effect.succeed({
                maxSendRate: rate,
                max24HourSend: quota?.Max24HourSend ?? 0,
                sentLast24Hours: quota?.SentLast24Hours ?? 0
              })
        })
      )
    }
  )
