// Whether a request that failed without an answer can have reached the server: one reading of the
// network failures Node, undici, the AWS SDK's handler, Bun and Deno report, for every adapter.
// The same file is copied byte for byte to packages/client/src/internal/transportFailure.ts (the
// client has no runtime dependency); packages/client/test/transportFailure.test.ts keeps them equal.

/**
 * What failed. The first seven mean the request certainly never reached the server: the name did not
 * resolve, the connection was refused or unreachable, TLS failed before the request was written, the
 * connection was not established in time, the socket closed before any byte was written, or fetch
 * refused the port itself. The other three mean it may have.
 */
export type TransportFailureKind =
  | "dns"
  | "refused"
  | "unreachable"
  | "tls"
  | "connectTimeout"
  | "closedBeforeWrite"
  | "blockedPort"
  | "reset"
  | "timeout"
  | "unknown"

/** A network failure, read: whether the request may have reached the server, and why. */
export interface TransportFailure {
  /** False only when the request certainly never reached the server, so a retry cannot act twice. */
  readonly possiblySent: boolean
  readonly kind: TransportFailureKind
  /** The error codes found along the causes (`ECONNREFUSED`, `UND_ERR_SOCKET`...), first seen first. */
  readonly codes: ReadonlyArray<string>
  /** A few words for a message, e.g. "the connection was refused (ECONNREFUSED)". */
  readonly description: string
}

const neverSent = new Set<TransportFailureKind>([
  "dns",
  "refused",
  "unreachable",
  "tls",
  "connectTimeout",
  "closedBeforeWrite",
  "blockedPort"
])

const phrases: Record<TransportFailureKind, string> = {
  dns: "the host name did not resolve",
  refused: "the connection was refused",
  unreachable: "the host is unreachable",
  tls: "the TLS handshake failed",
  connectTimeout: "the connection was not established in time",
  closedBeforeWrite: "the connection closed before the request was written",
  blockedPort: "fetch refuses to connect to this port (one the Fetch standard blocks)",
  reset: "the connection was cut after it was opened",
  timeout: "no answer in time",
  unknown: "the request failed without an answer"
}

const byCode: Readonly<Record<string, TransportFailureKind>> = {
  ENOTFOUND: "dns",
  EAI_AGAIN: "dns",
  EAI_FAIL: "dns",
  EAI_NONAME: "dns",
  EAI_NODATA: "dns",
  ECONNREFUSED: "refused",
  ConnectionRefused: "refused", // Bun
  EHOSTUNREACH: "unreachable",
  EHOSTDOWN: "unreachable",
  ENETUNREACH: "unreachable",
  ENETDOWN: "unreachable",
  EADDRNOTAVAIL: "unreachable",
  ERR_TLS_CERT_ALTNAME_INVALID: "tls",
  // Alerts that answer the ClientHello: no common protocol or cipher, or not TLS at all.
  ERR_SSL_WRONG_VERSION_NUMBER: "tls",
  ERR_SSL_UNSUPPORTED_PROTOCOL: "tls",
  ERR_SSL_NO_PROTOCOLS_AVAILABLE: "tls",
  ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION: "tls",
  ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE: "tls",
  ERR_TLS_HANDSHAKE_TIMEOUT: "connectTimeout",
  UND_ERR_CONNECT_TIMEOUT: "connectTimeout",
  ECONNRESET: "reset",
  ECONNABORTED: "reset",
  EPIPE: "reset",
  UND_ERR_SOCKET: "reset",
  UND_ERR_CLOSED: "reset",
  ConnectionClosed: "reset", // Bun
  ETIMEDOUT: "timeout",
  ESOCKETTIMEDOUT: "timeout",
  UND_ERR_HEADERS_TIMEOUT: "timeout",
  UND_ERR_BODY_TIMEOUT: "timeout"
}

