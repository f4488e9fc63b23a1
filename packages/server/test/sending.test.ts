// The server under a vendor that stalls: a send past the provider's timeout is a 503 "may have been
// sent" sent once, and the attachment budget turns further large sends away with 503 + Retry-After.
import { mkdtemp, rm } from "node:fs/promises"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { Server, ServerConfig } from "../src/index.js"

/**
 * An SES endpoint that reads each send and never answers, counting them. GetAccount, which the
 * provider's verify asks at start-up, is answered, as SES answers it.
 */
const stalledSes = async () => {
  const held: Array<ServerResponse> = []
  let requests = 0
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume()
    req.on("end", () => {
      if (req.method === "GET" && req.url === "/v2/email/account") {
        res.writeHead(200, { "content-type": "application/json" })
        res.end(JSON.stringify({ SendingEnabled: true, ProductionAccessEnabled: true }))
        return
      }
      requests++
      held.push(res)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: () => requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of held) res.destroy()
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

describe("a stalled SES endpoint", () => {
  let dir: string
  let ses: Awaited<ReturnType<typeof stalledSes>>
  let server: Server.RunningServer
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "mailroom-sending-"))
    ses = await stalledSes()
    server = await Server.start(
      ServerConfig.parse(
        {
          port: 0,
          serviceDomain: "mailroom.test",
          organizations: [{ id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"], apiKeys: ["k"] }],
          storage: { kind: "local", dir: "storage", signingSecret: "test-secret" },
          provider: {
            kind: "ses",
            region: "us-east-1",
            endpoint: ses.url,
            accessKeyId: "AKIDSTALLED",
            secretAccessKey: "stalled-secret",
            timeout: "1500 millis"
          },
          sending: { attachmentBytesInFlight: 1000, attachmentBudgetWait: "200 millis" }
        },
        { baseDir: dir }
      ),
      { log: () => {}, logError: () => {} }
    )
  })
  afterAll(async () => {
    await server?.close()
    await ses?.close()
    await rm(dir, { recursive: true, force: true })
  })

  const call = async (method: string, path: string, body: unknown) => {
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: { "x-api-key": "k", "content-type": "application/json" },
      body: JSON.stringify(body)
    })
    return {
      status: response.status,
      headers: response.headers,
      body: (await response.json()) as Record<string, unknown>
    }
  }
  const uploaded = async (size: number) => {
    const { body } = await call("POST", "/attachments/presign", { filename: "a.pdf", content_type: "application/pdf" })
    const put = await fetch(String(body.url), {
      method: "PUT",
      headers: { "content-type": "application/pdf" },
      body: new Uint8Array(size)
    })
    assert.strictEqual(put.status, 200)
    return String(body.key)
  }
  const email = (key: string) => ({
    from: "billing@acme.example",
    to: ["alice@example.com"],
    subject: "Report",
    body: { text: "Attached." },
    attachments: [{ filename: "a.pdf", key }]
  })

  it("past the provider's timeout: 503 'may have been sent', one request, and a send over the budget meanwhile is 503 with Retry-After", async () => {
    const key = await uploaded(800)
    const before = ses.requests()
    const first = call("POST", "/emails", email(key))
    // 800 bytes and their base64 are more than the 1000 bytes: the first holds them all, the second
    // waits 200 ms, then gives up.
    await new Promise((resolve) => setTimeout(resolve, 300))
    const second = await call("POST", "/emails", email(key))
    assert.strictEqual(second.status, 503, JSON.stringify(second.body))
    assert.strictEqual(second.headers.get("retry-after"), "5")
    assert.match(String(second.body.error), /nothing was sent/)
    const answered = await first
    assert.strictEqual(answered.status, 503, JSON.stringify(answered.body))
    assert.match(String(answered.body.error), /may have been sent/)
    assert.strictEqual(ses.requests() - before, 1, "a send that may have gone out was sent again")
  })
})

describe("the sending, attachments and timeout fields", () => {
  const base = {
    serviceDomain: "mailroom.test",
    organizations: [],
    storage: { kind: "s3", bucket: "b", region: "us-east-1" },
    provider: { kind: "postmark", serverToken: "t" }
  }
  const problems = (input: Record<string, unknown>, env: Record<string, string> = {}) => {
    try {
      ServerConfig.parse({ ...base, ...input }, { env })
    } catch (error) {
      return [...(error as ServerConfig.ServerConfigError).problems]
    }
    return []
  }

  it("are checked, naming the field", () => {
    assert.deepStrictEqual(
      problems({
        sending: { attachmentBytesInFlight: 1.5, attachmentBudgetWait: "soon", queue: 1 },
        attachments: { idSecret: "" }
      }),
      [
        "attachments.idSecret: a secret must not be empty",
        "sending.queue: is not a known field",
        "sending.attachmentBytesInFlight: must be a whole number of bytes above 0",
        'sending.attachmentBudgetWait: must be a duration such as "500 millis", "5 seconds" or "24 hours"'
      ]
    )
    assert.deepStrictEqual(problems({ provider: { kind: "postmark", serverToken: "t", timeout: 30 } }), [
      "provider.timeout: must be a string"
    ])
    assert.deepStrictEqual(problems({ attachments: { idSecret: { env: "MAILROOM_ID_SECRET" } } }), [
      "attachments.idSecret: the environment variable MAILROOM_ID_SECRET is not set"
    ])
  })

  it("the id secret comes from the file, the environment, or the local store's signing secret", () => {
    assert.strictEqual(ServerConfig.parse(base).attachmentIdSecret, undefined)
    assert.strictEqual(
      ServerConfig.parse({ ...base, attachments: { idSecret: { env: "S" } } }, { env: { S: "from-env" } })
        .attachmentIdSecret,
      "from-env"
    )
    const local = { ...base, storage: { kind: "local", dir: "s", signingSecret: "signing" } }
    assert.strictEqual(ServerConfig.parse(local).attachmentIdSecret, "signing")
    assert.strictEqual(ServerConfig.parse({ ...local, attachments: { idSecret: "own" } }).attachmentIdSecret, "own")
  })
})
