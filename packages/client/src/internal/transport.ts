// One HTTP exchange with a timeout, turned into a success or one of the client's errors, and
// repeated while the error is retryable: bounded attempts, exponential backoff with jitter, Retry-After.
import { type ApiErrorDetails, fromDetails, MailroomApiError } from "../MailroomApiError.js"
import { type ConnectionFailure, MailroomConnectionError } from "../MailroomConnectionError.js"
import { transportFailure } from "./transportFailure.js"

export interface RetryPolicy {
  /** Attempts in all, the first included. */
  readonly attempts: number
  readonly initialDelay: number
  readonly maxDelay: number
}

export interface Transport {
  readonly fetch: typeof globalThis.fetch
  readonly timeout: number
  readonly retry: RetryPolicy
}

export interface Exchange {
  readonly method: string
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body?: BodyInit | undefined
  /** False for a stream: it can be sent once only, so the exchange is never repeated. */
  readonly replayable: boolean
  /** Read the success as bytes rather than JSON. */
  readonly bytes?: boolean
  /**
   * True for a storage URL. The server's own API never redirects, so a redirect there is a wrong
   * `baseUrl` (an http-to-https hop): followed, fetch turns a POST into a GET after a 301, 302 or 303
   * (a send would resolve with a page of `GET /emails`, nothing sent), and takes `x-api-key` along.
   */
  readonly followRedirects?: boolean
  readonly signal?: AbortSignal | undefined
  readonly timeout?: number | undefined
}

export interface Answer<A> {
  readonly value: A
  readonly status: number
  readonly headers: Headers
}

const sleep = (ms: number, signal: AbortSignal | undefined) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal?.reason)
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort)
      resolve()
    }, ms)
    signal?.addEventListener("abort", onAbort, { once: true })
  })

/** Exponential, capped, with half of it random so that clients failing together do not retry together. */
const backoff = (policy: RetryPolicy, retry: number) => {
  const ceiling = Math.min(policy.maxDelay, policy.initialDelay * 2 ** retry)
  return ceiling / 2 + Math.random() * (ceiling / 2)
}

/** Runs the exchange, retrying what is retryable; throws a MailroomApiError or MailroomConnectionError. */
export const exchange = async <A>(transport: Transport, request: Exchange): Promise<Answer<A>> => {
  checkHeaders(request.headers)
  const attempts = request.replayable ? Math.max(1, transport.retry.attempts) : 1
  for (let attempt = 1; ; attempt++) {
    try {
      return await once<A>(transport, request)
    } catch (error) {
      const retryable =
        (MailroomApiError.isInstance(error) || MailroomConnectionError.isInstance(error)) && error.isRetryable
      if (!retryable || attempt >= attempts) throw error
      const asked = MailroomApiError.isInstance(error) ? error.retryAfter : undefined
      // A wait longer than the caller allows is the caller's to schedule: the error says how long.
      if (asked !== undefined && asked * 1000 > transport.retry.maxDelay) throw error
      await sleep(asked === undefined ? backoff(transport.retry, attempt - 1) : asked * 1000, request.signal)
    }
  }
}

/**
 * Refuses a header value fetch would refuse (a line break inside, a character beyond U+00FF) before any
 * request: fetch's own TypeError quotes the value, which is a credential, and would be read as a network
 * failure that may have sent.
 */
const checkHeaders = (headers: Readonly<Record<string, string>>) => {
  for (const [name, value] of Object.entries(headers)) {
    try {
      new Headers([[name, value]])
    } catch {
      throw new TypeError(
        `MailroomClient: the ${name} header's value is not valid in HTTP (a control character, or a character beyond U+00FF); nothing was sent`
      )
    }
  }
}

