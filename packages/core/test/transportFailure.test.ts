// Adapter.transportFailure, code by code: real failures produced on 127.0.0.1 and read from what
// Node's fetch (undici) and node:http (the AWS SDK's transport) reject with, then the shapes no local
// peer can produce, built exactly as Node, undici and the AWS SDK's handler build them.
import { request as httpRequest } from "node:http"
import { request as httpsRequest } from "node:https"
import {
  type FaultServer,
  faultServer,
  refusedPort,
  type TlsServer,
  tlsServer,
  unresolvableHost
} from "@mailroom/test-support"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import * as Adapter from "../src/adapter.js"

/** What `fetch` rejects with for a POST to `url` (it must reject). */
const fetchFailure = async (url: string, init: RequestInit = {}): Promise<unknown> => {
  try {
    await fetch(url, { method: "POST", body: "a request body", ...init })
  } catch (error) {
    return error
  }
  throw new Error(`fetch ${url} was answered`)
}

/** What a node:http(s) POST to `url` fails with, as the AWS SDK's handler sees it. */
const nodeFailure = (url: string, options: { ca?: string; timeout?: number } = {}): Promise<unknown> =>
  new Promise((resolve, reject) => {
    const send = url.startsWith("https:") ? httpsRequest : httpRequest
    const request = send(url, { method: "POST", agent: false, ...(options.ca ? { ca: options.ca } : {}) }, () =>
      reject(new Error(`${url} was answered`))
    )
    if (options.timeout !== undefined) {
      request.setTimeout(options.timeout, () =>
        request.destroy(Object.assign(new Error("socket timed out"), { name: "TimeoutError" }))
      )
    }
    request.on("error", resolve)
    request.end("a request body")
  })

const verdict = (error: unknown) => {
  const { possiblySent, kind } = Adapter.transportFailure(error)
  return { possiblySent, kind }
}

