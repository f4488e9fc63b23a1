// The account's sending quota as SES reports it (GetAccount): `maxSendRate` is the recipients per second
// the account may send, which a SendRateLimiter paces every instance to.
import { GetAccountCommand } from "@aws-sdk/client-sesv2"
import { MailroomError } from "@mailroom/core"
import * as Adapter from "@mailroom/core/adapter"
import type * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { acquireClient, type ConnectionOptions } from "./internal/client.js"

/** The account's sending quota, as SES reports it. */
export interface SendQuota {
  /** Recipients per second (SES counts each recipient of a message). */
  readonly maxSendRate: number
  readonly max24HourSend: number
  readonly sentLast24Hours: number
}

/** The account and region, as `SesEmailProvider` takes them. Secrets plain or `Redacted`. */
export interface Options extends ConnectionOptions {
  /** How long one GetAccount may take. Default 10 s. */
  readonly timeout?: Duration.Input | undefined
}

/**
 * A reader of the quota on one client, closed with the scope. Fails with a `ConfigError` naming the
 * option when one is unusable, as `SesEmailProvider.make` does. The reader fails with `Unavailable`
 * when SES cannot be asked (no `ses:GetAccount` permission, no network) or answers no quota.
 */
export const make = (
  options: Options = {}
): Effect.Effect<Effect.Effect<SendQuota, MailroomError.Unavailable>, Config.ConfigError, Scope.Scope> =>
  Effect.gen(function* () {
    const timeout = Duration.toMillis(yield* Adapter.duration("timeout", options.timeout ?? "10 seconds"))
    const client = yield* acquireClient(options, 2)
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
  })
