// One call to Resend's HTTP API over `fetch`: the bearer key, a JSON body, a timeout, and the answer
// read whole (status, headers, parsed body), or what the transport said when there was no answer.
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type { Answered, NoAnswer, TimedOut } from "./errors.js"

export interface Connection {
  /** Without a trailing slash: `https://api.resend.com`. */
  readonly baseUrl: string
  readonly apiKey: string
  readonly fetch: typeof globalThis.fetch
  readonly timeout: Duration.Duration
}

export interface Call {
  readonly method: "GET" | "POST"
  readonly path: string
  /** The JSON body: a Blob, which `fetch` streams out (a string it keeps whole beside its UTF-8 copy). */
  readonly body?: Blob
  readonly idempotencyKey?: string | undefined
}

const parsed = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/**
 * The answer, whatever its status; fails only when there was none. Interrupting the call aborts the
 * request, which is also how the timeout ends it.
 */
export const call = (connection: Connection, request: Call): Effect.Effect<Answered, NoAnswer | TimedOut> =>
  Effect.tryPromise({
    try: async (signal): Promise<Answered> => {
      const response = await connection.fetch(`${connection.baseUrl}${request.path}`, {
        method: request.method,
        headers: {
          authorization: `Bearer ${connection.apiKey}`,
          accept: "application/json",
          "user-agent": "mailroom-resend",
          ...(request.body === undefined ? {} : { "content-type": "application/json" }),
          ...(request.idempotencyKey === undefined ? {} : { "idempotency-key": request.idempotencyKey })
        },
        ...(request.body === undefined ? {} : { body: request.body }),
        // A redirect is answered as it is (an Unknown), never followed with the key.
        redirect: "manual",
        signal
      })
      const text = await response.text()
      return { _tag: "Answered", status: response.status, headers: response.headers, body: parsed(text) }
    },
    catch: (error): NoAnswer => ({ _tag: "NoAnswer", error })
  }).pipe(
    Effect.timeoutOrElse({
      duration: connection.timeout,
      orElse: () => Effect.fail<TimedOut>({ _tag: "TimedOut", after: connection.timeout })
    })
  )
