// Real network failures on 127.0.0.1, for tests of how a client reads them: a refused port, a name
// that never resolves, TLS that fails, and servers that cut the connection before or after a request.
import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { createServer as createHttpsServer } from "node:https"
import { createServer, type Server, type Socket } from "node:net"
import { join } from "node:path"
import { freePort } from "./ports.ts"
import { tempDir } from "./tempDir.ts"

/** A host name that cannot resolve anywhere: `.invalid` is reserved for that (RFC 6761). */
export const unresolvableHost = "mailroom-test.invalid"

export interface FaultServer {
  /** `127.0.0.1:PORT`. */
  readonly host: string
  readonly port: number
  /** Bytes received on every connection so far (a TLS ClientHello counts: it is not a request). */
  readonly received: () => number
  readonly close: () => Promise<void>
}

/**
 * How the server treats each connection:
 * - `resetOnAccept`: resets it at once, so the client's connect fails (`connect ECONNRESET`).
 * - `resetAfterRequest`: reads the first bytes of the request, then resets it (`read ECONNRESET`).
 * - `closeAfterRequest`: reads the first bytes, then closes it without answering ("socket hang up").
 * - `closeInTlsHandshake`: closes it on the ClientHello, before any request byte can be written.
 * - `silent`: reads everything and never answers.
 */
export type Fault = "resetOnAccept" | "resetAfterRequest" | "closeAfterRequest" | "closeInTlsHandshake" | "silent"

const listening = (server: Server, port = 0, host = "127.0.0.1") =>
  new Promise<number>((resolve, reject) => {
    server.once("error", reject)
    server.listen(port, host, () => {
      const address = server.address()
      typeof address === "object" && address !== null ? resolve(address.port) : reject(new Error("no port"))
    })
  })

const closing = (server: Server, sockets: Set<Socket>) => () =>
  new Promise<void>((resolve) => {
    for (const socket of sockets) socket.destroy()
    server.close(() => resolve())
  })

/** A server on 127.0.0.1 (or `host`, e.g. `::1`) that fails every connection as `fault` says. */
export const faultServer = async (
  fault: Fault,
  options: { port?: number; host?: string } = {}
): Promise<FaultServer> => {
  let received = 0
  const sockets = new Set<Socket>()
  const server = createServer((socket) => {
    sockets.add(socket)
    socket.once("close", () => sockets.delete(socket))
    socket.on("error", () => {})
    if (fault === "resetOnAccept") return socket.resetAndDestroy()
    socket.on("data", (chunk: Buffer) => {
      received += chunk.length
      if (fault === "resetAfterRequest") socket.resetAndDestroy()
      else if (fault === "closeAfterRequest" || fault === "closeInTlsHandshake") socket.end()
    })
  })
  const port = await listening(server, options.port, options.host)
  return { host: `127.0.0.1:${port}`, port, received: () => received, close: closing(server, sockets) }
}

/** A port on 127.0.0.1 that nothing listens on: connecting is refused. */
export const refusedPort = (): Promise<number> => freePort()

export interface TlsServer {
  readonly host: string
  readonly port: number
  /** The server's certificate (PEM), self-signed, for a client that should trust it anyway. */
  readonly certificate: string
  /** Requests that reached the server's handler: none, when TLS failed. */
  readonly requests: () => number
  readonly close: () => Promise<void>
}

/**
 * An HTTPS server with a self-signed certificate for `localhost` made by openssl, answering 200: a
 * client that does not trust it fails in the handshake (`DEPTH_ZERO_SELF_SIGNED_CERT`); one that trusts
 * it but checks dates fails with `CERT_HAS_EXPIRED` when `expired`.
 */
