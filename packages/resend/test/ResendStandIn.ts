// A local stand-in for Resend's API (`POST /emails`, `GET /domains`) on 127.0.0.1: it checks what Resend
// checks, answers as Resend documents, and keeps every request so tests read back what Resend would have got.
//
// Sources: Resend's OpenAPI document (resend/resend-openapi: the SendEmailRequest fields, `to` at most
// 50, the Idempotency-Key of at most 256 characters, tag characters), the API reference's errors page
// (each error's `name`, status and message), the rate-limit page and the headers of Resend's answers
// recorded in resend-node's tests (`ratelimit-limit`, `ratelimit-policy`, `ratelimit-remaining`,
// `ratelimit-reset`, and `retry-after` on a 429), the idempotency-keys page (replay, 409s), the attachment
// types knowledge-base page, and the `{statusCode, name, message}` bodies of resend-node's test fixtures
// (`missing_required_field`, the 422 `validation_error` of an invalid `from`). Where Resend documents a
// refusal but not its wording (more than 50 recipients, a forbidden file type), the wording is ours.
import { randomUUID } from "node:crypto"
import type { ReceivedEmail } from "@mailroom/core/testing"
import { type StandInFault as Fault, type StandInServer, startStandIn } from "@mailroom/test-support"
import { Context, Effect, Layer, type Scope } from "effect"
import libmime from "libmime"
// `.ts`, not `.js`, below: the bench runs this stand-in under plain node, which maps neither to the other.
import { decodeTagValue } from "../src/internal/message.ts"
import * as Rules from "./ResendStandInRules.ts"

export interface StandInOptions {
  /** A full-access API key. Default: a random `re_` key, readable as `standIn.apiKey`. */
  readonly apiKey?: string
  /** Sending-only keys: they send, and anything else is `restricted_api_key`. */
  readonly sendingKeys?: ReadonlyArray<string>
  /** The account's verified domains. Default `["acme.example"]`. */
  readonly domains?: ReadonlyArray<string>
  /** The account owner's address, the only recipient `onboarding@resend.dev` may send to. */
  readonly ownerEmail?: string
  /** Emails accepted per day before `daily_quota_exceeded`. Default: no quota. */
  readonly dailyQuota?: number
}

export type { RecordedRequest, StandInFault as Fault } from "@mailroom/test-support"

/** A message Resend accepted: the JSON fields as received, the id it answered, the Idempotency-Key it came with. */
export interface AcceptedMessage {
  readonly id: string
  readonly fields: Readonly<Record<string, unknown>>
  readonly idempotencyKey: string | undefined
}

/** The server (`url` is for the provider's `baseUrl`) and what Resend took. */
export interface StandIn extends StandInServer {
  readonly apiKey: string
  readonly accepted: ReadonlyArray<AcceptedMessage>
  /** The message accepted under `id`, as its recipients would see it; throws when there is none. */
  readonly received: (id: string) => ReceivedEmail
}

/** Resend's 429 for too many requests, with the headers its answers carry. */
export const rateLimited = (retryAfter = 1): Fault => ({
  status: 429,
  body: {
    statusCode: 429,
    name: "rate_limit_exceeded",
    message:
      "Too many requests. You can only make 2 requests per second. See rate limit response headers for more information. Or contact support to increase rate limit."
  },
  headers: {
    "ratelimit-limit": "2",
    "ratelimit-policy": "2;w=1",
    "ratelimit-remaining": "0",
    "ratelimit-reset": String(retryAfter),
    "retry-after": String(retryAfter)
  }
})

/** What a recipient's parser shows of a header's text: RFC 2047 encoded-words decoded. */
const decoded = (text: string) => libmime.decodeWords(text)

const addresses = (value: unknown): Array<string> =>
  (value === undefined ? [] : typeof value === "string" ? [value] : (value as Array<string>)).map(
    (a) => Rules.parseMailbox(a)?.address ?? a
  )

