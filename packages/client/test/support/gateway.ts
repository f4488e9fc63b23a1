// A gateway in front of a real server that misbehaves on cue: it throttles, loses the server's answer,
// drops the connection or stalls. Every request it does forward reaches the real server unchanged.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

export type Fault =
  /** Pass the request on and its answer back. */
  | { readonly kind: "forward" }
  /** Answer this without forwarding: the server never sees the request. */
  | {
      readonly kind: "answer"
      readonly status: number
      readonly headers?: Record<string, string>
      readonly body: unknown
    }
  /** Forward (the server acts on it), then give the client this instead of the server's answer. */
  | { readonly kind: "forward-then-answer"; readonly status: number; readonly body: unknown }
  /** Forward (the server acts on it), then cut the client's connection without an answer. */
  | { readonly kind: "forward-then-drop" }
  /** Never answer. */
  | { readonly kind: "stall" }
  /** Answer a redirect to the same path on the real server, as an http-to-https redirect would. */
  | { readonly kind: "redirect"; readonly status: number }

export interface Seen {
  readonly method: string
  readonly path: string
  readonly headers: IncomingMessage["headers"]
  readonly body: string
}

export interface Gateway {
  readonly url: string
  /** Every request that reached the gateway, in order. */
  readonly seen: Array<Seen>
  readonly close: () => Promise<void>
}

/** `plan(request, n)` picks what happens to the n-th request (from 1). */
export const startGateway = async (target: string, plan: (seen: Seen, n: number) => Fault): Promise<Gateway> => {
  const seen: Array<Seen> = []
  const stalled = new Set<ServerResponse>()
  const forward = async (req: IncomingMessage, body: Buffer) => {
    const headers = new Headers()
    for (const [name, value] of Object.entries(req.headers)) {
      if (value === undefined || name === "host" || name === "connection" || name === "content-length") continue
      headers.set(name, Array.isArray(value) ? value.join(", ") : value)
    }
    const hasBody = req.method !== "GET" && req.method !== "HEAD" && body.length > 0
    return fetch(`${target}${req.url}`, {
      method: req.method ?? "GET",
      headers,
      ...(hasBody ? { body: new Uint8Array(body) } : {})
    })
  }
  const reply = (res: ServerResponse, status: number, headers: Record<string, string>, body: unknown) => {
    res.writeHead(status, { "content-type": "application/json", ...headers })
    res.end(JSON.stringify(body))
  }
  const server = createServer(async (req, res) => {
    const chunks: Array<Buffer> = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const body = Buffer.concat(chunks)
    const request: Seen = { method: req.method ?? "", path: req.url ?? "", headers: req.headers, body: body.toString() }
    seen.push(request)
    const fault = plan(request, seen.length)
    switch (fault.kind) {
      case "answer":
        return reply(res, fault.status, fault.headers ?? {}, fault.body)
      case "stall":
        stalled.add(res)
        return
      case "redirect":
        res.writeHead(fault.status, { location: `${target}${req.url}` })
        res.end()
        return
      case "forward-then-answer":
        await (await forward(req, body)).arrayBuffer()
        return reply(res, fault.status, {}, fault.body)
      case "forward-then-drop":
        await (await forward(req, body)).arrayBuffer()
        res.socket?.destroy()
        return
      case "forward": {
        const answer = await forward(req, body)
        const headers: Record<string, string> = {}
        answer.headers.forEach((value, name) => {
          if (name !== "content-length" && name !== "transfer-encoding" && name !== "connection") headers[name] = value
        })
        res.writeHead(answer.status, headers)
        res.end(Buffer.from(await answer.arrayBuffer()))
      }
    }
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of stalled) res.destroy()
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

/** An address where nothing listens: a port that was just free. */
export const refusingUrl = async () => {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return `http://127.0.0.1:${port}`
}
