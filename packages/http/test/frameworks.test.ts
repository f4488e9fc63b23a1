// The Node handler inside Express, behind the body parsers apps mount first (express.json(), raw(),
// text(), body-parser), and mounted at the root beside the app's own routes: what a client sees.
import type { Server } from "node:http"
import type { AddressInfo } from "node:net"
import { gzipSync } from "node:zlib"
import bodyParser from "body-parser"
import express, { type RequestHandler } from "express"
import Fastify from "fastify"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { MailroomFastify } from "../src/fastify.js"
import { MailroomHandler } from "../src/index.js"
import { keys, makeWorld, type World } from "./world.js"

const message = {
  from: "billing@acme.example",
  to: ["alice@example.com"],
  subject: "Parsed first",
  body: { text: "hello" }
}

const listen = async (app: express.Express) => {
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, "127.0.0.1", () => resolve(s))
  })
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

const json = async (response: Response) => ({ status: response.status, body: await response.json() })

/** A JSON file a parser would change: a number past float range, a duplicate key, spacing, CRLF. */
const jsonFile = (padding = 0) =>
  new TextEncoder().encode(`{ "amount": 1e400,\r\n  "id": 1, "id": 2, "pad": "${"x".repeat(padding)}" }\n`)

interface Endpoint {
  /** The app's address with the handler's basePath. */
  readonly base: string
  readonly fetch?: typeof fetch
}

/**
 * Presigns `data.json` through `api`, uploads `bytes` as application/json through the store's route
 * at `store` (by default the same), and reads back what the store holds, if anything.
 */
const uploadJson = async (bytes: Uint8Array<ArrayBuffer>, api: Endpoint, store: Endpoint = api) => {
  const callApi = api.fetch ?? fetch
  const callStore = store.fetch ?? fetch
  const headers = { "x-api-key": keys.acme, "content-type": "application/json" }
  const presign = await callApi(`${api.base}/attachments/presign`, {
    method: "POST",
    headers,
    body: JSON.stringify({ filename: "data.json", content_type: "application/json" })
  })
  assert.strictEqual(presign.status, 201)
  const { url, key } = (await presign.json()) as { url: string; key: string }
  const storeUrl = (signed: string) =>
    `${store.base}/_store/${new URL(signed).pathname.slice(1)}${new URL(signed).search}`
  const put = await callStore(storeUrl(url), {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: bytes,
    signal: AbortSignal.timeout(5000)
  })
  const answer = { status: put.status, type: put.headers.get("content-type"), text: await put.text() }
  const download = await callApi(`${api.base}/attachments/download?key=${encodeURIComponent(key)}`, { headers })
  if (download.status !== 200) return { answer, stored: undefined }
  const fetched = await callStore(storeUrl(((await download.json()) as { download_url: string }).download_url))
  const stored = fetched.status === 200 ? new Uint8Array(await fetched.arrayBuffer()) : undefined
  return { answer, stored }
}

/** Calls the Web handler as a route handler is called: with a Request. */
const webFetch =
  (mailroom: MailroomHandler.Handlers): typeof fetch =>
  (input, init) =>
    mailroom.web(new Request(input, init))

/** The refusal of an upload whose bytes a parser took: said to the uploader, in `{message}`, never an HTML page. */
const assertRefusedNotRewritten = (result: Awaited<ReturnType<typeof uploadJson>>) => {
  assert.strictEqual(result.answer.status, 500)
  assert.match(result.answer.type ?? "", /^application\/json/)
  assert.match(
    JSON.parse(result.answer.text).message,
    /read this upload without keeping its exact bytes, so it was not stored/
  )
  assert.isUndefined(result.stored, "nothing was stored in its place")
}

/** Whether a JSON upload behind each parser keeps its bytes (the parser left a Buffer or did not read it). */
const keepsJsonBytes: Record<string, boolean> = {
  "express.json()": false,
  "express.raw() for every type": true,
  "express.text() for text and JSON": false,
  "body-parser json, urlencoded and raw (octet-stream only)": false,
  "express.raw() for octet-stream only, so JSON bodies stay in the stream": true
}

const parsers: Record<string, ReadonlyArray<RequestHandler>> = {
  "express.json()": [express.json()],
  "express.raw() for every type": [express.raw({ type: "*/*" })],
  // Not for every type: text() decodes bytes as UTF-8, so a binary upload would be lost before mailroom.
  "express.text() for text and JSON": [express.text({ type: ["text/*", "application/json"] })],
  "body-parser json, urlencoded and raw (octet-stream only)": [
    bodyParser.json(),
    bodyParser.urlencoded({ extended: false }),
    bodyParser.raw()
  ],
  "express.raw() for octet-stream only, so JSON bodies stay in the stream": [express.raw()]
}