describe("real failures, through fetch and node:http", () => {
  const servers: Record<string, FaultServer> = {}
  let tls: TlsServer
  let expired: TlsServer
  beforeAll(async () => {
    for (const fault of ["resetOnAccept", "resetAfterRequest", "closeAfterRequest", "closeInTlsHandshake", "silent"]) {
      servers[fault] = await faultServer(fault as never)
    }
    tls = await tlsServer()
    expired = await tlsServer({ expired: true })
  }, 30_000)
  afterAll(async () => {
    await Promise.all([...Object.values(servers), tls, expired].map((server) => server.close()))
  })
  const url = (fault: string, scheme = "http") => `${scheme}://${servers[fault]?.host}/email`

  it("a refused connection: never sent", async () => {
    const port = await refusedPort()
    for (const error of [
      await fetchFailure(`http://127.0.0.1:${port}/`),
      await nodeFailure(`http://127.0.0.1:${port}/`)
    ]) {
      assert.deepStrictEqual(verdict(error), { possiblySent: false, kind: "refused" })
      assert.include(Adapter.transportFailure(error).description, "ECONNREFUSED")
    }
  })

  it("a port fetch refuses to use (the Fetch standard's bad ports, 6000 among them): never sent", async () => {
    // fetch refuses before it connects, whether anything listens there or not.
    const error = await fetchFailure("http://127.0.0.1:6000/")
    assert.deepStrictEqual(verdict(error), { possiblySent: false, kind: "blockedPort" })
    assert.strictEqual(
      Adapter.transportFailure(error).description,
      "fetch refuses to connect to this port (one the Fetch standard blocks)"
    )
  })

  it("a host name that does not resolve: never sent", async () => {
    for (const error of [
      await fetchFailure(`http://${unresolvableHost}/`),
      await nodeFailure(`http://${unresolvableHost}/`)
    ]) {
      assert.deepStrictEqual(verdict(error), { possiblySent: false, kind: "dns" })
    }
  })

  it("a certificate the client does not trust, or one that expired: never sent, the server saw no request", async () => {
    for (const error of [await fetchFailure(`https://${tls.host}/`), await nodeFailure(`https://${tls.host}/`)]) {
      assert.deepStrictEqual(verdict(error), { possiblySent: false, kind: "tls" })
      assert.include(Adapter.transportFailure(error).codes, "DEPTH_ZERO_SELF_SIGNED_CERT")
    }
    const error = await nodeFailure(`https://localhost:${expired.port}/`, { ca: expired.certificate })
    assert.deepStrictEqual(Adapter.transportFailure(error).codes, ["CERT_HAS_EXPIRED"])
    assert.deepStrictEqual(verdict(error), { possiblySent: false, kind: "tls" })
    assert.strictEqual(tls.requests() + expired.requests(), 0)
  })

  it("a connection cut in the TLS handshake, before a byte of the request: never sent", async () => {
    const https = url("closeInTlsHandshake", "https")
    for (const error of [await fetchFailure(https), await nodeFailure(https)]) {
      assert.deepStrictEqual(Adapter.transportFailure(error).codes, ["ECONNRESET"])
      assert.deepStrictEqual(verdict(error), { possiblySent: false, kind: "tls" })
    }
  })

  it("a connection reset as it is accepted, before the client wrote a byte: never sent", async () => {
    for (const error of [await fetchFailure(url("resetOnAccept")), await nodeFailure(url("resetOnAccept"))]) {
      assert.deepStrictEqual(verdict(error), { possiblySent: false, kind: "closedBeforeWrite" })
    }
    assert.strictEqual(servers.resetOnAccept?.received(), 0)
  })

  it("a reset or a hang-up after the request was written: possibly sent", async () => {
    for (const fault of ["resetAfterRequest", "closeAfterRequest"]) {
      for (const error of [await fetchFailure(url(fault)), await nodeFailure(url(fault))]) {
        assert.deepStrictEqual(verdict(error), { possiblySent: true, kind: "reset" }, fault)
      }
      assert.isAbove(servers[fault]?.received() ?? 0, 0, "the server did receive the request")
    }
  })

  it("no answer in time: possibly sent", async () => {
    const fetched = await fetchFailure(url("silent"), { signal: AbortSignal.timeout(200) })
    const node = await nodeFailure(url("silent"), { timeout: 200 })
    for (const error of [fetched, node]) assert.deepStrictEqual(verdict(error), { possiblySent: true, kind: "timeout" })
  })

  it("every address of a name refused (an AggregateError from trying each): never sent", async () => {
    const port = await refusedPort()
    const error = await new Promise<unknown>((resolve) => {
      const request = httpRequest({
        host: "two-addresses.test",
        port,
        method: "POST",
        agent: false,
        lookup: (_host, _options, callback) =>
          (callback as (e: null, a: ReadonlyArray<{ address: string; family: number }>) => void)(null, [
            { address: "127.0.0.1", family: 4 },
            { address: "127.0.0.2", family: 4 }
          ])
      })
      request.on("error", resolve)
      request.end()
    })
    assert.instanceOf(error, AggregateError)
    assert.lengthOf((error as AggregateError).errors, 2)
    assert.deepStrictEqual(verdict(error), { possiblySent: false, kind: "refused" })
  })
})

/** An error as Node's system calls make them: `syscall ERRNO address`, with `code` and `syscall`. */
const system = (syscall: string | undefined, code: string) =>
  Object.assign(new Error(syscall === undefined ? code : `${syscall} ${code} 127.0.0.1:443`), {
    code,
    ...(syscall === undefined ? {} : { syscall, errno: -1 })
  })
/** What fetch rejects with: a TypeError "fetch failed" whose cause is the failure. */
const fetchFailed = (cause: unknown) => new TypeError("fetch failed", { cause })
/** What net rejects with after trying every address of a name; its own code is the first error's. */
const aggregate = (...errors: ReadonlyArray<Error & { code: string }>) =>
  Object.assign(new AggregateError(errors, ""), { code: errors[0]?.code })
/** undici's SocketError, which counts the bytes written on the socket. */
const socketError = (bytesWritten: number) =>
  Object.assign(new Error("other side closed"), {
    name: "SocketError",
    code: "UND_ERR_SOCKET",
    socket: { bytesWritten, bytesRead: 0 }
  })