const toReceived = (fields: Readonly<Record<string, unknown>>): ReceivedEmail => {
  const from = Rules.parseMailbox(fields.from as string)
  if (from === undefined) throw new Error("the stand-in accepted an invalid from")
  const text = (field: string) => (typeof fields[field] === "string" ? (fields[field] as string) : undefined)
  const attachments = (fields.attachments ?? []) as Array<Record<string, string>>
  const tags = (fields.tags ?? []) as Array<{ readonly name: string; readonly value: string }>
  return {
    from: from.name === undefined ? { address: from.address } : { address: from.address, name: decoded(from.name) },
    to: addresses(fields.to),
    cc: addresses(fields.cc),
    bcc: addresses(fields.bcc),
    replyTo: addresses(fields.reply_to),
    // Resend writes an ASCII subject and file name as they are; a recipient's parser decodes them.
    subject: decoded(fields.subject as string),
    text: text("text"),
    html: text("html"),
    attachments: attachments.map((a) => ({
      filename: decoded(a.filename ?? ""),
      contentType: a.content_type ?? "application/octet-stream",
      content: new Uint8Array(Buffer.from(a.content ?? "", "base64")),
      // Resend makes a part with a content_id an inline one.
      contentId: a.content_id,
      disposition: a.content_id === undefined ? ("attachment" as const) : ("inline" as const)
    })),
    headers: Object.entries((fields.headers ?? {}) as Record<string, string>).map(([name, value]) => ({ name, value })),
    // Resend holds the metadata as tags too (encoded where a value is not tag characters); both are read back.
    tags: tags.map((tag) => ({ name: tag.name, value: decodeTagValue(tag.value) })),
    metadata: Object.fromEntries(tags.map((tag) => [tag.name, decodeTagValue(tag.value)]))
  }
}

/** The headers every answer of Resend carries (its rate limit: 2 requests a second, one left). */
const rateHeaders = {
  "ratelimit-limit": "2",
  "ratelimit-policy": "2;w=1",
  "ratelimit-remaining": "1",
  "ratelimit-reset": "1"
}

/** Starts a stand-in on 127.0.0.1 with a free port. */
export const start = async (options: StandInOptions = {}): Promise<StandIn> => {
  const account: Rules.Account = {
    apiKey: options.apiKey ?? `re_${randomUUID().replaceAll("-", "")}`,
    sendingKeys: options.sendingKeys ?? [],
    domains: options.domains ?? ["acme.example"],
    ownerEmail: options.ownerEmail ?? "owner@acme.example",
    dailyQuota: options.dailyQuota ?? Number.POSITIVE_INFINITY
  }
  const accepted: Array<AcceptedMessage> = []
  const idempotency = new Map<string, { readonly body: string; readonly answer: Rules.Answer }>()
  const server = await startStandIn({
    name: "ResendStandIn",
    maxRequestBytes: Rules.maxRequestBytes,
    answer: (record) =>
      Rules.answerTo(account, record, {
        accepted: () => accepted.length,
        remembered: (key) => idempotency.get(key),
        accept: (fields, key, body) => {
          const id = randomUUID()
          accepted.push({ id, fields, idempotencyKey: key })
          const done: Rules.Answer = { status: 200, body: { id } }
          if (key !== undefined) idempotency.set(key, { body, answer: done })
          return done
        }
      }),
    headers: () => rateHeaders
  })
  return {
    ...server,
    apiKey: account.apiKey,
    accepted,
    received: (id) => {
      const message = accepted.find((m) => m.id === id)
      if (message === undefined) throw new Error(`the stand-in accepted no message ${id}`)
      return toReceived(message.fields)
    }
  }
}

/** A stand-in closed when the scope closes. */
export const make = (options: StandInOptions = {}): Effect.Effect<StandIn, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.promise(() => start(options)),
    (standIn) => Effect.promise(() => standIn.close())
  )

/** The stand-in as a service, for tests that share one. */
export class ResendStandIn extends Context.Service<ResendStandIn, StandIn>()("test/ResendStandIn") {
  static readonly layer = (options: StandInOptions = {}) => Layer.effect(ResendStandIn, make(options))
}
