// The client of a mailroom server, over `fetch` alone: sends with an Idempotency-Key and safe retries,
// uploads through a presigned URL in one call, reaches attachments by key or id, reads message records,
// keeps the suppression list, and asserts on the outbox in end-to-end tests.
import * as Records from "./internal/records.js"
import * as TestingApi from "./internal/testing.js"
import { exchange, type Transport } from "./internal/transport.js"
import type * as Wire from "./internal/wire.js"

/** The body of `POST /emails` (SPEC 2.4). */
export type SendEmailRequest = Wire.SendEmailRequest
/** The 201 answer of `POST /emails`. */
export type SendEmailResponse = Wire.SendEmailResponse
/** The 202 answer of a scheduled send. */
export type ScheduledEmailResponse = Wire.ScheduledEmailResponse
/** The body of `PATCH /emails/{id}`. */
export type RescheduleRequest = Wire.RescheduleRequest
/** The answer of `POST /emails/{id}/cancel`. */
export type CancelResponse = Wire.CancelResponse
/** An accepted item of a batch, by index. */
export type BatchAccepted = Wire.BatchAccepted
/** A refused item of a batch, by index, with its problems. */
export type BatchRefused = Wire.BatchRefused
/** The answer of `POST /emails/batch`. */
export type SendBatchResponse = Wire.SendBatchResponse
/** The body of `POST /attachments/presign`. */
export type PresignRequest = Wire.PresignRequest
/** The 201 answer of a presign: the upload URL, the key and the attachment id. */
export type PresignResponse = Wire.PresignResponse
/** A download URL and how long it lasts. */
export type DownloadResponse = Wire.DownloadResponse
/** The answer of `DELETE /attachments/delete?key=`. */
export type DeleteByKeyResponse = Wire.DeleteByKeyResponse
/** The answer of `DELETE /v1/attachments`. */
export type DeleteByIdResponse = Wire.DeleteByIdResponse
/** A message's status as the server reports it. */
export type EmailStatus = Wire.EmailStatus
/** A message's record: each recipient's state, tags, attachments. */
export type EmailRecord = Wire.EmailRecord
/** A message's record with its delivery events (`GET /emails/{id}`). */
export type EmailDetail = Wire.EmailDetail
/** A page of `GET /emails`, newest first, and the cursor after it. */
export type EmailList = Wire.EmailList
/** The query of `GET /emails`: limit, cursor, status, recipient, tag, time range. */
export type ListEmailsQuery = Wire.ListEmailsQuery
/** An address on the organisation's suppression list, with why. */
export type Suppression = Wire.Suppression
/** A page of `GET /suppressions`. */
export type SuppressionList = Wire.SuppressionList
/** The query of `GET /suppressions`. */
export type ListSuppressionsQuery = Wire.ListSuppressionsQuery
/** The body of `POST /suppressions`. */
export type SuppressRequest = Wire.SuppressRequest
/** The answer of `DELETE /suppressions/{email}`. */
export type UnsuppressResponse = Wire.UnsuppressResponse
/** An address of a message in the outbox. */
export type InboxAddress = Wire.InboxAddress
/** A link of a message: its URL, the text it shows, and which part it is in. */
export type InboxLink = Wire.InboxLink
/** An attachment of a message in the outbox, with its download URL. */
export type InboxAttachment = Wire.InboxAttachment
/** A message in the outbox as a list shows it. */
export type InboxMessageSummary = Wire.InboxMessageSummary
/** A message in the outbox: headers, text, HTML, links, attachments and events. */
export type InboxMessage = Wire.InboxMessage

/** How the client retries what is safe to retry (a 429, a 503 that sent nothing, a refused connection). */
export interface RetryOptions {
  /** Attempts in all, the first included. Default 3. */
  readonly attempts?: number
  /** Milliseconds before the first retry when the server gives no `Retry-After`; doubles each time. Default 500. */
  readonly initialDelay?: number
  /**
   * Longest wait between attempts, in milliseconds. Default 10000. A `Retry-After` longer than this
   * is not waited out: the error is thrown with its `retryAfter`, for the caller to schedule.
   */
  readonly maxDelay?: number
}