for (const [name, middleware] of Object.entries(parsers)) {
  describe(`behind ${name}`, () => {
    let world: World
    let server: Awaited<ReturnType<typeof listen>>
    let mailroom: MailroomHandler.Started
    beforeAll(async () => {
      world = makeWorld()
      mailroom = MailroomHandler.fromLayer(world.layer, {
        maxBodyBytes: 4096,
        logError: (m) => world.control.logged.push(m)
      })
      await mailroom.ready
      const app = express()
      for (const m of middleware) app.use(m)
      app.use(mailroom.node)
      server = await listen(app)
    })
    afterAll(async () => {
      await server.close()
      await mailroom.dispose()
    })

    const post = (path: string, body: string, type = "application/json", headers: Record<string, string> = {}) =>
      fetch(`${server.url}${path}`, {
        method: "POST",
        headers: { "x-api-key": keys.acme, "content-type": type, ...headers },
        body,
        signal: AbortSignal.timeout(5000)
      })

    it("sends: 201, and the provider got the message", async () => {
      const sent = await json(await post("/emails", JSON.stringify(message)))
      assert.strictEqual(sent.status, 201)
      assert.strictEqual(sent.body.subject, "Parsed first")
      assert.strictEqual(world.provider.sent.at(-1)?.email.subject, "Parsed first")
    })

    it("answers a request mailroom refuses in the spec's shapes: 400 {errors}, 413, 415", async () => {
      const invalid = await json(await post("/emails", JSON.stringify({ ...message, to: [] })))
      assert.deepStrictEqual(invalid, { status: 400, body: { errors: ["to: must contain at least 1 recipient"] } })
      const large = await json(await post("/emails", JSON.stringify({ ...message, body: { text: "x".repeat(8000) } })))
      assert.deepStrictEqual(large, { status: 413, body: { error: "the body is larger than 4096 bytes" } })
      const form = await json(await post("/emails", "from=a", "application/x-www-form-urlencoded"))
      assert.deepStrictEqual(form, { status: 415, body: { error: "Content-Type must be application/json" } })
    })

    it("presign, upload through the store's route, send with it, download, delete", async () => {
      const presigned = await json(await post("/attachments/presign", JSON.stringify({ filename: "a.bin" })))
      assert.strictEqual(presigned.status, 201)
      const { url, key } = presigned.body as { url: string; key: string }
      const local = `${server.url}/_store/${new URL(url).pathname.slice(1)}${new URL(url).search}`
      const bytes = new Uint8Array([0, 1, 2, 253, 254, 255])
      const put = await fetch(local, {
        method: "PUT",
        headers: { "content-type": "application/octet-stream" },
        body: bytes
      })
      assert.strictEqual(put.status, 200)
      const attachments = [{ filename: "a.bin", key }]
      assert.strictEqual((await post("/emails", JSON.stringify({ ...message, attachments }))).status, 201)
      assert.deepStrictEqual(world.provider.sent.at(-1)?.email.attachments[0]?.content, bytes)
      const auth = { "x-api-key": keys.acme }
      const query = `key=${encodeURIComponent(key)}`
      const download = await json(await fetch(`${server.url}/attachments/download?${query}`, { headers: auth }))
      const got = new URL(download.body.download_url)
      const fetched = await fetch(`${server.url}/_store/${got.pathname.slice(1)}${got.search}`)
      assert.deepStrictEqual(new Uint8Array(await fetched.arrayBuffer()), bytes)
      const deleted = await fetch(`${server.url}/attachments/delete?${query}`, { method: "DELETE", headers: auth })
      assert.deepStrictEqual(await json(deleted), { status: 200, body: { deleted: true, key } })
    })

    const verdict = keepsJsonBytes[name] ? "stored as the exact bytes sent" : "refused, saying why, never rewritten"
    it(`a JSON file uploaded through the store's route is ${verdict}`, async () => {
      const bytes = jsonFile()
      const result = await uploadJson(bytes, { base: server.url })
      if (keepsJsonBytes[name]) {
        assert.strictEqual(result.answer.status, 200)
        assert.deepStrictEqual(result.stored, bytes)
      } else {
        assertRefusedNotRewritten(result)
        assert.isTrue(world.control.logged.some((m) => /without keeping its exact bytes/.test(m)))
      }
    })
  })
}