// OpenSSL's certificate verification results, which Node uses as codes: the server's certificate is
// checked before the request is written.
const certificateCode =
  /^(?:CERT_|CRL_|UNABLE_TO_|DEPTH_ZERO_SELF_SIGNED_CERT$|SELF_SIGNED_CERT_IN_CHAIN$|ERROR_IN_C|INVALID_CA$|PATH_LENGTH_EXCEEDED$|INVALID_PURPOSE$|HOSTNAME_MISMATCH$)/

interface Node {
  readonly code?: unknown
  readonly syscall?: unknown
  readonly name?: unknown
  readonly message?: unknown
  readonly cause?: unknown
  readonly errors?: unknown
  readonly socket?: { readonly bytesWritten?: unknown }
}

const textOf = (u: unknown): string => (typeof u === "string" ? u : "")

/** What one error in the chain says on its own, or undefined when it says nothing (a wrapper). */
const kindOf = (node: Node): TransportFailureKind | undefined => {
  const code = textOf(node.code)
  const syscall = textOf(node.syscall)
  const message = textOf(node.message)
  // Where the system call failed is the surest sign: before the connection, nothing was written.
  if (syscall === "getaddrinfo" || syscall.startsWith("query")) return "dns"
  if (syscall === "connect" && code !== "") {
    const kind = byCode[code]
    if (kind === "dns" || kind === "unreachable" || kind === "refused") return kind
    return code === "ETIMEDOUT" ? "connectTimeout" : "closedBeforeWrite"
  }
  if (syscall !== "") return code === "ETIMEDOUT" ? "timeout" : "reset"
  if (/before secure TLS connection was established/i.test(message)) return "tls"
  // undici counts what it wrote on the socket: none, and the server cannot have read a request.
  if (code === "UND_ERR_SOCKET" && node.socket?.bytesWritten === 0) return "closedBeforeWrite"
  if (code !== "") return byCode[code] ?? (certificateCode.test(code) ? "tls" : "unknown")
  // The AWS SDK's connection timeout says so in words only.
  if (/did not establish a connection/i.test(message)) return "connectTimeout"
  // Deno says it in the message only.
  if (/connection refused/i.test(message)) return "refused"
  // undici's fetch refuses the Fetch standard's bad ports (6000, 6665-6669...) before connecting.
  if (message === "bad port") return "blockedPort"
  const name = textOf(node.name)
  if (name === "TimeoutError" || name === "AbortError") return "timeout"
  return undefined
}

/**
 * Reads a network failure (an error with `code`s along its `cause` chain, an `AggregateError` from
 * trying several addresses): the request never reached the server only when every failure found
 * says so. Anything else, mixed causes included, may have.
 */
export const transportFailure = (error: unknown): TransportFailure => {
  const kinds: Array<TransportFailureKind> = []
  const codes: Array<string> = []
  const seen = new Set<unknown>()
  const pending: Array<unknown> = [error]
  while (pending.length > 0 && seen.size < 64) {
    const next = pending.shift()
    if (typeof next !== "object" || next === null || seen.has(next)) continue
    seen.add(next)
    const node = next as Node
    const errors = Array.isArray(node.errors) ? (node.errors as ReadonlyArray<unknown>) : []
    // An AggregateError's own code is only its first error's: its errors speak for themselves.
    if (errors.length === 0) {
      const kind = kindOf(node)
      if (kind !== undefined) kinds.push(kind)
      const code = textOf(node.code)
      if (code !== "" && !codes.includes(code)) codes.push(code)
    }
    pending.push(node.cause, ...errors)
  }
  const maybe = kinds.find((kind) => !neverSent.has(kind))
  const kind = kinds.length === 0 ? "unknown" : (maybe ?? (kinds[0] as TransportFailureKind))
  const shown = codes.length > 0 ? ` (${codes.join(", ")})` : ""
  return { possiblySent: !neverSent.has(kind), kind, codes, description: `${phrases[kind]}${shown}` }
}
