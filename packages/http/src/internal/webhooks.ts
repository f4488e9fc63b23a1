// How a provider's webhook body is admitted: what its headers prove is checked before any byte is read,
// each source has its own body limit, and few bodies only their content can verify (SNS) are read at once.
import type { EventSource } from "@mailroom/core"
import { describe, failure, type Outgoing } from "./responses.js"
import type { Incoming } from "./router.js"

export interface WebhookLimits {
  /** Bodies read at once whose headers prove nothing; one more is answered 503 with Retry-After. */
  readonly maxUnverifiedBodies: number
  /** How long such a body may take to arrive before it is answered 408 and its connection closed. */
  readonly unverifiedBodyTimeoutMs: number
}

/** Reads up to `limit` bytes of the body, or answers why not (413, 400). */
type ReadBytes = (request: Incoming, limit: number) => Promise<Outgoing | { readonly bytes: Uint8Array }>

/** What a refusal of the headers is answered, in the webhook's `{message}` shape. */
const refusal = (error: EventSource.EventSourceError): Outgoing => {
  const described = describe(error)
  return failure("other", described?.status ?? 401, described?.messages ?? [error.message], described?.headers)
}

/**
 * A refusal made before the body was read. Node reads (and drops) an unread body to keep the
 * connection; past 64 KiB, or of unknown length, the connection is closed instead, as Go's server does,
 * so a refused caller cannot make the server read what it sends.
 */
const unread = (request: Incoming, answer: Outgoing): Outgoing => {
  const declared = Number(request.header("content-length") ?? Number.NaN)
  return Number.isFinite(declared) && declared <= 64 * 1024 ? answer : { ...answer, close: true }
}

/** The reader of every webhook route of one handler: they share the count of unverified bodies. */
export const makeWebhookBody = (limits: WebhookLimits, readBytes: ReadBytes) => {
  let unverified = 0
  const seconds = Math.max(1, Math.round(limits.unverifiedBodyTimeoutMs / 1000))
  return async (
    source: EventSource.EventSource,
    request: Incoming,
    defaultLimit: number
  ): Promise<Outgoing | { readonly bytes: Uint8Array }> => {
    const limit = source.maxBodyBytes ?? defaultLimit
    if (Number(request.header("content-length")) > limit) {
      return unread(request, failure("other", 413, [`the body is larger than ${limit} bytes`]))
    }
    const check = source.checkHeaders?.(request.header) ?? "unverified"
    if (typeof check !== "string") return unread(request, refusal(check))
    if (check === "verified") return readBytes(request, limit)
    // Anyone can send a body only its signature can refuse: memory for them is bounded by
    // maxUnverifiedBodies x limit, and the provider sends again after a 503.
    if (unverified >= limits.maxUnverifiedBodies) {
      const busy = ["too many webhook requests are being verified; send it again shortly"]
      return unread(request, failure("other", 503, busy, { "retry-after": "5" }))
    }
    unverified++
    let timer: ReturnType<typeof setTimeout> | undefined
    const late = new Promise<Outgoing>((resolve) => {
      timer = setTimeout(
        () => resolve({ ...failure("other", 408, [`the body did not arrive within ${seconds} seconds`]), close: true }),
        limits.unverifiedBodyTimeoutMs
      )
    })
    try {
      return await Promise.race([readBytes(request, limit), late])
    } finally {
      clearTimeout(timer)
      unverified--
    }
  }
}