const once = async <A>(transport: Transport, request: Exchange): Promise<Answer<A>> => {
  const { signal } = request
  if (signal?.aborted) throw signal.reason
  const controller = new AbortController()
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    controller.abort()
  }, request.timeout ?? transport.timeout)
  const onAbort = () => controller.abort(signal?.reason)
  signal?.addEventListener("abort", onAbort, { once: true })
  try {
    const init: RequestInit & { duplex?: "half" } = {
      method: request.method,
      headers: request.headers,
      signal: controller.signal,
      redirect: request.followRedirects === true ? "follow" : "manual"
    }
    if (request.body !== undefined) init.body = request.body
    // A streamed body must say so (fetch's half-duplex mode); other bodies have a known length.
    if (request.body instanceof ReadableStream) init.duplex = "half"
    // The body is read under the same timeout: an answer that stalls midway is no answer.
    const response = await transport.fetch(request.url, init)
    if (isRedirect(response)) throw redirected(await details(response, request), response.headers.get("location"))
    if (!response.ok) throw fromDetails(await details(response, request))
    // No content (the inbox's wait that saw nothing): nothing to read.
    if (response.status === 204) return { value: undefined as A, status: 204, headers: response.headers }
    if (request.bytes === true) {
      return {
        value: new Uint8Array(await response.arrayBuffer()) as A,
        status: response.status,
        headers: response.headers
      }
    }
    return { value: await json<A>(response, request), status: response.status, headers: response.headers }
  } catch (error) {
    if (MailroomApiError.isInstance(error)) throw error
    if (signal?.aborted) throw signal.reason
    throw new MailroomConnectionError({
      reason: timedOut ? "Timeout" : failureOf(error),
      method: request.method,
      url: request.url,
      cause: error
    })
  } finally {
    clearTimeout(timer)
    signal?.removeEventListener("abort", onAbort)
  }
}

const json = async <A>(response: Response, request: Exchange): Promise<A> => {
  const text = await response.text()
  try {
    return JSON.parse(text) as A
  } catch {
    throw new MailroomApiError({
      status: response.status,
      messages: ["the answer is not JSON: is baseUrl the address of a mailroom server?"],
      body: text.slice(0, 1000),
      method: request.method,
      url: request.url
    })
  }
}

/** The messages of any of the server's three error shapes, or the text of an answer from something else. */
const details = async (response: Response, request: Exchange): Promise<ApiErrorDetails> => {
  const text = await response.text()
  let body: unknown = text
  try {
    body = JSON.parse(text)
  } catch {}
  const shaped = (typeof body === "object" && body !== null ? body : {}) as Record<string, unknown>
  const messages = Array.isArray(shaped.errors)
    ? shaped.errors.map(String)
    : typeof shaped.error === "string"
      ? [shaped.error]
      : typeof shaped.message === "string"
        ? [shaped.message]
        : text.trim() === ""
          ? []
          : [text.trim().slice(0, 500)]
  return {
    status: response.status,
    messages,
    retryAfter: retryAfter(response.headers.get("retry-after")),
    body,
    method: request.method,
    url: request.url
  }
}

// A browser's manual redirect is opaque (status 0); elsewhere it is the 3xx itself.
const isRedirect = (response: Response) =>
  response.type === "opaqueredirect" || (response.status >= 300 && response.status < 400)

/** The redirect as an error naming where it pointed: the origin and path only, as a query may carry a secret. */
const redirected = (answer: ApiErrorDetails, location: string | null): MailroomApiError => {
  let where = "another address"
  try {
    if (location !== null) {
      const url = new URL(location, answer.url)
      where = `${url.origin}${url.pathname}`
    }
  } catch {}
  return new MailroomApiError({
    ...answer,
    messages: [
      `the server redirected to ${where}: set baseUrl to the address that answers (redirects are not followed)`
    ]
  })
}

/** Seconds from a `Retry-After` of delta-seconds or an HTTP date. */
const retryAfter = (value: string | null): number | undefined => {
  if (value === null) return undefined
  if (/^\s*\d+\s*$/.test(value)) return Number(value)
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - Date.now()) / 1000))
}

/** Whether the failure is certainly before the request went out: the table core's adapters use. */
const failureOf = (error: unknown): ConnectionFailure =>
  transportFailure(error).possiblySent ? "Network" : "CouldNotConnect"