/** Where the server is, the credentials, and the client's timeout and retries. */
export interface Options {
  /** Where the server serves the base variant (`x-api-key`), with any path prefix: `https://mail.example.com`. */
  readonly baseUrl: string | URL | undefined
  /** Where the server serves the `/v1` variant (Bearer). Default: `baseUrl`. */
  readonly v1BaseUrl?: string | URL | undefined
  /** Sent as `x-api-key`: sending, and attachments by `key`. */
  readonly apiKey?: string | undefined
  /** Sent as `Authorization: Bearer`: attachments by `attachmentId`. */
  readonly accessToken?: string | undefined
  /**
   * Sent as `x-mailroom-viewer-token` by `testing`: the standalone server's `viewer.token`, needed when
   * it listens beyond loopback. Default: none (a server on loopback needs none).
   */
  readonly viewerToken?: string | undefined
  /** Default: the global `fetch`. Inject one for a proxy, custom agent, or tests. */
  readonly fetch?: typeof globalThis.fetch
  /** Milliseconds each attempt may take, answer body included. Default 60000; per call, `{ timeout }`. */
  readonly timeout?: number
  /**
   * Retries of answers that certainly did nothing: 429, a 503 that sent nothing, a connection that
   * could not be made. `false` makes one attempt only.
   */
  readonly retry?: RetryOptions | false
}

/** What one call may set: an abort signal and its own timeout. */
export interface RequestOptions {
  readonly signal?: AbortSignal
  /** Milliseconds this call's each attempt may take; overrides the client's `timeout`. */
  readonly timeout?: number
}

/** A send's options: its Idempotency-Key beside the request's own. */
export interface SendOptions extends RequestOptions {
  /**
   * The same key with the same request within 24 hours is answered with the first response and
   * sends nothing. Default: a new random UUID per `send` call, reused by its retries.
   */
  readonly idempotencyKey?: string
}

/** What every send answers beside the server's body. */
export interface Sent {
  /** True when the server answered from its record of an earlier request with the same key. */
  readonly replayed: boolean
  /** The Idempotency-Key the request went with, to send the same request again safely later. */
  readonly idempotencyKey: string
}

/** The 201 answer of a send, and whether it was a replay. */
export interface SendEmailResult extends SendEmailResponse, Sent {}

/** A scheduled send's answer (202): the message waits for `scheduled_at`. */
export interface ScheduledEmailResult extends ScheduledEmailResponse, Sent {}

/** `emails.send`'s answer for `R`: scheduled when it has `scheduled_at`, sent when it has none, either when its type does not say. */
export type SendResultOf<R> = [R] extends [never]
  ? SendEmailResult
  : "scheduled_at" extends keyof R
    ? [R] extends [{ readonly scheduled_at: string }]
      ? ScheduledEmailResult
      : SendEmailResult | ScheduledEmailResult
    : SendEmailResult

/** Each item of a batch by its index: accepted in `data`, refused in `errors`. */
export interface SendBatchResult extends SendBatchResponse, Sent {}

/** File content for `upload`: bytes, a Blob (or File), or a stream of bytes. */
export type UploadData = Uint8Array | ArrayBuffer | Blob | ReadableStream<Uint8Array>

/** What `attachments.upload` sends: a file name, a type and the data. */
export interface UploadInput {
  readonly filename: string
  /** Default: the Blob's own type, else `application/octet-stream`. */
  readonly contentType?: string
  readonly data: UploadData
  /** The size of a stream, when known: the upload URL then accepts exactly this many bytes. */
  readonly contentLength?: number
  /** Your organisation's id; the server takes it from your credential when absent. */
  readonly orgId?: string
}

/** Where an upload is stored: the key for a send, the id for `/v1`. */
export interface UploadResult {
  /** The storage key, for `attachments[].key` of a send. */
  readonly key: string
  /** The same attachment's id for the `/v1` variant. */
  readonly attachmentId: string
}

/** An attachment by storage key (the base variant, `apiKey`) or by id (the `/v1` variant, `accessToken`). */
export type AttachmentRef = { readonly key: string } | { readonly attachmentId: string }