describe("each code, in the shapes Node, undici and the AWS SDK give it", () => {
  const rows: ReadonlyArray<readonly [string, unknown, Adapter.TransportFailureKind]> = [
    ["getaddrinfo ENOTFOUND", fetchFailed(system("getaddrinfo", "ENOTFOUND")), "dns"],
    ["getaddrinfo EAI_AGAIN (no DNS answer)", fetchFailed(system("getaddrinfo", "EAI_AGAIN")), "dns"],
    ["EAI_AGAIN without a syscall", system(undefined, "EAI_AGAIN"), "dns"],
    ["queryA ESERVFAIL (a resolver's lookup)", system("queryA", "ESERVFAIL"), "dns"],
    ["EAI_FAIL", system(undefined, "EAI_FAIL"), "dns"],
    ["connect ECONNREFUSED", system("connect", "ECONNREFUSED"), "refused"],
    ["ECONNREFUSED without a syscall", system(undefined, "ECONNREFUSED"), "refused"],
    [
      "Bun's ConnectionRefused",
      Object.assign(new Error("Unable to connect"), { code: "ConnectionRefused" }),
      "refused"
    ],
    [
      "Deno's refusal, in words only",
      new TypeError("error sending request: Connection refused (os error 111)"),
      "refused"
    ],
    ["connect ECONNRESET (reset as accepted)", fetchFailed(system("connect", "ECONNRESET")), "closedBeforeWrite"],
    ["connect EHOSTUNREACH", system("connect", "EHOSTUNREACH"), "unreachable"],
    ["connect ENETUNREACH", system("connect", "ENETUNREACH"), "unreachable"],
    ["EHOSTDOWN", system(undefined, "EHOSTDOWN"), "unreachable"],
    ["connect EADDRNOTAVAIL", system("connect", "EADDRNOTAVAIL"), "unreachable"],
    ["CERT_HAS_EXPIRED", fetchFailed(system(undefined, "CERT_HAS_EXPIRED")), "tls"],
    ["CERT_NOT_YET_VALID", system(undefined, "CERT_NOT_YET_VALID"), "tls"],
    ["SELF_SIGNED_CERT_IN_CHAIN", system(undefined, "SELF_SIGNED_CERT_IN_CHAIN"), "tls"],
    ["UNABLE_TO_VERIFY_LEAF_SIGNATURE", system(undefined, "UNABLE_TO_VERIFY_LEAF_SIGNATURE"), "tls"],
    ["UNABLE_TO_GET_ISSUER_CERT_LOCALLY", system(undefined, "UNABLE_TO_GET_ISSUER_CERT_LOCALLY"), "tls"],
    ["ERR_TLS_CERT_ALTNAME_INVALID", system(undefined, "ERR_TLS_CERT_ALTNAME_INVALID"), "tls"],
    ["ERR_SSL_WRONG_VERSION_NUMBER (not TLS)", system(undefined, "ERR_SSL_WRONG_VERSION_NUMBER"), "tls"],
    ["ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE", system(undefined, "ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE"), "tls"],
    ["connect ETIMEDOUT (no SYN-ACK)", system("connect", "ETIMEDOUT"), "connectTimeout"],
    [
      "undici's connect timeout",
      fetchFailed(Object.assign(new Error("Connect Timeout Error"), { code: "UND_ERR_CONNECT_TIMEOUT" })),
      "connectTimeout"
    ],
    ["ERR_TLS_HANDSHAKE_TIMEOUT", system(undefined, "ERR_TLS_HANDSHAKE_TIMEOUT"), "connectTimeout"],
    [
      "the AWS SDK's connection timeout",
      Object.assign(
        new Error(
          "@smithy/node-http-handler - the request socket did not establish a connection with the server within the configured timeout of 1000 ms."
        ),
        { name: "TimeoutError" }
      ),
      "connectTimeout"
    ],
    ["undici's socket closed before it wrote a byte", fetchFailed(socketError(0)), "closedBeforeWrite"],
    ["undici's socket closed after it wrote the request", fetchFailed(socketError(235)), "reset"],
    ["read ECONNRESET", fetchFailed(system("read", "ECONNRESET")), "reset"],
    ["socket hang up (ECONNRESET, no syscall)", system(undefined, "ECONNRESET"), "reset"],
    [
      "the AWS SDK's ECONNRESET, renamed TimeoutError",
      Object.assign(system("read", "ECONNRESET"), { name: "TimeoutError" }),
      "reset"
    ],
    ["write EPIPE", system("write", "EPIPE"), "reset"],
    ["ECONNABORTED", system(undefined, "ECONNABORTED"), "reset"],
    ["read ETIMEDOUT (an open connection timed out)", system("read", "ETIMEDOUT"), "timeout"],
    [
      "the AWS SDK's request timeout (ETIMEDOUT, no syscall)",
      Object.assign(new Error("a request has exceeded the configured 1000 ms requestTimeout."), {
        name: "TimeoutError",
        code: "ETIMEDOUT"
      }),
      "timeout"
    ],
    ["undici's headers timeout", fetchFailed(system(undefined, "UND_ERR_HEADERS_TIMEOUT")), "timeout"],
    ["undici's body timeout", fetchFailed(system(undefined, "UND_ERR_BODY_TIMEOUT")), "timeout"],
    ["AbortSignal.timeout", new DOMException("The operation was aborted due to timeout", "TimeoutError"), "timeout"],
    ["an abort", new DOMException("This operation was aborted", "AbortError"), "timeout"],
    ["a code nobody knows", system(undefined, "ESOMETHINGNEW"), "unknown"],
    ["no code at all (a browser's 'Failed to fetch')", new TypeError("Failed to fetch"), "unknown"],
    ["not an error", "fetch failed", "unknown"],
    ["nothing", undefined, "unknown"]
  ]
  const never = new Set(["dns", "refused", "unreachable", "tls", "connectTimeout", "closedBeforeWrite"])
  for (const [name, error, kind] of rows) {
    it(`${name}: ${kind}, ${never.has(kind) ? "never sent" : "possibly sent"}`, () => {
      assert.deepStrictEqual(verdict(error), { possiblySent: !never.has(kind), kind })
    })
  }

  it("mixed ECONNREFUSED and a reset after the request on another address: possibly sent", () => {
    const mixed = aggregate(system("connect", "ECONNREFUSED"), system("read", "ECONNRESET"))
    assert.deepStrictEqual(verdict(fetchFailed(mixed)), { possiblySent: true, kind: "reset" })
    assert.deepStrictEqual(Adapter.transportFailure(mixed).codes, ["ECONNREFUSED", "ECONNRESET"])
    // The aggregate's own code (its first error's) does not outvote the rest, whatever the order.
    const reversed = aggregate(system("read", "ECONNRESET"), system("connect", "ECONNREFUSED"))
    assert.deepStrictEqual(verdict(reversed), { possiblySent: true, kind: "reset" })
  })

  it("mixed ECONNREFUSED and ECONNRESET while connecting (both before a byte): never sent", () => {
    const mixed = aggregate(system("connect", "ECONNREFUSED"), system("connect", "ECONNRESET"))
    assert.deepStrictEqual(verdict(mixed), { possiblySent: false, kind: "refused" })
  })

  it("mixed DNS and connect failures are never sent; one unknown cause makes it possibly sent", () => {
    assert.isFalse(
      Adapter.transportFailure(aggregate(system("connect", "ETIMEDOUT"), system("connect", "EHOSTUNREACH")))
        .possiblySent
    )
    assert.isTrue(
      Adapter.transportFailure(aggregate(system("connect", "ECONNREFUSED"), system(undefined, "EWHAT"))).possiblySent
    )
  })

  it("a cause chain that loops ends, and a deep one is read to its end", () => {
    const looped: Error & { cause?: unknown } = new Error("outer")
    looped.cause = { message: "inner", cause: looped }
    assert.deepStrictEqual(verdict(looped), { possiblySent: true, kind: "unknown" })
    let deep: unknown = system("connect", "ECONNREFUSED")
    for (let i = 0; i < 20; i++) deep = new Error(`wrapper ${i}`, { cause: deep })
    assert.deepStrictEqual(verdict(deep), { possiblySent: false, kind: "refused" })
  })

  it("transportUnavailable words a failure the same for every provider", () => {
    const refused = Adapter.transportUnavailable("Postmark", fetchFailed(system("connect", "ECONNREFUSED")))
    assert.strictEqual(
      refused.message,
      "could not reach Postmark: the connection was refused (ECONNREFUSED); the message was not sent"
    )
    assert.isTrue(refused.isRetryable)
    const reset = Adapter.transportUnavailable("SES", system("read", "ECONNRESET"))
    assert.strictEqual(
      reset.message,
      "the request to SES failed: the connection was cut after it was opened (ECONNRESET); the message may have been sent"
    )
    assert.isFalse(reset.isRetryable)
  })
})
