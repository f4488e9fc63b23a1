// A load balancer for tests: each request goes to the next backend in turn, streamed both ways.
import { createServer, request } from "node:http"
import type { AddressInfo } from "node:net"

export interface RoundRobinProxy {
  readonly url: string
  readonly close: () => Promise<void>
}

export const startRoundRobinProxy = async (backends: ReadonlyArray<string>): Promise<RoundRobinProxy> => {
  let next = 0
  const server = createServer((req, res) => {
    const target = new URL(req.url ?? "/", backends[next++ % backends.length])
    const forwarded = request(target, { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers)
      answer.pipe(res)
    })
    forwarded.once("error", () => {
      if (!res.headersSent) res.writeHead(502, { "content-type": "application/json" })
      res.end(JSON.stringify({ message: "the backend did not answer" }))
    })
    req.pipe(forwarded)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