/** The `/emails` operations: send, get, list. */
export interface Emails {
  /**
   * `POST /emails`. Resolves to the 201 body, or with `scheduled_at` the 202 one (`status: "scheduled"`);
   * rejects with a MailroomApiError or MailroomConnectionError.
   */
  // Overloads, not a type parameter: TypeScript checks an object literal for unknown fields (Resend's
  // `scheduledAt`, `replyTo`) only against a type it is not inferring.
  readonly send: {
    (
      request: SendEmailRequest & { readonly scheduled_at: string },
      options?: SendOptions
    ): Promise<ScheduledEmailResult>
    (request: SendEmailRequest & { readonly scheduled_at?: undefined }, options?: SendOptions): Promise<SendEmailResult>
    (request: SendEmailRequest, options?: SendOptions): Promise<SendEmailResult | ScheduledEmailResult>
  }
  /**
   * `POST /emails/batch`: 1 to 100 requests, each sent (or scheduled) on its own. Resolves to each item's
   * outcome by index, also when none was accepted; one Idempotency-Key covers the batch and its retries.
   */
  readonly sendBatch: (requests: ReadonlyArray<SendEmailRequest>, options?: SendOptions) => Promise<SendBatchResult>
  /** `POST /emails/{id}/cancel`: a ConflictError once the message started to send; a NotFoundError for another's. */
  readonly cancel: (id: string, options?: RequestOptions) => Promise<CancelResponse>
  /** `PATCH /emails/{id}`: moves a scheduled message to `scheduledAt` (a Date, or RFC 3339 with an offset). */
  readonly reschedule: (
    id: string,
    scheduledAt: Date | string,
    options?: RequestOptions
  ) => Promise<ScheduledEmailResponse>
  /** `GET /emails/{id}`: each recipient's state and the delivery events. Another organisation's id is a NotFoundError. */
  readonly get: (id: string, options?: RequestOptions) => Promise<EmailDetail>
  /**
   * Every page of `GET /emails`, newest first, from `query.cursor` or the first:
   * `for await (const page of mailroom.emails.list({ status: "bounced" }))`. Each page is fetched as the loop asks.
   */
  readonly list: (query?: ListEmailsQuery, options?: RequestOptions) => AsyncIterableIterator<EmailList>
  /** One page of `GET /emails`; pass its `next_cursor` as `cursor` for the next. */
  readonly listPage: (query?: ListEmailsQuery, options?: RequestOptions) => Promise<EmailList>
}

/** An address added to the suppression list, or the entry it already had. */
export interface SuppressResult extends Suppression {
  /** False when the address was on the list already: the entry is the one kept, with its first reason. */
  readonly created: boolean
}

/** The suppression list's operations: add, remove, list. */
export interface Suppressions {
  /** `POST /suppressions`: sends to the address drop it from then on. */
  readonly add: (request: SuppressRequest, options?: RequestOptions) => Promise<SuppressResult>
  /** `DELETE /suppressions/{email}`: a NotFoundError when the address is not on the list. */
  readonly remove: (email: string, options?: RequestOptions) => Promise<UnsuppressResponse>
  /** Every page of `GET /suppressions`, newest first, as `emails.list` does. */
  readonly list: (query?: ListSuppressionsQuery, options?: RequestOptions) => AsyncIterableIterator<SuppressionList>
  /** One page of `GET /suppressions`. */
  readonly listPage: (query?: ListSuppressionsQuery, options?: RequestOptions) => Promise<SuppressionList>
}

/** The attachment operations: upload, presign, download, read, delete. */
export interface Attachments {
  /** Presign, then `PUT` the data to the returned URL: the file never passes through the mailroom server. */
  readonly upload: (input: UploadInput, options?: RequestOptions) => Promise<UploadResult>
  /** The presign step alone, e.g. to hand the upload URL to a browser. */
  readonly presign: (request: PresignRequest, options?: RequestOptions) => Promise<PresignResponse>
  /** A temporary download URL (one hour). */
  readonly download: (ref: AttachmentRef, options?: RequestOptions) => Promise<DownloadResponse>
  /** The attachment's bytes, fetched from its temporary download URL. */
  readonly read: (ref: AttachmentRef, options?: RequestOptions) => Promise<Uint8Array>
  /** Permanent deletion: for abandoned uploads, or once the email they belong to is deleted. */
  readonly delete: {
    (ref: { readonly key: string }, options?: RequestOptions): Promise<DeleteByKeyResponse>
    (ref: { readonly attachmentId: string }, options?: RequestOptions): Promise<DeleteByIdResponse>
    (ref: AttachmentRef, options?: RequestOptions): Promise<DeleteByKeyResponse | DeleteByIdResponse>
  }
}

/** The filters of a query of the outbox. */
export interface InboxQueryOptions extends RequestOptions {
  /**
   * Only messages the outbox received at or after this time. Default: when the client was made, so a
   * run never sees an earlier run's mail.
   */
  readonly since?: Date | string
}

/** What `testing.awaitEmail` waits for, and how long. */
export interface AwaitEmailOptions {
  /** A recipient (to, cc or bcc), compared without case. */
  readonly to: string
  /** Contained in the subject, without case. */
  readonly subject?: string
  /** Milliseconds to wait in all. Default 10000. */
  readonly timeout?: number
  /** As `InboxQueryOptions.since`: a match already there since then is answered at once. */
  readonly since?: Date | string
  readonly signal?: AbortSignal
}

