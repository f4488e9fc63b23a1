// A stand-in for the SES v2 endpoint, for the failures the emulator cannot produce. It answers in
// SES's own restJson1 wire format (status, x-amzn-ErrorType, JSON `{message}`) and records each request.
import { randomUUID } from "node:crypto"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { Context, Effect, Layer } from "effect"

export interface Recorded {
  readonly method: string
  readonly path: string
  readonly headers: IncomingMessage["headers"]
  readonly body: string
}

export type Answer =
  | { readonly status: number; readonly headers?: Readonly<Record<string, string>>; readonly body?: string }
  /** Reads the whole request, then drops the connection without a word. */
  | "reset"
  /** Reads the whole request and never answers. */
  | "hang"

export interface StubSes {
  readonly url: string
  readonly requests: Array<Recorded>
  /** How the next requests are answered, until changed. */
  answer: (request: Recorded) => Answer
}

export class Stub extends Context.Service<Stub, StubSes>()("test/StubSes") {}

/** An SES error exactly as the service sends it: the shape name in x-amzn-ErrorType, `{message}` in the body. */
export const sesError = (
  status: number,
  type: string,
  message: string,
  headers: Readonly<Record<string, string>> = {}
): Answer => ({
  status,
  headers: {
    "content-type": "application/json",
    "x-amzn-requestid": randomUUID(),
    "x-amzn-errortype": `${type}:http://internal.amazon.com/coral/com.amazonaws.sesv2/`,
    ...headers
  },
  body: JSON.stringify({ message })
})

export const accepted = (messageId = `0100018f-${randomUUID()}-000000`): Answer => ({
  status: 200,
  headers: { "content-type": "application/json", "x-amzn-requestid": randomUUID() },
  body: JSON.stringify({ MessageId: messageId })
})

const reply = (stub: StubSes, req: IncomingMessage, res: ServerResponse, body: string) => {
  const recorded: Recorded = { method: req.method ?? "", path: req.url ?? "", headers: req.headers, body }
  stub.requests.push(recorded)
  const answer = stub.answer(recorded)
  if (answer === "reset") {
    req.socket.destroy()
    return
  }
  if (answer === "hang") return
  res.writeHead(answer.status, answer.headers)
  res.end(answer.body)
}

const close = (server: Server) =>
  new Promise<void>((resolve) => {
    server.closeAllConnections()
    server.close(() => resolve())
  })

export const StubLive: Layer.Layer<Stub> = Layer.effect(
  Stub,
  Effect.gen(function* () {
    const stub: { -readonly [K in keyof StubSes]: StubSes[K] } = { url: "", requests: [], answer: () => accepted() }
    const server = yield* Effect.acquireRelease(
      Effect.promise(
        () =>
          new Promise<Server>((resolve) => {
            const s = createServer((req, res) => {
              const chunks: Array<Buffer> = []
              req.on("data", (chunk: Buffer) => chunks.push(chunk))
              req.on("end", () => reply(stub, req, res, Buffer.concat(chunks).toString("utf8")))
            })
            s.listen(0, "127.0.0.1", () => resolve(s))
          })
      ),
      (s) => Effect.promise(() => close(s))
    )
    stub.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    return stub
  })
)
