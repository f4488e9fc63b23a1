// The `mailroom` command delivering events to a receiver that misbehaves in its answer: a body that
// never ends (a URL that streams, a download) is not read into memory, where it once filled it.
import { once } from "node:events"
import { writeFile } from "node:fs/promises"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { type TempDir, tempDir } from "@mailroom/test-support"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { type ServerProcess, startServer } from "./support/serverProcess.js"

const secret = `whsec_${Buffer.from("acme-webhook-signing-key-32bytes").toString("base64")}`

interface Answered {
  readonly webhookId: string
  /** Resolves, once the server has gone, with the bytes of body the receiver wrote before. */
  readonly bytesWritten: Promise<number>
}

/** A receiver answering 200 and then a body without end, as fast as the server takes it. */
const endlessReceiver = async () => {
  const answered: Array<Answered> = []
  const waiting: Array<(answer: Answered) => void> = []
  const chunk = Buffer.alloc(1 << 20, "x")
  const server: Server = createServer((request, response) => {
    request.resume()
    response.writeHead(200, { "content-type": "application/octet-stream" })
    let bytes = 0
    const pump = () => {
      while (!response.destroyed) {
        bytes += chunk.length
        if (!response.write(chunk)) return
      }
    }
    response.on("drain", pump)
    const bytesWritten = new Promise<number>((resolve) => response.once("close", () => resolve(bytes)))
    const answer = { webhookId: String(request.headers["webhook-id"]), bytesWritten }
    answered.push(answer)
    waiting.shift()?.(answer)
    pump()
  })
  server.listen(0, "127.0.0.1")
  await once(server, "listening")
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    next: () => new Promise<Answered>((resolve) => waiting.push(resolve)),
    answered,
    close: () => {
      server.closeAllConnections()
      server.close()
    }
  }
}

describe("a webhook receiver whose answer's body never ends", () => {
  let temp: TempDir
  let receiver: Awaited<ReturnType<typeof endlessReceiver>>
  let server: ServerProcess
  beforeAll(async () => {
    temp = await tempDir("webhook-receivers")
    receiver = await endlessReceiver()
    const path = join(temp.path, "mailroom.config.json")
    await writeFile(
      path,
      JSON.stringify({
        serviceDomain: "mailroom.test",
        organizations: [{ id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"], apiKeys: ["mr_test_acme"] }],
        storage: { kind: "local", dir: "storage", signingSecret: "webhook-receivers-secret" },
        provider: { kind: "outbox", dir: "outbox" },
        events: { webhooks: [{ organization: "org_acme", url: receiver.url, secret }], timeout: "15 seconds" }
      })
    )
    server = await startServer(path)
  })
  afterAll(async () => {
    await server?.stop()
    receiver?.close()
    await temp?.remove()
  })

  it("is cut off, not read into the server's memory, and the server goes on", async () => {
    const first = receiver.next()
    const send = await fetch(`${server.url}/emails`, {
      method: "POST",
      headers: { "x-api-key": "mr_test_acme", "content-type": "application/json" },
      body: JSON.stringify({ from: "hi@acme.example", to: ["alice@example.com"], subject: "Hi", body: { text: "Hi" } })
    })
    assert.strictEqual(send.status, 201, await send.text())
    const answer = await first
    // Read to its end, the body would be gigabytes by the attempt's timeout: only what the sockets'
    // buffers hold (a few MiB) may be written before the server hangs up.
    const bytes = await answer.bytesWritten
    assert.isBelow(bytes, 64 * 2 ** 20, `the receiver wrote ${bytes} bytes before the server hung up`)
    const health = await fetch(`${server.url}/healthz`)
    assert.strictEqual(health.status, 200)
  }, 30_000)
})