/**
 * Assertions for end-to-end tests, over the standalone server's inbox API (its outbox provider): on a
 * loopback server they need no credential; beyond loopback, `viewerToken`.
 */
export interface Testing {
  /**
   * The newest message to `to` (and `subject`) received since `since`, or the next one to arrive;
   * rejects with `EmailNotReceivedError` after `timeout`.
   */
  readonly awaitEmail: (options: AwaitEmailOptions) => Promise<InboxMessage>
  /** Every message to an address, newest first. */
  readonly emailsTo: (address: string, options?: InboxQueryOptions) => Promise<ReadonlyArray<InboxMessageSummary>>
  /** The newest message to an address, or undefined. */
  readonly lastEmailTo: (address: string, options?: InboxQueryOptions) => Promise<InboxMessage | undefined>
  /** A message by its id (a NotFoundError when the outbox has none). */
  readonly getEmail: (id: string, options?: RequestOptions) => Promise<InboxMessage>
  /** Its links: each `<a href>` of the HTML with the text it shows, then each URL of the text part. */
  readonly links: (message: { readonly links: ReadonlyArray<InboxLink> }) => ReadonlyArray<InboxLink>
  /** Deletes every message in the outbox; answers how many. */
  readonly clear: () => Promise<number>
}

/** A client of one mailroom server: what `make` answers. */
export interface MailroomClient {
  readonly emails: Emails
  readonly attachments: Attachments
  /** The organisation's suppression list (`apiKey`). */
  readonly suppressions: Suppressions
  /** Assertions on the server's outbox, for end-to-end tests. */
  readonly testing: Testing
}

const defaults = { timeout: 60_000, attempts: 3, initialDelay: 500, maxDelay: 10_000 }

const baseOf = (name: string, url: string | URL | undefined): string => {
  if (url === undefined || url === "") throw new TypeError(`MailroomClient: ${name} is required`)
  try {
    // A path prefix is kept: `https://host/mail` serves `https://host/mail/emails`.
    return new URL(String(url)).href.replace(/\/+$/, "")
  } catch {
    throw new TypeError(`MailroomClient: ${name} is not a URL: ${String(url)}`)
  }
}

const sizeOf = (data: UploadData, given: number | undefined): number | undefined =>
  data instanceof Uint8Array || data instanceof ArrayBuffer ? data.byteLength : data instanceof Blob ? data.size : given

/**
 * A client for one server. Throws a TypeError when `baseUrl` is missing. A call that needs a credential
 * the client lacks throws a TypeError naming it (`testing` on a loopback server needs none).
 */
