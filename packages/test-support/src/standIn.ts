// The HTTP server under every vendor stand-in (Postmark, Resend): it keeps each request as it came,
// answers what the stand-in's rules say or a fault a test asked for, and closes even while held.
import { createServer, type IncomingHttpHeaders, type IncomingMessage } from "node:http"
import type { AddressInfo } from "node:net"

/** A request as the stand-in received it. */
export interface RecordedRequest {
  readonly method: string
  readonly path: string
  readonly headers: IncomingHttpHeaders
  /** The body as received, undefined when it was over the size limit. */
  readonly body: string | undefined
  /** The status answered; undefined when the connection was dropped or held. */
  status: number | undefined
}

/** An answer: a status, a JSON body, and headers of its own. */
export interface Answer {
  readonly status: number
  readonly body?: unknown
  readonly headers?: Readonly<Record<string, string>>
}

/** A fault no state of the account produces: an answer to give as is, or a connection trick. */
export type StandInFault =
  | Answer
  /** Read the whole request, then close the socket without answering. */
  | "drop"
  /** Read the whole request and never answer (until the stand-in closes). */
  | "hang"
  /** Read the whole request, wait until `hold` settles, then answer as usual. */
  | { readonly hold: Promise<unknown> }

export interface StandInServerOptions {
  /** For the log line of a stand-in that failed to answer: `"PostmarkStandIn"`. */
  readonly name: string
  /** The largest body kept; a larger one is read whole (so the client sees the answer) and kept as undefined. */
  readonly maxRequestBytes: number
  /** The vendor's answer to a request, by the stand-in's rules. */
  readonly answer: (request: RecordedRequest) => Answer
  /** Headers the vendor puts on every answer, its rules' and the faults' alike. */
  readonly headers?: (answer: Answer) => Readonly<Record<string, string>>
}

export interface StandInServer {
  /** `127.0.0.1:PORT`. */
  readonly host: string
  /** `http://127.0.0.1:PORT`. */
  readonly url: string
  readonly requests: ReadonlyArray<RecordedRequest>
  /** Answers the next request with this fault instead of the rules' answer. */
  readonly failNext: (fault: StandInFault) => void
  /** Resolves with the next request once it is read, before it is answered. */
  readonly nextRequest: () => Promise<RecordedRequest>
  /** Stops listening and drops every connection, held ones included. */
  readonly close: () => Promise<void>
}

const readBody = async (req: IncomingMessage, max: number): Promise<string | undefined> => {
  const chunks: Array<Buffer> = []
  let size = 0
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.byteLength
    if (size <= max) chunks.push(chunk)
  }
  return size <= max ? Buffer.concat(chunks).toString("utf8") : undefined
}

/** Starts a stand-in server on 127.0.0.1 with a free port. */
export const startStandIn = async (options: StandInServerOptions): Promise<StandInServer> => {
  const requests: Array<RecordedRequest> = []
  const faults: Array<StandInFault> = []
  const waiters: Array<(request: RecordedRequest) => void> = []

  const server = createServer((req, res) => {
    const handle = async () => {
      const record: RecordedRequest = {
        method: req.method ?? "",
        path: req.url ?? "",
        headers: req.headers,
        body: await readBody(req, options.maxRequestBytes),
        status: undefined
      }
      requests.push(record)
      for (const waiter of waiters.splice(0)) waiter(record)
      const fault = faults.shift()
      if (fault === "drop") return void req.socket.destroy()
      if (fault === "hang") return
      if (fault !== undefined && "hold" in fault) await fault.hold.catch(() => undefined)
      const answer = fault !== undefined && "status" in fault ? fault : options.answer(record)
      record.status = answer.status
      res.writeHead(answer.status, {
        ...(answer.body === undefined ? {} : { "content-type": "application/json; charset=utf-8" }),
        ...options.headers?.(answer),
        ...answer.headers
      })
      res.end(answer.body === undefined ? undefined : JSON.stringify(answer.body))
    }
    handle().catch((error: unknown) => {
      // A bug of the stand-in must not pass for a network failure of the vendor.
      console.error(`${options.name} failed to answer`, error)
      res.destroy(error instanceof Error ? error : new Error(String(error)))
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => resolve())
  })
  const host = `127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    host,
    url: `http://${host}`,
    requests,
    failNext: (fault) => {
      faults.push(fault)
    },
    nextRequest: () => new Promise((resolve) => waiters.push(resolve)),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()))
        // A held ("hang") or kept-alive connection would otherwise keep close() waiting.
        server.closeAllConnections()
      })
  }
}