describe("mounted before express.json(), as the README shows", () => {
  let world: World
  let server: Awaited<ReturnType<typeof listen>>
  let mailroom: MailroomHandler.Started
  beforeAll(async () => {
    world = makeWorld()
    mailroom = MailroomHandler.fromLayer(world.layer, { logError: (m) => world.control.logged.push(m) })
    await mailroom.ready
    const app = express()
    app.use(mailroom.node)
    app.use(express.json())
    app.post("/orders", (req, res) => {
      res.status(201).json({ received: req.body })
    })
    server = await listen(app)
  })
  afterAll(async () => {
    await server.close()
    await mailroom.dispose()
  })

  it("stores a JSON file as the exact bytes sent, also over express.json()'s 100 kB limit", async () => {
    for (const bytes of [jsonFile(), jsonFile(200 * 1024)]) {
      const result = await uploadJson(bytes, { base: server.url })
      assert.strictEqual(result.answer.status, 200, result.answer.text)
      assert.deepStrictEqual(result.stored, bytes)
    }
  })

  it("answers a send over its own limit with its 413 JSON, and the app's routes still get parsed JSON", async () => {
    const large = await fetch(`${server.url}/emails`, {
      method: "POST",
      headers: { "x-api-key": keys.acme, "content-type": "application/json" },
      body: JSON.stringify({ ...message, body: { text: "x".repeat(1024 * 1024) } })
    })
    assert.deepStrictEqual(await json(large), { status: 413, body: { error: "the body is larger than 1048576 bytes" } })
    const order = await fetch(`${server.url}/orders`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ id: 7 })
    })
    assert.deepStrictEqual(await json(order), { status: 201, body: { received: { id: 7 } } })
  })
})

describe("in Fastify", () => {
  it("as @mailroom/http/fastify's plugin, whose scope leaves bodies unparsed: a JSON file is stored exactly, past Fastify's body limit", async () => {
    const world = makeWorld()
    const app = Fastify({ bodyLimit: 100 * 1024 })
    await app.register(MailroomFastify.plugin, { prefix: "/mail", layer: world.layer })
    const url = `${await app.listen({ port: 0, host: "127.0.0.1" })}/mail`
    try {
      for (const bytes of [jsonFile(), jsonFile(200 * 1024)]) {
        const result = await uploadJson(bytes, { base: url })
        assert.strictEqual(result.answer.status, 200, result.answer.text)
        assert.deepStrictEqual(result.stored, bytes)
      }
    } finally {
      await app.close()
    }
  })

  it("by hand with Fastify's JSON parser left on: the JSON file is refused, saying why, never rewritten", async () => {
    const world = makeWorld()
    const mailroom = MailroomHandler.fromLayer(world.layer, {
      basePath: "/mail",
      logError: (m) => world.control.logged.push(m)
    })
    await mailroom.ready
    const app = Fastify({ bodyLimit: 100 * 1024 })
    await app.register(
      async (scope) => {
        scope.all("/*", async (request, reply) => {
          reply.hijack()
          await mailroom.node(request.raw, reply.raw)
        })
      },
      { prefix: "/mail" }
    )
    const url = `${await app.listen({ port: 0, host: "127.0.0.1" })}/mail`
    const close = () => app.close().then(mailroom.dispose)
    try {
      // Fastify's parser also takes presign's body (a 400 there, as the README says): presign directly.
      const api = { base: "http://localhost/mail", fetch: webFetch(mailroom) }
      assertRefusedNotRewritten(await uploadJson(jsonFile(), api, { base: url }))
      assert.isTrue(world.control.logged.some((m) => /without keeping its exact bytes/.test(m)))
    } finally {
      await close()
    }
  })
})

describe("as a Next.js App Router route handler (the Web handler, called with the Request as sent)", () => {
  it("stores a JSON file as the exact bytes sent, past Next.js's 1 MB Pages-router body limit", async () => {
    const world = makeWorld()
    const mailroom = MailroomHandler.fromLayer(world.layer, { basePath: "/api/mail" })
    try {
      for (const bytes of [jsonFile(), jsonFile(1536 * 1024)]) {
        // app/api/mail/[...path]/route.ts exports mailroom.web as GET, POST, PUT and DELETE.
        const result = await uploadJson(bytes, { base: "http://localhost:3000/api/mail", fetch: webFetch(mailroom) })
        assert.strictEqual(result.answer.status, 200, result.answer.text)
        assert.deepStrictEqual(result.stored, bytes)
      }
    } finally {
      await mailroom.dispose()
    }
  })
})