export const make = (options: Options): MailroomClient => {
  const baseUrl = baseOf("baseUrl", options.baseUrl)
  const v1BaseUrl = options.v1BaseUrl === undefined ? baseUrl : baseOf("v1BaseUrl", options.v1BaseUrl)
  const { apiKey, accessToken } = options
  const retry = options.retry === false ? { attempts: 1 } : (options.retry ?? {})
  const transport: Transport = {
    // Looked up at each call, and called unbound: Workers refuse a fetch called on another `this`.
    fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
    timeout: options.timeout ?? defaults.timeout,
    retry: {
      attempts: retry.attempts ?? defaults.attempts,
      initialDelay: retry.initialDelay ?? defaults.initialDelay,
      maxDelay: retry.maxDelay ?? defaults.maxDelay
    }
  }

  const withApiKey = (what: string) => {
    if (!apiKey) throw new TypeError(`MailroomClient: ${what} needs an apiKey`)
    return { "x-api-key": apiKey }
  }
  const withToken = (what: string) => {
    if (!accessToken) throw new TypeError(`MailroomClient: ${what} needs an accessToken`)
    return { authorization: `Bearer ${accessToken}` }
  }
  const jsonHeaders = { "content-type": "application/json", accept: "application/json" }
  const call = async <A>(
    method: string,
    url: string,
    headers: Record<string, string>,
    body: unknown,
    options: RequestOptions
  ) =>
    exchange<A>(transport, {
      method,
      url,
      headers: body === undefined ? { accept: "application/json", ...headers } : { ...jsonHeaders, ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
      replayable: true,
      signal: options.signal,
      timeout: options.timeout
    })

  /**
   * A POST under an Idempotency-Key (yours, or a new UUID its retries reuse), its answer marked as
   * replayed or not. A batch none of whose items was accepted answers 400 with each item's outcome:
   * an answer to read, not a failure.
   */
  const keyed = async <A>(path: string, what: string, body: unknown, options: SendOptions) => {
    const idempotencyKey = options.idempotencyKey ?? crypto.randomUUID()
    const headers = { ...withApiKey(what), "idempotency-key": idempotencyKey }
    const answer: { readonly value: A; readonly headers?: Headers } = await call<A>(
      "POST",
      `${baseUrl}${path}`,
      headers,
      body,
      options
    ).catch((error: { readonly status?: number; readonly body?: { readonly data?: unknown } }) => {
      if (error.status !== 400 || !Array.isArray(error.body?.data)) throw error
      return { value: error.body as A }
    })
    return { ...answer.value, replayed: answer.headers?.get("idempotent-replayed") === "true", idempotencyKey }
  }

  // The answer's type follows the request's: the server schedules exactly the requests with `scheduled_at`.
  const send = ((request: SendEmailRequest, options: SendOptions = {}) =>
    keyed<SendEmailResponse | ScheduledEmailResponse>("/emails", "emails.send", request, options)) as Emails["send"]

  const sendBatch: Emails["sendBatch"] = (requests, options = {}) =>
    keyed<SendBatchResponse>("/emails/batch", "emails.sendBatch", requests, options)

  // The base variant when there is an API key; the `/v1` one for a caller holding only a token.
  const presign: Attachments["presign"] = async (request, options = {}) => {
    const [url, headers] = apiKey
      ? [`${baseUrl}/attachments/presign`, withApiKey("attachments.presign")]
      : [`${v1BaseUrl}/v1/attachments/presign`, withToken("attachments.presign")]
    return (await call<PresignResponse>("POST", url, headers, request, options)).value
  }

  const upload: Attachments["upload"] = async (input, options = {}) => {
    const { data } = input
    const contentType = input.contentType ?? (data instanceof Blob && data.type !== "" ? data.type : undefined)
    const contentLength = sizeOf(data, input.contentLength)
    const presigned = await presign(
      {
        filename: input.filename,
        content_type: contentType ?? "application/octet-stream",
        ...(contentLength === undefined ? {} : { content_length: contentLength }),
        ...(input.orgId === undefined ? {} : { org_id: input.orgId })
      },
      options
    )
    // The URL is signed for this content type; storage refuses the upload under any other.
    await exchange<unknown>(transport, {
      method: "PUT",
      url: presigned.url,
      headers: { "content-type": contentType ?? "application/octet-stream" },
      body: data as BodyInit,
      replayable: !(data instanceof ReadableStream),
      bytes: true,
      followRedirects: true,
      signal: options.signal,
      timeout: options.timeout
    })
    return { key: presigned.key, attachmentId: presigned.attachment_id }
  }

  const download: Attachments["download"] = async (ref, options = {}) =>
    "key" in ref
      ? (
          await call<DownloadResponse>(
            "GET",
            `${baseUrl}/attachments/download?key=${encodeURIComponent(ref.key)}`,
            withApiKey("attachments.download by key"),
            undefined,
            options
          )
        ).value
      : (
          await call<DownloadResponse>(
            "GET",
            `${v1BaseUrl}/v1/attachments/download?attachment_id=${encodeURIComponent(ref.attachmentId)}`,
            withToken("attachments.download by attachmentId"),
            undefined,
            options
          )
        ).value

  const read: Attachments["read"] = async (ref, options = {}) => {
    const { download_url } = await download(ref, options)
    const answer = await exchange<Uint8Array>(transport, {
      method: "GET",
      url: download_url,
      headers: {},
      replayable: true,
      bytes: true,
      followRedirects: true,
      signal: options.signal,
      timeout: options.timeout
    })
    return answer.value
  }

  const remove = (async (ref: AttachmentRef, options: RequestOptions = {}) =>
    "key" in ref
      ? (
          await call<DeleteByKeyResponse>(
            "DELETE",
            `${baseUrl}/attachments/delete?key=${encodeURIComponent(ref.key)}`,
            withApiKey("attachments.delete by key"),
            undefined,
            options
          )
        ).value
      : (
          await call<DeleteByIdResponse>(
            "DELETE",
            `${v1BaseUrl}/v1/attachments`,
            withToken("attachments.delete by attachmentId"),
            { attachment_id: ref.attachmentId },
            options
          )
        ).value) as Attachments["delete"]

  const records = Records.make({ baseUrl, call, withApiKey })
  const testing = TestingApi.make({
    baseUrl,
    viewerToken: options.viewerToken,
    get: (url, headers, options) => call("GET", url, headers, undefined, options),
    send: (method, url, headers) => call(method, url, headers, undefined, {})
  })
  return {
    emails: { send, sendBatch, ...records.emails },
    attachments: { upload, presign, download, read, delete: remove },
    suppressions: records.suppressions,
    testing
  }
}