export const tlsServer = async (options: { readonly expired?: boolean } = {}): Promise<TlsServer> => {
  const dir = await tempDir("tls")
  try {
    const key = join(dir.path, "key.pem")
    const csr = join(dir.path, "csr.pem")
    const cert = join(dir.path, "cert.pem")
    const run = (args: ReadonlyArray<string>) => execFileSync("openssl", args, { stdio: "ignore" })
    run(["req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr, "-subj", "/CN=localhost"])
    const days = options.expired === true ? "-1" : "2"
    run(["x509", "-req", "-in", csr, "-signkey", key, "-days", days, "-out", cert])
    const certificate = readFileSync(cert, "utf8")
    let requests = 0
    const sockets = new Set<Socket>()
    const server = createHttpsServer({ key: readFileSync(key), cert: certificate }, (_request, response) => {
      requests += 1
      response.end("ok")
    })
    server.on("connection", (socket: Socket) => {
      sockets.add(socket)
      socket.once("close", () => sockets.delete(socket))
    })
    server.on("tlsClientError", () => {})
    const port = await listening(server)
    return { host: `127.0.0.1:${port}`, port, certificate, requests: () => requests, close: closing(server, sockets) }
  } finally {
    await dir.remove()
  }
}

/** Where a client under test should send: `{scheme}://{host}`, until `close`. */
export interface FaultTarget {
  readonly scheme: "http" | "https"
  readonly host: string
  readonly close: () => Promise<void>
}

/** One network failure, and how every provider must read it (core's `Adapter.transportUnavailable`). */
export interface NetworkFaultCase {
  readonly name: string
  readonly possiblySent: boolean
  /** The provider error's message for `vendor`; the code may vary with the machine's resolver. */
  readonly message: (vendor: string) => RegExp
  readonly start: () => Promise<FaultTarget>
}

const never = (what: string) => (vendor: string) =>
  new RegExp(`^could not reach ${vendor}: ${what}; the message was not sent$`)
const maybe = (what: string) => (vendor: string) =>
  new RegExp(`^the request to ${vendor} failed: ${what}; the message may have been sent$`)

const served =
  (fault: Fault, scheme: "http" | "https" = "http") =>
  async (): Promise<FaultTarget> => {
    const server = await faultServer(fault)
    return { scheme, host: server.host, close: server.close }
  }

/** The failures every provider is tested against, so that all read each one alike. */
export const networkFaultCases: ReadonlyArray<NetworkFaultCase> = [
  {
    name: "a host name that does not resolve",
    possiblySent: false,
    message: never(String.raw`the host name did not resolve \((ENOTFOUND|EAI_AGAIN|EAI_FAIL)\)`),
    start: async () => ({ scheme: "http", host: unresolvableHost, close: async () => {} })
  },
  {
    name: "a refused connection",
    possiblySent: false,
    message: never(String.raw`the connection was refused \(ECONNREFUSED\)`),
    start: async () => ({ scheme: "http", host: `127.0.0.1:${await refusedPort()}`, close: async () => {} })
  },
  {
    name: "a certificate the client does not trust",
    possiblySent: false,
    message: never(String.raw`the TLS handshake failed \(DEPTH_ZERO_SELF_SIGNED_CERT\)`),
    start: async () => {
      const server = await tlsServer()
      return { scheme: "https", host: server.host, close: server.close }
    }
  },
  {
    name: "a connection closed in the TLS handshake",
    possiblySent: false,
    message: never(String.raw`the TLS handshake failed \(ECONNRESET\)`),
    start: served("closeInTlsHandshake", "https")
  },
  {
    name: "a connection reset as it is accepted",
    possiblySent: false,
    message: never(String.raw`the connection closed before the request was written \(ECONNRESET\)`),
    start: served("resetOnAccept")
  },
  {
    name: "a connection reset after the request was written",
    possiblySent: true,
    message: maybe(String.raw`the connection was cut after it was opened \(ECONNRESET\)`),
    start: served("resetAfterRequest")
  },
  {
    name: "a connection closed after the request, without an answer",
    possiblySent: true,
    message: maybe(String.raw`the connection was cut after it was opened \((ECONNRESET|UND_ERR_SOCKET)\)`),
    start: served("closeAfterRequest")
  }
]
