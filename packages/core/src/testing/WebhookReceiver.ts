// A webhook receiver for tests: a real HTTP server on 127.0.0.1 that records every request it gets
// and answers each with the next status of a script, so a test can check what an organisation receives.
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"

export interface ReceivedRequest {
  readonly path: string
  /** Lower-case names, as Node gives them. */
  readonly headers: Record<string, string>
  readonly body: string
  /** The status it was answered with, or `"hang"` for a request left without an answer. */
  readonly status: number | "hang"
}

export interface WebhookReceiver {
  readonly url: string
  readonly requests: ReadonlyArray<ReceivedRequest>
  /** Resolves once `count` requests have been answered; rejects after `timeoutMs` (default 10 s). */
  readonly waitFor: (count: number, timeoutMs?: number) => Promise<ReadonlyArray<ReceivedRequest>>
  readonly close: () => Promise<void>
}

/**
 * Answers the n-th request with `statuses[n]`, and every request after the script with 200; `"hang"`
 * records the request and never answers it (a receiver that stalls).
 */
export const startWebhookReceiver = async (
  options: { readonly statuses?: ReadonlyArray<number | "hang">; readonly port?: number } = {}
): Promise<WebhookReceiver> => {
  const requests: Array<ReceivedRequest> = []
  const waiters = new Set<() => void>()
  const server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      const status = options.statuses?.[requests.length] ?? 200
      const headers: Record<string, string> = {}
      for (const [name, value] of Object.entries(req.headers)) {
        if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(", ") : value
      }
      requests.push({ path: req.url ?? "/", headers, body: Buffer.concat(chunks).toString("utf8"), status })
      if (status !== "hang")
        res.writeHead(status, { "content-type": "text/plain" }).end(status === 200 ? "ok" : "try again")
      for (const wake of waiters) wake()
    })
  })
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    requests,
    waitFor: (count, timeoutMs = 10_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (requests.length < count) return
          waiters.delete(check)
          clearTimeout(timer)
          resolve(requests.slice(0, count))
        }
        const timer = setTimeout(() => {
          waiters.delete(check)
          reject(new Error(`the receiver got ${requests.length} requests, not ${count}, within ${timeoutMs} ms`))
        }, timeoutMs)
        waiters.add(check)
        check()
      }),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      })
  }
}