describe("behind middleware that reads the body and leaves nothing in req.body", () => {
  it("answers 400 at once instead of waiting for a stream already read, and says why once", async () => {
    const world = makeWorld()
    const mailroom = MailroomHandler.fromLayer(world.layer, { logError: (m) => world.control.logged.push(m) })
    const app = express()
    app.use((req, _res, next) => {
      req.on("end", () => next())
      req.resume()
    })
    app.use(mailroom.node)
    const server = await listen(app)
    try {
      for (let i = 0; i < 2; i++) {
        const answer = await fetch(`${server.url}/emails`, {
          method: "POST",
          headers: { "x-api-key": keys.acme, "content-type": "application/json" },
          body: JSON.stringify(message),
          signal: AbortSignal.timeout(5000)
        })
        assert.deepStrictEqual(await json(answer), {
          status: 400,
          body: { errors: ["request: the body could not be read"] }
        })
      }
      assert.strictEqual(world.control.logged.length, 1)
      assert.match(world.control.logged[0] ?? "", /read before mailroom's handler/)
    } finally {
      await server.close()
      await mailroom.dispose()
    }
  })
})

describe("mounted at the root of an Express app", () => {
  const start = async (options: MailroomHandler.Options = {}) => {
    const world = makeWorld()
    const mailroom = MailroomHandler.fromLayer(world.layer, options)
    const app = express()
    app.use(express.json())
    app.use(mailroom.node)
    app.get("/health", (_req, res) => {
      res.json({ ok: true })
    })
    app.post("/orders", (req, res) => {
      res.status(201).json({ received: req.body })
    })
    const server = await listen(app)
    return { server, close: () => server.close().then(mailroom.dispose) }
  }

  it("hands the app's own routes on to it (next), which still answer, bodies included", async () => {
    const { server, close } = await start()
    try {
      assert.deepStrictEqual(await json(await fetch(`${server.url}/health`)), { status: 200, body: { ok: true } })
      const order = await fetch(`${server.url}/orders`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ id: 7 })
      })
      assert.deepStrictEqual(await json(order), { status: 201, body: { received: { id: 7 } } })
      const nobody = await fetch(`${server.url}/nope`)
      assert.strictEqual(nobody.status, 404)
      assert.match(await nobody.text(), /Cannot GET \/nope/, "Express's own 404, not mailroom's")
      assert.strictEqual((await fetch(`${server.url}/openapi.json`)).status, 200)
    } finally {
      await close()
    }
  })

  it('with unknownRoutes: "404", answers every unknown route itself, as on node:http', async () => {
    const { server, close } = await start({ unknownRoutes: "404" })
    try {
      assert.deepStrictEqual(await json(await fetch(`${server.url}/health`)), {
        status: 404,
        body: { message: "no route for GET /health" }
      })
    } finally {
      await close()
    }
  })
})

describe("behind express.json() with a limit above mailroom's", () => {
  it("a 5 MB JSON body the parser read first is still a 413 from mailroom, chunked or compressed", async () => {
    const world = makeWorld()
    const mailroom = MailroomHandler.fromLayer(world.layer, { logError: (m) => world.control.logged.push(m) })
    const app = express()
    app.use(express.json({ limit: "10mb" }))
    app.use(mailroom.node)
    const server = await listen(app)
    const body = JSON.stringify({ ...message, body: { text: "x".repeat(5 * 1024 * 1024) } })
    // Neither request declares a Content-Length over the limit: only the parsed body shows its size.
    const requests: Record<string, RequestInit> = {
      chunked: {
        body: new Blob([body]).stream(),
        duplex: "half",
        headers: { "x-api-key": keys.acme, "content-type": "application/json" }
      } as RequestInit,
      gzip: {
        body: gzipSync(body),
        headers: { "x-api-key": keys.acme, "content-type": "application/json", "content-encoding": "gzip" }
      }
    }
    try {
      for (const [framing, init] of Object.entries(requests)) {
        const answer = await fetch(`${server.url}/emails`, {
          method: "POST",
          ...init,
          signal: AbortSignal.timeout(10_000)
        })
        assert.deepStrictEqual(
          await json(answer),
          { status: 413, body: { error: "the body is larger than 1048576 bytes" } },
          `${framing}: a body a framework parsed before mailroom must still be held to mailroom's limit`
        )
      }
      assert.strictEqual(world.provider.sent.length, 0)
    } finally {
      await server.close()
      await mailroom.dispose()
    }
  })
})
