// Drives an EventSource the way @mailroom/http does, for adapter tests: a body (bytes, as sent) and
// headers in; the events, or the refusal with its reason, out.
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type { EventSource, EventSourceError, InboundRequest, Reason } from "../EventSource.js"
import type * as MailEvent from "../MailEvent.js"

type Headers = Readonly<Record<string, string>>

export interface EventSourceProbe {
  /** The request as `@mailroom/http` hands it over: its events, or the refusal as the Effect's error. */
  readonly receive: (
    body: unknown,
    headers?: Headers
  ) => Effect.Effect<ReadonlyArray<MailEvent.Unrouted>, EventSourceError>
  /** The events of a request the source accepts; rejects when it refuses. */
  readonly events: (body: unknown, headers?: Headers) => Promise<ReadonlyArray<MailEvent.Unrouted>>
  /** The error of a request the source refuses; rejects when it accepts. */
  readonly refusal: (body: unknown, headers?: Headers) => Promise<EventSourceError>
  /** What the headers alone prove, as `@mailroom/http` asks before reading a body: the verdict, or the refusal's tag. */
  readonly checkHeaders: (headers?: Headers) => "verified" | "unverified" | Reason["_tag"]
}

/** A probe of `source`; `headers` go with every request unless a call gives its own. */
export const probeEventSource = (source: EventSource, headers: Headers = {}): EventSourceProbe => {
  // Node hands @mailroom/http its header names in lower case, whatever the caller wrote.
  const lookup = (given: Headers) => {
    const lower = new Map(Object.entries(given).map(([name, value]) => [name.toLowerCase(), value]))
    return (name: string) => lower.get(name)
  }
  const check = (header: InboundRequest["header"]) => source.checkHeaders?.(header) ?? "unverified"
  const receive = (body: unknown, given: Headers = headers) => {
    const header = lookup(given)
    // As @mailroom/http does: the headers first, the body only when they do not refuse.
    const verdict = check(header)
    return typeof verdict === "string"
      ? source.receive({ header, body: Buffer.from(typeof body === "string" ? body : JSON.stringify(body)) })
      : Effect.fail(verdict)
  }
  return {
    receive,
    events: async (body, given) => {
      const exit = await Effect.runPromise(Effect.exit(receive(body, given)))
      if (Exit.isFailure(exit)) throw new Error(`refused: ${String(exit.cause)}`)
      return exit.value
    },
    refusal: async (body, given) => {
      const exit = await Effect.runPromise(Effect.exit(receive(body, given)))
      if (Exit.isSuccess(exit)) throw new Error("the request was accepted")
      const reason = exit.cause.reasons[0]
      if (reason === undefined || !("error" in reason)) throw new Error(`not a refusal: ${String(exit.cause)}`)
      return reason.error
    },
    checkHeaders: (given = headers) => {
      const verdict = check(lookup(given))
      return typeof verdict === "string" ? verdict : verdict.reason._tag
    }
  }
}

/** What a test compares of each event: type, recipient, message id, time, and bounce or click when present. */
export const essentials = (events: ReadonlyArray<MailEvent.Unrouted>) =>
  events.map((e) => ({
    type: e.type,
    recipient: e.recipient,
    message_id: e.message_id,
    occurred_at: e.occurred_at,
    ...(e.bounce === undefined ? {} : { bounce: e.bounce }),
    ...(e.click === undefined ? {} : { click: e.click })
  }))
